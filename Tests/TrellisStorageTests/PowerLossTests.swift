import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// Simulated power loss. A workload runs on a `MemoryFile` that records every write and sync;
/// then, at every event boundary (and several times at each, with different choices), the test
/// builds a file a power cut could leave: synced writes kept, unsynced writes dropped, kept or
/// torn at 512-byte sectors, in any order (each sector ends as its old content or one of the
/// versions written to it). The engine must open it at a commit between the last durable one
/// and the last one begun, with exactly that commit's contents, pass `check()`, and accept a new
/// commit. `TRELLIS_STORAGE_CRASH_VARIANTS` sets the images per boundary (default 6).
@Suite(.serialized) struct PowerLossTests {
    typealias Model = RecordedWorkload.Model

    @Test(arguments: [(UInt64(21), true), (22, true), (23, true), (24, false), (25, false)])
    func everyCrashPointOpensAtALegalCommit(seed: UInt64, durable: Bool) throws {
        let variants = environmentInteger("TRELLIS_STORAGE_CRASH_VARIANTS", default: 6)
        let (file, models, base) = try Self.workload(seed: seed, durable: durable, commits: 30)
        try Self.crashEverywhere(file: file, models: models, base: base, seed: seed, variants: variants,
                                 label: "PowerLossTests seed \(seed) durable \(durable)")
    }

    /// The same for an encrypted file (docs/STORAGE.md, section 12): torn 4,128-byte pages fail
    /// their tag, and recovery falls back as for a plain file.
    @Test(arguments: [(UInt64(31), true), (32, false)])
    func everyCrashPointOfAnEncryptedFileOpensAtALegalCommit(seed: UInt64, durable: Bool) throws {
        let variants = environmentInteger("TRELLIS_STORAGE_CRASH_VARIANTS", default: 6)
        let (file, models, base) = try Self.workload(seed: seed, durable: durable, commits: 30, key: EncryptionTests.key)
        try Self.crashEverywhere(file: file, models: models, base: base, seed: seed, variants: variants,
                                 label: "PowerLossTests encrypted seed \(seed) durable \(durable)", key: EncryptionTests.key)
    }

    /// Builds `variants` crash images at every event boundary of a recorded workload and
    /// verifies each (see the type's comment); records the first problem as an issue.
    static func crashEverywhere(file: MemoryFile, models: [UInt64: Model], base: [UInt8], seed: UInt64, variants: Int,
                                label: String, key: [UInt8]? = nil) throws {
        var random = SplitMix64(seed: seed &* 7919)
        var crashPoints = 0
        var durableImage = base
        var pending: [(offset: Int, bytes: [UInt8])] = []
        var lastAcknowledged: UInt64 = 1
        var durableLow: UInt64 = 1
        var lastBegun: UInt64 = 1
        for index in 0...file.events.count {
            for variant in 0..<variants {
                let image = Self.crashImage(durable: durableImage, pending: pending, random: &random, keepAll: variant == 0)
                crashPoints += 1
                let problem = try Self.verify(image: image, models: models, low: durableLow, high: lastBegun,
                                              writeAfter: random.chance(25), key: key)
                if let problem {
                    Issue.record("\(label), event \(index) of \(file.events.count), variant \(variant): \(problem)")
                    return
                }
            }
            guard index < file.events.count else { break }
            switch file.events[index] {
            case .write(let offset, let bytes):
                pending.append((Int(offset), bytes))
            case .truncate(let size):
                pending.append((Int(size), []))
            case .sync:
                durableImage = Self.apply(pending, to: durableImage)
                pending.removeAll()
                durableLow = lastAcknowledged
            case .commitBegan(let txnID):
                lastBegun = txnID
            case .commitAcknowledged(let txnID):
                lastAcknowledged = txnID
                if file.isDurable { durableLow = txnID }
            }
        }
        #expect(crashPoints >= file.events.count)
        print("\(label): \(crashPoints) crash points over \(file.events.count) events")
    }

    /// Runs random commits on a recording file; returns it, the model after each commit, and
    /// the file as it was when recording started (synced).
    static func workload(seed: UInt64, durable: Bool, commits: Int,
                         key: [UInt8]? = nil) throws -> (MemoryFile, [UInt64: Model], [UInt8]) {
        var random = SplitMix64(seed: seed)
        let workload = try RecordedWorkload(durable: durable, key: key)
        var held: ReadTransaction?
        for _ in 0..<commits {
            try workload.commit { write in
                for _ in 0..<(1 + random.below(25)) {
                    let tree = "t\(random.below(3))"
                    if workload.model[tree] == nil {
                        try write.createTree(tree)
                        workload.model[tree] = [:]
                    }
                    let key = Array("k\(random.below(200))".utf8)
                    if random.chance(30) {
                        try write.delete(tree, key: key)
                        workload.model[tree]?[key] = nil
                    } else {
                        let length = random.chance(10) ? 3000 + random.below(9000) : random.below(300)
                        let value = random.bytes(length)
                        try write.put(tree, key: key, value: value)
                        workload.model[tree]?[key] = value
                    }
                }
            }
            if random.chance(20) { held = random.chance(50) ? try workload.environment.beginRead() : nil }
            if !durable && random.chance(15) { try workload.environment.sync() }
        }
        held = nil
        return workload.finish()
    }

    /// Applies writes in full (a sync).
    static func apply(_ writes: [(offset: Int, bytes: [UInt8])], to image: [UInt8]) -> [UInt8] {
        var result = image
        for write in writes {
            if write.bytes.isEmpty {
                if write.offset > result.count { result += [UInt8](repeating: 0, count: write.offset - result.count) }
                if write.offset < result.count { result.removeSubrange(write.offset...) }
                continue
            }
            let end = write.offset + write.bytes.count
            if end > result.count { result += [UInt8](repeating: 0, count: end - result.count) }
            result.replaceSubrange(write.offset..<end, with: write.bytes)
        }
        return result
    }

    /// A file a power cut could leave: each 512-byte sector written since the last sync ends as
    /// its durable content or as one of the versions written to it.
    static func crashImage(durable: [UInt8], pending: [(offset: Int, bytes: [UInt8])], random: inout SplitMix64,
                           keepAll: Bool) -> [UInt8] {
        if keepAll { return apply(pending, to: durable) }
        let sector = 512
        var versions: [Int: [(write: Int, start: Int)]] = [:]
        var image = durable
        for (index, write) in pending.enumerated() {
            if write.bytes.isEmpty {
                // An unsynced change of the file's size may or may not have happened. A cut
                // (compaction) also loses what earlier unsynced writes put past it.
                if random.chance(50), write.offset > image.count {
                    image += [UInt8](repeating: 0, count: write.offset - image.count)
                } else if random.chance(50), write.offset < image.count {
                    image.removeSubrange(write.offset...)
                    for (sectorStart, written) in versions where sectorStart + sector > write.offset {
                        versions[sectorStart] = written.filter { $0.write > index }
                    }
                }
                continue
            }
            var position = write.offset
            while position < write.offset + write.bytes.count {
                let sectorStart = position / sector * sector
                versions[sectorStart, default: []].append((index, position))
                position = sectorStart + sector
            }
        }
        for (sectorStart, written) in versions {
            let roll = random.below(100)
            // Mostly the newest version, often none, sometimes an older one (reordering).
            let choice: Int? = roll < 50 ? written.count - 1 : (roll < 80 ? nil : random.below(written.count))
            guard let choice else { continue }
            // Writes before the chosen one land first (their bytes of the sector, then its).
            for version in written[...choice] {
                let write = pending[version.write]
                let from = max(sectorStart, write.offset)
                let to = min(sectorStart + sector, write.offset + write.bytes.count)
                if to > image.count { image += [UInt8](repeating: 0, count: to - image.count) }
                image.replaceSubrange(from..<to, with: write.bytes[(from - write.offset)..<(to - write.offset)])
            }
        }
        return image
    }

    /// Opens an image and checks it; returns a description of what is wrong, or nil.
    static func verify(image: [UInt8], models: [UInt64: Model], low: UInt64, high: UInt64, writeAfter: Bool,
                       key: [UInt8]? = nil) throws -> String? {
        let file = MemoryFile(contents: image)
        let environment: StorageEnvironment
        do {
            var options = StorageEnvironment.Options()
            options.encryptionKey = key
            environment = try StorageEnvironment(file: file, options: options)
        } catch {
            return "the file does not open: \(error)"
        }
        defer { environment.close() }
        do {
            _ = try environment.check()
            let opened = try environment.read { read -> String? in
                let txnID = read.txnID
                guard txnID >= low && txnID <= high else { return "opened at commit \(txnID), expected \(low)...\(high)" }
                guard let model = models[txnID] else { return "no model for commit \(txnID)" }
                let names = try read.treeNames()
                guard Set(names) == Set(model.keys) else { return "commit \(txnID) has trees \(names), expected \(model.keys.sorted())" }
                for (tree, entries) in model {
                    let cursor = try read.cursor(tree)
                    var count = 0
                    var more = try cursor.first()
                    while more {
                        guard entries[try cursor.key()] == (try cursor.value()) else {
                            return "commit \(txnID): tree \(tree) differs at key \(try cursor.key())"
                        }
                        count += 1
                        more = try cursor.next()
                    }
                    guard count == entries.count else { return "commit \(txnID): tree \(tree) has \(count) entries, expected \(entries.count)" }
                }
                return nil
            }
            if let opened { return opened }
            if writeAfter {
                try environment.write { write in
                    try write.createTree("after")
                    try write.put("after", key: [1], value: [UInt8](repeating: 7, count: 5000))
                }
                _ = try environment.check()
            }
        } catch {
            return "error after opening: \(error)"
        }
        return nil
    }
}

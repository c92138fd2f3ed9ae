import Foundation
import TrellisStorage

/// What the storage fuzzer (`Fuzz/Storage`, `Scripts/fuzz-storage.sh`) does with one input, shared
/// with `StorageFuzzRegressionTests`, which replays the inputs it found through this helper
/// (`fuzz-replay`, in a child process: a finding may kill the process). This file is compiled
/// into both, so a regression input runs exactly as it ran under the fuzzer.
///
/// An input is one flags byte and then a file image:
/// - bit 0: re-checksum the image first (`ChecksumFixer`), so that mutations reach the structure
///   behind the checksums (a file can be made by hand with right checksums: XXH64 is no secret);
/// - bit 1: when `check()` passes, also commit a write transaction, check again, compact (same
///   contents), check, close (seal), reopen and check again.
///
/// The outcome must be a typed `StorageError` or success. Everything else is a finding: a trap
/// or crash (the process dies), a hang (libFuzzer's `-timeout`), a huge allocation (`-malloc_limit_mb`),
/// an error of another type, or an inconsistency `StorageFuzzInput.run` checks (a file that
/// passed `check()` and then reads differently through different paths, or fails after a commit).
enum StorageFuzzInput {
    /// How an input ended.
    enum Outcome: Equatable {
        /// `check()` passed and every read agreed.
        case sound
        /// The engine refused the file (or a read of it) with a typed error.
        case refused(StorageError.Code)
    }

    /// Something the engine did that it must never do (the fuzzer traps on it, the test fails).
    struct Finding: Error, CustomStringConvertible {
        let description: String
    }

    /// Tree names the seeds use, looked up even when `check()` fails.
    static let seedTreeNames = ["a", "b", "numbers", "overflow", "empty"]

    /// Decodes `input` into (flags, image).
    static func decode(_ input: [UInt8]) -> (flags: UInt8, image: [UInt8]) {
        guard let flags = input.first else { return (0, []) }
        var image = Array(input.dropFirst())
        if flags & 1 != 0 {
            var fixer = ChecksumFixer(image: image)
            fixer.fixAll()
            image = fixer.image
        }
        return (flags, image)
    }

    /// Writes the input's file at `path` and works through it. Throws `Finding` for behaviour
    /// that is neither success nor a typed error.
    static func run(_ input: [UInt8], path: String) throws -> Outcome {
        let (flags, image) = decode(input)
        try writeFile(image, path: path)
        do {
            let environment = try open(path)
            defer { environment.close() }
            try lookUpSeedTrees(environment)
            _ = try environment.check()
            try readEverything(environment)
            if flags & 2 != 0 {
                try writeAndRecheck(environment, path: path)
            }
            return .sound
        } catch let error as StorageError {
            return .refused(error.code)
        }
    }

    private static func writeFile(_ image: [UInt8], path: String) throws {
        unlink(path)
        guard FileManager.default.createFile(atPath: path, contents: Data(image)) else {
            throw Finding(description: "the harness could not write \(path)")
        }
    }

    private static func open(_ path: String) throws -> StorageEnvironment {
        var options = StorageEnvironment.Options()
        options.readerSlots = 8
        return try StorageEnvironment(file: try PosixFile(path: path, create: false), options: options)
    }

    /// Point reads bounded by the tree depth (safe before `check()`: a walk of a damaged tree
    /// that shares pages could take exponential time, so whole walks wait for `check()`).
    private static func lookUpSeedTrees(_ environment: StorageEnvironment) throws {
        try environment.read { transaction in
            for name in seedTreeNames {
                guard try transaction.info(name) != nil else { continue }
                _ = try transaction.get(name, key: Array("k1".utf8))
                _ = try transaction.get(name, key: [1, 0, 0, 0, 0, 0, 0, 0])
                let cursor = try transaction.cursor(name)
                if try cursor.first() { _ = try cursor.value(); _ = try cursor.next() }
                if try cursor.last() { _ = try cursor.value(); _ = try cursor.previous() }
            }
        }
    }

    /// After a passing `check()`: every tree walked both ways and every key looked up; all
    /// three must agree with each other and with the tree's count.
    private static func readEverything(_ environment: StorageEnvironment) throws {
        try environment.read { transaction in
            for name in try transaction.treeNames() {
                guard let info = try transaction.info(name) else {
                    throw Finding(description: "tree '\(name)' is listed but has no catalog entry")
                }
                let cursor = try transaction.cursor(name)
                var forward: [([UInt8], [UInt8])] = []
                var more = try cursor.first()
                while more {
                    forward.append((try cursor.key(), try cursor.value()))
                    more = try cursor.next()
                }
                guard UInt64(forward.count) == info.count else {
                    throw Finding(description: "tree '\(name)' walks \(forward.count) entries, its count is \(info.count)")
                }
                var backward = 0
                more = try cursor.last()
                while more {
                    backward += 1
                    guard backward <= forward.count, try cursor.key() == forward[forward.count - backward].0 else {
                        throw Finding(description: "tree '\(name)' walks differently backwards at step \(backward)")
                    }
                    more = try cursor.previous()
                }
                guard backward == forward.count else {
                    throw Finding(description: "tree '\(name)' walks \(backward) entries backwards, \(forward.count) forwards")
                }
                for (key, value) in forward where try transaction.get(name, key: key) != value {
                    throw Finding(description: "tree '\(name)': a lookup of a walked key gives another value")
                }
            }
        }
    }

    private static func contents(_ environment: StorageEnvironment) throws -> [String: [[UInt8]: [UInt8]]] {
        try environment.read { transaction in
            var all: [String: [[UInt8]: [UInt8]]] = [:]
            for name in try transaction.treeNames() {
                let cursor = try transaction.cursor(name)
                var more = try cursor.first()
                while more {
                    all[name, default: [:]][try cursor.key()] = try cursor.value()
                    more = try cursor.next()
                }
            }
            return all
        }
    }

    /// A sound file must stay sound through a commit, a compaction, a seal and a reopening.
    private static func writeAndRecheck(_ environment: StorageEnvironment, path: String) throws {
        let names = try environment.read { try $0.treeNames() }
        try environment.write { write in
            try write.createTree("fuzz-new")
            for index in 0..<40 {
                try write.put("fuzz-new", key: Array("n\(index)".utf8), value: Array(repeating: UInt8(index), count: index * 97))
            }
            for name in names {
                let cursor = try write.cursor(name)
                guard try cursor.first() else { continue }
                let key = try cursor.key()
                try write.delete(name, key: key)
                try write.put(name, key: key, value: Array("again".utf8))
                if try cursor.last() { try write.delete(name, key: try cursor.key()) }
            }
        }
        do {
            _ = try environment.check()
            let before = try contents(environment)
            try environment.compact()
            _ = try environment.check()
            guard try contents(environment) == before else {
                throw Finding(description: "compact() changed the contents of a sound file")
            }
            environment.close()
            let reopened = try open(path)
            defer { reopened.close() }
            _ = try reopened.check()
            try readEverything(reopened)
        } catch let error as StorageError {
            throw Finding(description: "a file that passed check() fails after a commit: \(error)")
        }
    }
}

/// Recomputes every checksum of a file image that it can reach, following docs/STORAGE.md
/// (written from the document, not from the engine's code): the header, each meta slot, the
/// catalog and every tree it names (branch cells, overflow references, catalog values), and the
/// free-list chain. It trusts nothing: any reference that leaves the image or loops is skipped.
struct ChecksumFixer {
    private(set) var image: [UInt8]
    private let pageSize = 4096
    private var pageChecksums: [UInt64: UInt64] = [:]
    private var runChecksums: [UInt64: UInt64] = [:]
    private var inProgress: Set<UInt64> = []

    init(image: [UInt8]) { self.image = image }

    private var pages: UInt64 { UInt64(image.count / pageSize) }

    private func load<T: FixedWidthInteger>(_ type: T.Type, _ offset: Int) -> T {
        guard offset >= 0, offset + MemoryLayout<T>.size <= image.count else { return 0 }
        return image.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    private mutating func store(_ value: UInt64, _ offset: Int) {
        guard offset >= 0, offset + 8 <= image.count else { return }
        withUnsafeBytes(of: value.littleEndian) { bytes in
            for index in 0..<8 { image[offset + index] = bytes[index] }
        }
    }

    private func hash(_ offset: Int, _ count: Int) -> UInt64 {
        XXH64.hash(image[offset..<(offset + count)])
    }

    mutating func fixAll() {
        guard image.count >= pageSize else { return }
        store(hash(0, 16), 16)
        for slot in 1...2 where UInt64(slot) < pages {
            let base = slot * pageSize
            let catalog = load(UInt64.self, base + 32)
            if catalog != 0, let checksum = fixTree(catalog, level: 1, catalog: true) { store(checksum, base + 40) }
            let freeTree = load(UInt64.self, base + 48)
            if freeTree != 0, let checksum = fixTree(freeTree, level: 1, catalog: false) { store(checksum, base + 56) }
            // The counts word (docs/STORAGE.md 2.2, 2.10): spares in bits 0-15, the freed list's
            // two parts in bits 16-31 and 32-47; the lists checksum covers the spares, then the
            // list's `writtenAfter` and pages when there is a list.
            let counts = load(UInt64.self, base + 88)
            let spares = Int(min(counts & 0xFFFF, 256))
            let freed = Int(min((counts >> 16 & 0xFFFF) + (counts >> 32 & 0xFFFF), 240))
            store(hash(base + 112, spares * 8 + (freed > 0 ? 8 + freed * 8 : 0)), base + 96)
            store(hash(base, 104), base + 104)
        }
    }

    private mutating func fixTree(_ page: UInt64, level: Int, catalog: Bool) -> UInt64? {
        guard page >= 3, page < pages, level <= 40, !inProgress.contains(page) else { return nil }
        if let known = pageChecksums[page] { return known }
        inProgress.insert(page)
        defer { inProgress.remove(page) }
        let base = Int(page) * pageSize
        let kind = image[base]
        let count = min(Int(load(UInt16.self, base + 2)), (pageSize - 32) / 2)
        for index in 0..<count {
            let cell = base + Int(load(UInt16.self, base + 32 + 2 * index))
            if kind == 1, cell + 24 <= base + pageSize {
                if let checksum = fixTree(load(UInt64.self, cell + 8), level: level + 1, catalog: catalog) {
                    store(checksum, cell + 16)
                }
            } else if kind == 2, cell + 8 <= base + pageSize {
                let value = cell + 8 + Int(load(UInt16.self, cell))
                let length = Int(load(UInt32.self, cell + 4))
                if image[cell + 2] == 1, value + 16 <= base + pageSize,
                   let checksum = fixRun(load(UInt64.self, value), length: length) {
                    store(checksum, value + 8)
                } else if catalog, image[cell + 2] == 0, length == 32, value + 32 <= base + pageSize {
                    let root = load(UInt64.self, value)
                    if root != 0, let checksum = fixTree(root, level: 1, catalog: false) { store(checksum, value + 8) }
                }
            }
        }
        // Format 7: a page flagged in byte 1 is checksummed over its first `used` bytes (offset 4);
        // an impossible length is left to the engine to report.
        let used = Int(load(UInt32.self, base + 4))
        let flagged = image[base + 1] & 1 != 0 && used >= 32 && used <= pageSize
        let checksum = hash(base, flagged ? used : pageSize)
        pageChecksums[page] = checksum
        return checksum
    }

    private mutating func fixRun(_ page: UInt64, length: Int) -> UInt64? {
        let count = UInt64((32 + length + pageSize - 1) / pageSize)
        guard page >= 3, page < pages, count <= pages - page else { return nil }
        if let known = runChecksums[page] { return known }
        let checksum = hash(Int(page) * pageSize, Int(count) * pageSize)
        runChecksums[page] = checksum
        return checksum
    }
}

/// XXH64 with seed 0, written again from the algorithm's specification (a second implementation,
/// slower and simpler than the engine's: the fixer depends on nothing of the engine but its
/// public API and docs/STORAGE.md).
enum XXH64 {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }
    private static func round(_ acc: UInt64, _ lane: UInt64) -> UInt64 { rotl(acc &+ lane &* p2, 31) &* p1 }
    private static func merge(_ acc: UInt64, _ lane: UInt64) -> UInt64 { (acc ^ round(0, lane)) &* p1 &+ p4 }

    static func hash(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBytes { data in
            func word(_ at: Int) -> UInt64 { UInt64(littleEndian: data.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
            var offset = 0
            var h: UInt64
            if data.count >= 32 {
                var v = (p1 &+ p2, p2, UInt64(0), 0 &- p1)
                while offset + 32 <= data.count {
                    v = (round(v.0, word(offset)), round(v.1, word(offset + 8)), round(v.2, word(offset + 16)),
                         round(v.3, word(offset + 24)))
                    offset += 32
                }
                h = rotl(v.0, 1) &+ rotl(v.1, 7) &+ rotl(v.2, 12) &+ rotl(v.3, 18)
                h = merge(merge(merge(merge(h, v.0), v.1), v.2), v.3)
            } else {
                h = p5
            }
            h &+= UInt64(data.count)
            while offset + 8 <= data.count {
                h = rotl(h ^ round(0, word(offset)), 27) &* p1 &+ p4
                offset += 8
            }
            if offset + 4 <= data.count {
                let half = UInt64(UInt32(littleEndian: data.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                h = rotl(h ^ (half &* p1), 23) &* p2 &+ p3
                offset += 4
            }
            while offset < data.count {
                h = rotl(h ^ (UInt64(data[offset]) &* p5), 11) &* p1
                offset += 1
            }
            h = (h ^ (h >> 33)) &* p2
            h = (h ^ (h >> 29)) &* p3
            return h ^ (h >> 32)
        }
    }
}

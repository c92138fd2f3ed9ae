import Foundation
import Testing
@testable import TrellisStorage

/// Simulated power loss during `compact()`: the same crash images as `PowerLossTests` (every
/// event boundary, unsynced writes dropped, torn or reordered, and the file's cut kept or not)
/// over a workload that grows a file, deletes most of it, compacts (move commits and the cut),
/// writes again and compacts again. Every image must open at a legal commit with exactly its
/// contents (compaction's commits change none) and pass `check()`.
/// `TRELLIS_STORAGE_CRASH_VARIANTS` sets the images per boundary (default 6).
@Suite(.serialized) struct PowerLossCompactionTests {
    typealias Model = PowerLossTests.Model

    @Test(arguments: [(UInt64(31), true), (32, false)])
    func everyCrashPointOfACompactionOpensAtALegalCommit(seed: UInt64, durable: Bool) throws {
        let variants = environmentInteger("TRELLIS_STORAGE_CRASH_VARIANTS", default: 6)
        let (file, models, base) = try Self.workload(seed: seed, durable: durable)
        let cuts = file.events.filter { if case .truncate(let size) = $0 { return size < UInt64(1 << 20) } else { return false } }
        #expect(!cuts.isEmpty, "the workload's compactions cut the file")
        try PowerLossTests.crashEverywhere(file: file, models: models, base: base, seed: seed, variants: variants,
                                           label: "PowerLossCompactionTests seed \(seed) durable \(durable)")
    }

    static func workload(seed: UInt64, durable: Bool) throws -> (MemoryFile, [UInt64: Model], [UInt8]) {
        var random = SeededRandom(seed: seed)
        let file = MemoryFile()
        var options = StorageEnvironment.Options()
        options.syncOnCommit = durable
        let environment = try StorageEnvironment(file: file, options: options)
        defer { environment.close() }
        file.isDurable = durable
        let base = file.contents
        file.isRecording = true
        var model: Model = [:]
        var models: [UInt64: Model] = [1: [:]]
        func commit(_ body: (WriteTransaction) throws -> Void) throws {
            let write = try environment.beginWrite()
            try body(write)
            let txnID = write.txnID
            file.note(.commitBegan(txnID))
            try write.commit()
            file.note(.commitAcknowledged(txnID))
            models[txnID] = model
        }
        func compact() throws {
            let first = try environment.read { $0.txnID } + 1
            // Compaction makes its own commits: any of them may be the one a crash leaves.
            for txnID in first..<(first + 200) { models[txnID] = model }
            file.note(.commitBegan(first + 199))
            _ = try environment.compact()
            let last = try environment.read { $0.txnID }
            #expect(last < first + 200)
            file.note(.commitAcknowledged(last))
        }
        for round in 0..<2 {
            for _ in 0..<3 {
                try commit { write in
                    for _ in 0..<100 {
                        let tree = "t\(random.below(3))"
                        if model[tree] == nil {
                            try write.createTree(tree)
                            model[tree] = [:]
                        }
                        let key = Array("k\(round)-\(random.below(2000))".utf8)
                        let value = random.bytes(random.chance(8) ? 3000 + random.below(6000) : random.below(200))
                        try write.put(tree, key: key, value: value)
                        model[tree]?[key] = value
                    }
                }
            }
            try commit { write in
                for (tree, entries) in model {
                    for key in entries.keys where random.chance(85) {
                        try write.delete(tree, key: key)
                        model[tree]?[key] = nil
                    }
                }
            }
            try compact()
        }
        return (file, models, base)
    }
}

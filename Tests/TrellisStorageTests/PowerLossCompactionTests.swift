import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

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
        var random = SplitMix64(seed: seed)
        let workload = try RecordedWorkload(durable: durable)
        for round in 0..<2 {
            for _ in 0..<3 {
                try workload.commit { write in
                    for _ in 0..<100 {
                        let tree = "t\(random.below(3))"
                        if workload.model[tree] == nil {
                            try write.createTree(tree)
                            workload.model[tree] = [:]
                        }
                        let key = Array("k\(round)-\(random.below(2000))".utf8)
                        let value = random.bytes(random.chance(8) ? 3000 + random.below(6000) : random.below(200))
                        try write.put(tree, key: key, value: value)
                        workload.model[tree]?[key] = value
                    }
                }
            }
            try workload.commit { write in
                // In sorted order: a dictionary's order changes from run to run (seeded hashing),
                // and with it which keys the seed deletes.
                for tree in workload.model.keys.sorted() {
                    let keys = (workload.model[tree] ?? [:]).keys.sorted { $0.lexicographicallyPrecedes($1) }
                    for key in keys where random.chance(85) {
                        try write.delete(tree, key: key)
                        workload.model[tree]?[key] = nil
                    }
                }
            }
            // Compaction makes its own commits: any of them may be the one a crash leaves.
            let (first, last) = try workload.commitsKeepingContents(limit: 200) { _ = try workload.environment.compact() }
            #expect(last < first + 200)
        }
        return workload.finish()
    }
}

import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// I/O errors injected at every call of a commit, and single-byte flips of a sealed file.
@Suite(.serialized) struct FaultTests {
    typealias Model = SeededTrees.Model

    /// Every write, truncate, sync, map and size call of a commit made to fail once (EIO, then
    /// ENOSPC): the commit throws a typed `.io` error, the file stays at its last commit (also
    /// when reopened), and the next transaction works.
    @Test(arguments: [MemoryFile.Call.write, .truncate, .sync, .map, .size])
    func aFailedCallLeavesTheLastCommitAndTheNextTransactionWorks(call: MemoryFile.Call) throws {
        var random = SplitMix64(seed: 77)
        var failures = 0
        for position in 0..<40 {
            let file = MemoryFile()
            let environment = try StorageEnvironment(file: file)
            var model: Model = [:]
            try environment.write { write in
                try write.createTree("t")
                for index in 0..<100 {
                    let value = random.bytes(index % 10 == 0 ? 5000 : 50)
                    try write.put("t", key: Array("k\(index)".utf8), value: value)
                    model[Array("k\(index)".utf8)] = value
                }
            }
            file.failure = (call, position, position % 2 == 0 ? 5 : 28)
            do {
                try environment.write { write in
                    for index in 0..<300 {
                        try write.put("t", key: Array("n\(index)".utf8), value: random.bytes(index % 3 == 0 ? 12000 : 100))
                    }
                    try write.delete("t", key: Array("k1".utf8))
                }
                // The countdown outlived the commit's calls: the commit is whole.
                file.failure = nil
                #expect(try environment.read { try $0.info("t")?.count } == 399)
                continue
            } catch let error as StorageError {
                guard case .io = error.code else {
                    Issue.record("position \(position): \(error)")
                    continue
                }
                failures += 1
            }
            file.failure = nil
            #expect(try SeededTrees.contents(environment, tree: "t") == model, "position \(position)")
            try environment.write { try $0.put("t", key: [9], value: [9]) }
            model[[9]] = [9]
            #expect(try SeededTrees.contents(environment, tree: "t") == model)
            _ = try environment.check()
            let reopened = try StorageEnvironment(file: MemoryFile(contents: file.contents))
            #expect(try SeededTrees.contents(reopened, tree: "t") == model)
            _ = try reopened.check()
        }
        #expect(failures > 0, "no \(call) call failed")
    }

    /// Seeded single-byte flips of a sealed file: each is detected (a typed error on open, read
    /// or check) or harmless (every tree reads exactly as before). `TRELLIS_STORAGE_FLIPS` sets
    /// the number (default 1,000).
    @Test func everyFlipIsDetectedOrHarmless() throws {
        let flips = environmentInteger("TRELLIS_STORAGE_FLIPS", default: 1000)
        var random = SplitMix64(seed: 4242)
        let file = MemoryFile()
        var expected: [String: Model] = [:]
        var usedBytes = 0
        do {
            let environment = try StorageEnvironment(file: file)
            let shape = SeededTrees.Shape(rounds: 6, operations: 80, keys: 400, deletesFrom: 3, deletePercent: 30,
                                          overflowPercent: 5, overflowLength: 6000, smallLength: 200)
            try SeededTrees.fill(environment, shape: shape, random: &random)
            for tree in SeededTrees.names { expected[tree] = try SeededTrees.contents(environment, tree: tree) }
            usedBytes = Int(try environment.read { $0.snapshot.meta.pageCount }) * StorageLimits.pageSize
            environment.close()
        }
        let image = file.contents
        var detected = 0, harmless = 0
        for flip in 0..<flips {
            // Within the pages the file uses (its unused tail is trivially harmless).
            let offset = random.below(usedBytes)
            let damaged = MemoryFile(contents: image)
            damaged.flip(at: offset, with: UInt8(1 + random.below(255)))
            do {
                let environment = try StorageEnvironment(file: damaged)
                _ = try environment.check()
                for (tree, model) in expected {
                    guard try SeededTrees.contents(environment, tree: tree) == model else {
                        Issue.record("flip \(flip) at byte \(offset) (page \(offset / 4096)) changed tree \(tree) silently")
                        return
                    }
                }
                harmless += 1
            } catch is StorageError {
                detected += 1
            }
        }
        print("FaultTests flips: \(flips) flips of a \(image.count)-byte file: \(detected) detected, \(harmless) harmless")
        #expect(detected + harmless == flips)
    }
}

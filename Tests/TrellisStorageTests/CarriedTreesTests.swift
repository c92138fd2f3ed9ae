import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// A write transaction that begins on this process's own last commit takes the trees that commit
/// wrote as it left them (`CarriedTrees`, docs/STORAGE.md 13.3 "Session 35"), and only then: after
/// another environment's commit, or after an aborted transaction, it looks its trees up again.
@Suite struct CarriedTreesTests {
    private static func key(_ number: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(number).bigEndian) { Array($0) } }

    private static func environment(_ path: String) throws -> StorageEnvironment {
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        return try StorageEnvironment(path: path, options: options)
    }

    @Test func aWriteAfterThisProcesssCommitTakesTheTreesThatCommitWrote() throws {
        let directory = temporaryDirectory("carried-own")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = try Self.environment(directory + "/carried.db")
        defer { environment.close() }
        let first = try environment.beginWrite()
        try first.createTree("a")
        try first.put("a", key: Self.key(1), value: [1])
        let written = try #require(try first.tree("a"))
        try first.commit()
        let second = try environment.beginWrite()
        #expect(try second.tree("a") === written)
        #expect(try second.get("a", key: Self.key(1)) == [1])
        #expect(try second.info("a")?.count == 1)
        try second.put("a", key: Self.key(2), value: [2])
        try second.commit()
        try environment.read { (read: ReadTransaction) throws in
            #expect(try read.get("a", key: Self.key(1)) == [1])
            #expect(try read.get("a", key: Self.key(2)) == [2])
        }
        _ = try environment.check()
    }

    @Test func aWriteAfterAnotherEnvironmentsCommitLooksItsTreesUpAgain() throws {
        let directory = temporaryDirectory("carried-other")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try Self.environment(directory + "/carried.db")
        defer { first.close() }
        let second = try Self.environment(directory + "/carried.db")
        defer { second.close() }
        let write = try first.beginWrite()
        try write.createTree("a")
        try write.put("a", key: Self.key(1), value: [1])
        let written = try #require(try write.tree("a"))
        try write.commit()
        try second.write { write in try write.put("a", key: Self.key(1), value: [9]) }
        let next = try first.beginWrite()
        #expect(try next.tree("a") !== written)
        #expect(try next.get("a", key: Self.key(1)) == [9])
        next.abort()
    }

    @Test func anAbortedWriteHandsNothingOn() throws {
        let directory = temporaryDirectory("carried-abort")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = try Self.environment(directory + "/carried.db")
        defer { environment.close() }
        try environment.write { write in
            try write.createTree("a")
            try write.put("a", key: Self.key(1), value: [1])
        }
        let aborted = try environment.beginWrite()
        try aborted.put("a", key: Self.key(1), value: [7])
        try aborted.put("a", key: Self.key(2), value: [7])
        let changed = try #require(try aborted.tree("a"))
        aborted.abort()
        let next = try environment.beginWrite()
        #expect(try next.tree("a") !== changed)
        #expect(try next.get("a", key: Self.key(1)) == [1])
        #expect(try next.get("a", key: Self.key(2)) == nil)
        #expect(try next.info("a")?.count == 1)
        next.abort()
    }

    /// Trees carried through many commits (large transactions that leave more page buffers than
    /// a carried tree keeps, values too large for a leaf, deletes, clears, trees only read, commits
    /// that change nothing) hold what a model holds, and the file checks out.
    @Test func treesCarriedThroughManyCommitsMatchAModel() throws {
        let directory = temporaryDirectory("carried-model")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = try Self.environment(directory + "/carried.db")
        defer { environment.close() }
        var random = SplitMix64(seed: 3801)
        var model: [String: [Int: [UInt8]]] = ["x": [:], "y": [:], "z": [:]]
        try environment.write { write in for name in model.keys { try write.createTree(name) } }
        for round in 0..<120 {
            let write = try environment.beginWrite()
            var changed = model
            for name in ["x", "y", "z"] where random.chance(60) {
                switch random.below(8) {
                case 0:
                    try write.clearTree(name)
                    changed[name] = [:]
                case 1:
                    for number in changed[name, default: [:]].keys.prefix(1 + random.below(20)) {
                        #expect(try write.delete(name, key: Self.key(number)))
                        changed[name]?[number] = nil
                    }
                case 2:
                    // A large transaction: many pages, more than a carried tree keeps.
                    for _ in 0..<400 {
                        let number = random.below(5_000), value = random.bytes(random.below(200))
                        try write.put(name, key: Self.key(number), value: value)
                        changed[name]?[number] = value
                    }
                default:
                    for _ in 0..<(1 + random.below(4)) {
                        let number = random.below(5_000)
                        // At times a value too large for a leaf (an overflow run written at commit).
                        let value = random.bytes(random.chance(20) ? 5_000 + random.below(9_000) : random.below(80))
                        try write.put(name, key: Self.key(number), value: value)
                        changed[name]?[number] = value
                    }
                }
            }
            for (name, entries) in changed {
                #expect(try write.info(name)?.count == UInt64(entries.count), "round \(round): \(name) in the write")
                if let (number, value) = entries.first {
                    #expect(try write.get(name, key: Self.key(number)) == value, "round \(round): \(name) in the write")
                }
            }
            if random.chance(10) {
                write.abort()
            } else {
                try write.commit()
                model = changed
            }
            try environment.read { (read: ReadTransaction) throws in
                for (name, entries) in model {
                    #expect(try read.info(name)?.count == UInt64(entries.count), "round \(round): \(name) committed")
                    for (number, value) in entries.prefix(20) {
                        #expect(try read.get(name, key: Self.key(number)) == value, "round \(round): \(name) committed")
                    }
                }
            }
        }
        let report = try environment.check()
        #expect(report.entries == UInt64(model.values.reduce(0) { $0 + $1.count }))
    }

    /// A page the last commit wrote is changed from the buffer it was written from
    /// (`CommittedBuffer`), not copied from the map: here the file's copy was changed behind the
    /// writer's back (this process does not hash the pages it wrote again), and the next commit
    /// still holds the value as it was put. Copied from the map, the changed byte went into the
    /// next commit under a fresh checksum.
    @Test func aPageTheLastCommitWroteIsChangedFromTheBytesItWrote() throws {
        let file = MemoryFile()
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        let environment = try StorageEnvironment(file: file, options: options)
        let value = Array("a value put once, then changed in the file only".utf8)
        try environment.write { write in
            try write.createTree("t")
            try write.put("t", key: Self.key(1), value: value)
        }
        let contents = file.contents
        let offsets = (0...(contents.count - value.count)).filter { contents[$0] == value[0] && Array(contents[$0..<$0 + value.count]) == value }
        try #require(offsets.count == 1)
        file.flip(at: offsets[0] + 3, with: 0x20)
        try environment.write { try $0.put("t", key: Self.key(2), value: [2]) }
        try environment.read { (read: ReadTransaction) throws in
            #expect(try read.get("t", key: Self.key(1)) == value)
            #expect(try read.get("t", key: Self.key(2)) == [2])
        }
        _ = try environment.check()
    }
}

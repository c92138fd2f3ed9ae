import Foundation
import Testing
@testable import TrellisStorage

@Suite struct EngineTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aCommitIsSeenByNewReadersButNotByAnOlderSnapshot() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { try $0.createTree("a"); try $0.put("a", key: bytes("k"), value: bytes("one")) }
        let old = try environment.beginRead()
        try environment.write { try $0.put("a", key: bytes("k"), value: bytes("two")) }
        #expect(try old.get("a", key: bytes("k")) == bytes("one"))
        #expect(try environment.read { try $0.get("a", key: bytes("k")) } == bytes("two"))
        old.end()
    }

    @Test func aReopenedFileHasItsCommitsAndNotItsAbortedTransactions() throws {
        let directory = temporaryDirectory("reopen")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        do {
            let environment = try StorageEnvironment(path: path)
            try environment.write { write in
                try write.createTree("numbers", order: .integer)
                for number in UInt64(0)..<2000 {
                    try write.put("numbers", key: withUnsafeBytes(of: number) { Array($0) }, value: bytes("v\(number)"))
                }
            }
            let aborted = try environment.beginWrite()
            try aborted.put("numbers", key: withUnsafeBytes(of: UInt64(99_999)) { Array($0) }, value: [1])
            aborted.abort()
            environment.close()
        }
        let environment = try StorageEnvironment(path: path)
        let report = try environment.check()
        #expect(report.entries == 2000)
        try environment.read { read in
            let cursor = try read.cursor("numbers")
            var expected: UInt64 = 0
            var more = try cursor.first()
            while more {
                #expect(try cursor.key() == withUnsafeBytes(of: expected) { Array($0) })
                expected += 1
                more = try cursor.next()
            }
            #expect(expected == 2000)
        }
    }

    @Test func aDurableCommitSyncsOnceAndARelaxedCommitNever() throws {
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file)
        try environment.write { try $0.createTree("a") }
        let before = file.calls[.sync, default: 0]
        for index in 0..<10 { try environment.write { try $0.put("a", key: bytes("k\(index)"), value: bytes("v")) } }
        #expect(file.calls[.sync, default: 0] - before == 10)
        environment.syncOnCommit = false
        let relaxed = file.calls[.sync, default: 0]
        for index in 0..<10 { try environment.write { try $0.put("a", key: bytes("r\(index)"), value: bytes("v")) } }
        #expect(file.calls[.sync, default: 0] == relaxed)
    }

    @Test func freedPagesAreReusedOnlyOnceNoSnapshotCanReachThem() throws {
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file)
        let value = [UInt8](repeating: 1, count: 3000)
        try environment.write { write in
            try write.createTree("a")
            for index in 0..<50 { try write.put("a", key: bytes("k\(index)"), value: value) }
        }
        let held = try environment.beginRead()
        let snapshotPages = held.snapshot.meta.pageCount
        for round in 0..<5 {
            try environment.write { write in
                for index in 0..<50 { try write.put("a", key: bytes("k\(index)"), value: [UInt8](repeating: UInt8(round), count: 3000)) }
            }
        }
        // The held snapshot is intact, so its pages were not reused: the file grew.
        #expect(try held.get("a", key: bytes("k7")) == value)
        let grown = try environment.read { $0.snapshot.meta.pageCount }
        #expect(grown > snapshotPages * 3)
        held.end()
        for round in 0..<10 {
            try environment.write { write in
                for index in 0..<50 { try write.put("a", key: bytes("k\(index)"), value: [UInt8](repeating: UInt8(round), count: 3000)) }
            }
        }
        // With no old snapshot left, pages are reused: the file no longer grows.
        #expect(try environment.read { $0.snapshot.meta.pageCount } == grown)
        _ = try environment.check()
    }

    @Test func relaxedCommitsCheckpointSoThatFreedPagesAreReused() throws {
        let file = MemoryFile()
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        let environment = try StorageEnvironment(file: file, options: options)
        try environment.write { try $0.createTree("a") }
        for round in 0..<300 {
            try environment.write { write in
                for index in 0..<20 { try write.put("a", key: bytes("k\(index)"), value: [UInt8](repeating: UInt8(round & 255), count: 3000)) }
            }
        }
        // 300 commits each free 20+ pages: without checkpoints the file would pass 6,000 pages.
        #expect(try environment.read { $0.snapshot.meta.pageCount } < 3000)
        #expect(file.calls[.sync, default: 0] < 20)
        _ = try environment.check()
    }

    /// A relaxed commit's pages, freed again by a later relaxed commit, are reused without
    /// waiting for a sync (no durable commit can reach them): small relaxed commits keep a small
    /// file small (`StorageEnvironment.noteWritten`).
    @Test func pagesRelaxedCommitsWroteAreReusedWithoutASync() throws {
        let file = MemoryFile()
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        let environment = try StorageEnvironment(file: file, options: options)
        try environment.write { try $0.createTree("a") }
        let syncs = file.calls[.sync, default: 0]
        for round in 0..<300 {
            try environment.write { write in
                try write.put("a", key: bytes("k\(round % 3)"), value: [UInt8](repeating: UInt8(round & 255), count: 100))
            }
        }
        // Each commit frees a few pages: kept for a sync, 300 commits would pass 600 pages.
        #expect(file.calls[.sync, default: 0] == syncs)
        #expect(try environment.read { $0.snapshot.meta.pageCount } < 64)
        _ = try environment.check()
    }

    @Test func aFlippedByteInALeafIsACorruptFileErrorNamingThePage() throws {
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file)
        try environment.write { try $0.createTree("a"); try $0.put("a", key: bytes("key"), value: bytes("value")) }
        let root = try environment.read { read in try read.snapshot.meta.catalog }
        environment.close()
        // The catalog root is the page the first lookup reads; damage a byte of its only cell
        // (the last of the bytes the page uses: its value, the tree's descriptor).
        let page = try #require(root).page
        let used = Int(file.contents[Int(page) * 4096 + 4]) | Int(file.contents[Int(page) * 4096 + 5]) << 8
        file.flip(at: Int(page) * 4096 + used - 10, with: 0x40)
        // Detected when opening (recovery reads the catalog root) or at the first read.
        let error = #expect(throws: StorageError.self) {
            let reopened = try StorageEnvironment(file: file)
            _ = try reopened.read { try $0.get("a", key: Array("key".utf8)) }
        }
        #expect(error?.code == .corruptFile(page: page))
    }

    @Test func appendingEnoughKeysToSplitBranchesLeavesNoBranchWithOneChild() throws {
        // Appends split a full leaf at its last entry (the left page stays full); a branch split
        // the same way kept one child on its right, and a commit right then stored a branch with
        // one child (a file every later open refused). Small commits of appends, checked each.
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { try $0.createTree("log", order: .integer) }
        var next: UInt64 = 0
        for _ in 0..<1_500 {
            try environment.write { write in
                for _ in 0..<16 {
                    _ = try write.put("log", key: withUnsafeBytes(of: next) { Array($0) }, value: [1, 2, 3, 4],
                                      mode: .append)
                    next += 1
                }
            }
            _ = try environment.check()
        }
        #expect(try environment.check().entries == 24_000)
    }

    @Test func integerKeysSortAsNumbersNotBytes() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        let numbers: [UInt64] = [256, 1, 65536, 2, 255]
        try environment.write { write in
            try write.createTree("n", order: .integer)
            for number in numbers { try write.put("n", key: withUnsafeBytes(of: number) { Array($0) }, value: []) }
        }
        let sorted = try environment.read { read -> [UInt64] in
            let cursor = try read.cursor("n")
            var result: [UInt64] = []
            var more = try cursor.first()
            while more {
                result.append(try cursor.withKey { $0.loadUnaligned(as: UInt64.self) })
                more = try cursor.next()
            }
            return result
        }
        #expect(sorted == numbers.sorted())
    }

    @Test func writersOnTwoThreadsAreSerialized() async throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { try $0.createTree("counter"); try $0.put("counter", key: [0], value: [0, 0, 0, 0]) }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<50 {
                        try? environment.write { write in
                            let value = try write.get("counter", key: [0]) ?? [0, 0, 0, 0]
                            let count = value.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } + 1
                            try write.put("counter", key: [0], value: withUnsafeBytes(of: count) { Array($0) })
                        }
                    }
                }
            }
        }
        let final = try environment.read { try $0.get("counter", key: [0]) }
        #expect(final.map { $0.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } } == 200)
    }
}

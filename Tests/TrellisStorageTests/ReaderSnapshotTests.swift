import Foundation
import Synchronization
import Testing
@testable import TrellisStorage

/// The MVCC rule with lock-free reader registration (docs/STORAGE.md, sections 3 and 6): a page
/// is reused only when no live snapshot of any process can reach it, and slots of dead readers
/// are cleared.
@Suite(.serialized) struct ReaderSnapshotTests {
    private static let tree = "t"
    private static let keys = 400

    private static func key(_ index: Int) -> [UInt8] { [UInt8(index >> 8), UInt8(index & 255)] }

    /// Rewrites every key of the tree with values made from `round` (every leaf is copied, so
    /// every page of the previous commit is freed).
    private static func rewriteAll(_ environment: StorageEnvironment, round: Int) throws {
        try environment.write { write in
            try write.createTree(tree)
            for index in 0..<keys {
                let value = withUnsafeBytes(of: UInt64(round)) { Array($0) } + [UInt8](repeating: UInt8(index & 255), count: 92)
                try write.put(tree, key: key(index), value: value)
            }
        }
    }

    /// Reads one line the helper printed.
    private static func line(_ pipe: Pipe) -> String {
        var bytes: [UInt8] = []
        while true {
            let byte = pipe.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first, first != UInt8(ascii: "\n") else { break }
            bytes.append(first)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A digest of the tree in `transaction`, computed as the helper does.
    private static func digest(_ transaction: ReadTransaction) throws -> String {
        let cursor = try transaction.cursor(tree)
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        var entries = 0
        var more = try cursor.first()
        while more {
            for byte in try cursor.key() + (try cursor.value()) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
            entries += 1
            more = try cursor.next()
        }
        return "\(entries):\(String(hash, radix: 16))"
    }

    @Test func aReaderInAnotherProcessKeepsItsSnapshotWhileAWriterCommitsManyTimes() throws {
        let directory = temporaryDirectory("snapshot")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        let environment = try StorageEnvironment(path: path)
        defer { environment.close() }
        try Self.rewriteAll(environment, round: 0)
        // Pages reach a steady state: each commit reuses the pages the one before it freed.
        for round in 1...20 { try Self.rewriteAll(environment, round: round) }
        let steady = try environment.check().pageCount

        // Given a reader of another process and one of this process, both on commit C
        let output = Pipe(), input = Pipe()
        let helpers = HelperProcesses(directory: directory)
        defer { helpers.stopAll() }
        let reader = try helpers.start(["hold-snapshot", path, Self.tree], output: output, input: input)
        let first = Self.line(output).split(separator: " ")
        #expect(first.count == 3 && first[0] == "reading")
        #expect(environment.readers.slotsOfOtherProcesses == 1)
        let localReader = try environment.beginRead()
        let expected = try Self.digest(localReader)
        #expect(first.count == 3 && String(first[2]) == expected)

        // When the writer commits 200 times, rewriting every page of the tree each time
        for round in 21...220 {
            try Self.rewriteAll(environment, round: round)
            if round % 20 == 0 {
                // Then both readers still read exactly commit C
                input.fileHandleForWriting.write(Data("check\n".utf8))
                #expect(Self.line(output) == "digest \(expected)", "after commit round \(round)")
                #expect(try Self.digest(localReader) == expected, "after commit round \(round)")
            }
        }
        // and the pages they can reach were kept: the file grew instead of reusing them
        let pinned = try environment.check().pageCount
        #expect(pinned > steady)
        localReader.end()

        // When the other process dies holding its snapshot, its slot is cleared and reuse resumes.
        helpers.kill(reader)
        for round in 221...260 { try Self.rewriteAll(environment, round: round) }
        #expect(try environment.check().pageCount == pinned)
        #expect(environment.readers.slotsOfOtherProcesses == 0)
    }

    @Test func aReadOnTheSameCommitKeepsItAfterTheFirstReaderEnds() throws {
        // In memory: the pages a commit frees are reused by the next one unless a reader holds them.
        let environment = try StorageEnvironment(file: MemoryFile())
        defer { environment.close() }
        try Self.rewriteAll(environment, round: 0)
        let first = try environment.beginRead()
        let expected = try Self.digest(first)
        for round in 1...20 { try Self.rewriteAll(environment, round: round) }

        // Given a second read of the first one's commit, taken 20 commits later
        let second = try environment.beginRead(sameCommitAs: first)
        #expect(second.txnID == first.txnID)
        #expect(try environment.beginRead().txnID == first.txnID + 20)

        // When the first ends and the writer rewrites every page 40 more times
        first.end()
        for round in 21...60 { try Self.rewriteAll(environment, round: round) }

        // Then the second still reads exactly that commit
        #expect(try Self.digest(second) == expected)
        second.end()
        // and an ended transaction cannot be duplicated.
        #expect(throws: StorageError.self) { try environment.beginRead(sameCommitAs: first) }
    }

    @Test func readersOnManyThreadsOnlyEverSeeWholeCommits() throws {
        // A file in memory: its syncs cost nothing, so every commit is durable at once and the
        // pages it frees are reusable by the next commit unless a reader holds them.
        let environment = try StorageEnvironment(file: MemoryFile())
        defer { environment.close() }
        try Self.rewriteAll(environment, round: 0)
        let done = Atomic(false)
        let failures = Mutex<[String]>([])
        let readsDone = Mutex(0)
        let group = DispatchGroup()
        for thread in 0..<3 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var reads = 0
                while !done.load(ordering: .relaxed) {
                    do {
                        try environment.read { transaction in
                            // Every value of a commit starts with the same round number.
                            let cursor = try transaction.cursor(Self.tree)
                            var round: UInt64?
                            var entries = 0
                            var more = try cursor.first()
                            while more {
                                let value = try cursor.withValue { $0.loadUnaligned(as: UInt64.self) }
                                if round == nil { round = value }
                                if value != round { throw StorageError.misuse("values of rounds \(round ?? 0) and \(value) in one snapshot") }
                                entries += 1
                                more = try cursor.next()
                            }
                            if entries != Self.keys { throw StorageError.misuse("\(entries) entries") }
                        }
                        reads += 1
                    } catch {
                        failures.withLock { $0.append("thread \(thread): \(error)") }
                        return
                    }
                }
                readsDone.withLock { $0 += reads }
            }
        }
        for round in 1...300 { try Self.rewriteAll(environment, round: round) }
        done.store(true, ordering: .relaxed)
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(readsDone.withLock { $0 } > 0)
        #expect(try environment.check().pageCount < 2_000)
        print("ReaderSnapshotTests: \(readsDone.withLock { $0 }) read transactions on 3 threads during 300 commits")
    }
}

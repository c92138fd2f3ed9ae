import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// A write transaction takes the meta slots from what this process's writer last decoded or
/// wrote, and a read transaction the snapshot its writer published, only while the slot pages
/// still hold the bytes they were taken from (docs/STORAGE.md 13.2 item 5): a slot written by
/// another environment or damaged since is decoded again, so no transaction begins on a commit
/// the file no longer holds.
@Suite struct WriterSlotCacheTests {
    private static func put(_ environment: StorageEnvironment, _ key: String, _ value: UInt8) throws {
        try environment.write { write in
            try write.createTree("t")
            try write.put("t", key: Array(key.utf8), value: [value])
        }
    }

    @Test(arguments: [true, false])
    func aTransactionAfterAnotherEnvironmentsCommitsBeginsOnTheNewest(durable: Bool) throws {
        let directory = temporaryDirectory("writer-slots-\(durable)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = StorageEnvironment.Options()
        options.syncOnCommit = durable
        let path = directory + "/slots.db"
        let first = try StorageEnvironment(path: path, options: options)
        defer { first.close() }
        let second = try StorageEnvironment(path: path, options: options)
        defer { second.close() }
        for round in 0..<12 {
            // One environment commits one to three times (its writer's cache then holds the slots
            // it wrote), then the other writes and reads on top of what it left.
            let (writer, other) = round % 2 == 0 ? (first, second) : (second, first)
            for commit in 0..<(1 + round % 3) { try Self.put(writer, "k\(round)-\(commit)", UInt8(round)) }
            let newest = try writer.currentMeta().txnID
            let write = try other.beginWrite()
            #expect(write.txnID == newest + 1, "round \(round): a write began on \(write.txnID - 1), the newest commit is \(newest)")
            #expect(try write.get("t", key: Array("k\(round)-0".utf8)) == [UInt8(round)])
            write.abort()
            let read = try other.beginRead()
            #expect(read.snapshot.meta.txnID == newest, "round \(round): a read began on \(read.snapshot.meta.txnID)")
            read.end()
        }
    }

    @Test func aSlotDamagedAfterThisProcessWroteItIsNotTakenFromTheCache() throws {
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file, options: StorageEnvironment.Options())
        try Self.put(environment, "a", 1)
        try Self.put(environment, "b", 2)
        let slots = try environment.slots()
        try #require(slots.count == 2)
        let (newest, older) = (slots[0], slots[1])
        // The catalog checksum of the newest slot (offset 40, docs/STORAGE.md 2.2) rots.
        file.flip(at: Int(Layout.metaPages[newest.slot]) * Layout.pageSize + 40, with: 0x01)
        let write = try environment.beginWrite()
        #expect(write.txnID == older.meta.txnID + 1, "the write began on \(write.txnID - 1), not on the intact \(older.meta.txnID)")
        #expect(try write.get("t", key: Array("b".utf8)) == nil)
        write.abort()
        let read = try environment.beginRead()
        #expect(read.snapshot.meta.txnID == older.meta.txnID, "a read began on \(read.snapshot.meta.txnID)")
        read.end()
    }

    /// A write after this process's own commit begins on the snapshot that commit published
    /// for readers (issue 37, session 39), and still sees every later commit of another
    /// environment and a seal (a slot rewritten since is decoded again, and a new snapshot made).
    @Test func aWriteAfterItsOwnCommitReusesThePublishedSnapshotOnlyWhileTheSlotIsUnchanged() throws {
        let directory = temporaryDirectory("writer-published-snapshot")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        let path = directory + "/slots.db"
        let first = try StorageEnvironment(path: path, options: options)
        defer { first.close() }
        let second = try StorageEnvironment(path: path, options: options)
        defer { second.close() }
        try Self.put(first, "a", 1)
        // A commit that grew the file past the map publishes no snapshot (the transactions
        // after it map the file): read once, so that the next commits are inside the map.
        try first.read { _ in }
        try Self.put(first, "b", 2)
        let read = try first.beginRead()
        let write = try first.beginWrite()
        #expect(write.txnID == read.snapshot.meta.txnID + 1)
        write.abort()
        read.end()
        // Once the commits stay inside the map (a commit that grew the file published nothing,
        // and the reader's snapshot was decoded again), the write begins on the very snapshot
        // its own last commit published: within a few commits of the same size.
        var reused = false
        for round in 0..<8 where !reused {
            try Self.put(first, "r", UInt8(round))
            let reader = try first.beginRead()
            let writer = try first.beginWrite()
            reused = writer.snapshot === reader.snapshot
            #expect(writer.txnID == reader.snapshot.meta.txnID + 1)
            writer.abort()
            reader.end()
        }
        #expect(reused, "no write began on the snapshot its own last commit published")
        // Another environment (another process's writer) commits: the next write begins on its commit.
        try Self.put(second, "c", 3)
        let afterOther = try first.beginWrite()
        #expect(afterOther.txnID == (try second.currentMeta().txnID) + 1)
        #expect(try afterOther.get("t", key: Array("c".utf8)) == [3])
        afterOther.abort()
        // The first commits again, then the file is sealed (the same commit, marked durable, in
        // the other slot): the write begins on the sealed copy, as a decoded slot would.
        try Self.put(first, "d", 4)
        try second.seal()
        let sealed = try first.beginWrite()
        #expect(sealed.snapshot.meta.durableTxnID == sealed.snapshot.meta.txnID, "the write began on the unsealed copy")
        #expect(try sealed.get("t", key: Array("d".utf8)) == [4])
        sealed.abort()
    }
}

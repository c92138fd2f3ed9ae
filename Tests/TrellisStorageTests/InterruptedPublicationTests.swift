import Foundation
import Testing
@testable import TrellisStorage

/// A writer killed between making its commit durable and publishing it to readers (docs/STORAGE.md,
/// section 6) leaves the lock file with `durableTxnID` one commit ahead of `currentTxnID`. Readers
/// still begin on the older commit, whose pages the dead writer's commit freed; the next writer
/// must not reuse them while such a reader lives.
///
/// The state is made in one process, exactly as the kill leaves it (the durable mark stored, the
/// `currentTxnID` store never made); KillTests reaches it with real SIGKILLs, rarely.
@Suite struct InterruptedPublicationTests {
    private static let tree = "t"
    private static let keys = 400

    /// Rewrites every key with values made from `round`: every leaf is copied, so the commit
    /// frees every page of the previous one.
    private static func rewriteAll(_ environment: StorageEnvironment, round: Int) throws {
        try environment.write { write in
            try write.createTree(tree)
            try rewriteAll(write, round: round)
        }
    }

    private static func rewriteAll(_ write: WriteTransaction, round: Int) throws {
        for index in 0..<keys {
            let value = withUnsafeBytes(of: UInt64(round)) { Array($0) } + [UInt8](repeating: UInt8(index & 255), count: 92)
            try write.put(tree, key: [UInt8(index >> 8), UInt8(index & 255)], value: value)
        }
    }

    /// Every round number of the tree's values (one commit writes one), or the error reading it.
    private static func rounds(_ transaction: ReadTransaction) -> String {
        do {
            let cursor = try transaction.cursor(tree)
            var rounds = Set<UInt64>()
            var entries = 0
            var more = try cursor.first()
            while more {
                rounds.insert(try cursor.withValue { $0.loadUnaligned(as: UInt64.self) })
                entries += 1
                more = try cursor.next()
            }
            return "\(entries) entries of rounds \(rounds.sorted())"
        } catch {
            return "error: \(error)"
        }
    }

    @Test func aReaderBeginningAfterADeadWritersDurableButUnpublishedCommitKeepsItsSnapshot() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        defer { environment.close() }
        // Pages reach a steady state: each commit reuses the pages the one before it freed.
        for round in 0...20 { try Self.rewriteAll(environment, round: round) }

        // Given a writer that made commit 22 (round 21) durable and died before publishing it
        try Self.rewriteAll(environment, round: 21)
        let durable = environment.readers.durableTxnID
        #expect(environment.readers.currentTxnID == durable)
        environment.readers.publishCurrent(durable - 1)

        // When the next writer begins, and then a reader begins
        let write = try environment.beginWrite()
        let reader = try environment.beginRead()
        let before = Self.rounds(reader)
        #expect(!before.hasPrefix("error"), "\(before)")

        // and the writer rewrites every page and commits
        try Self.rewriteAll(write, round: 22)
        try write.commit()

        // Then the reader still reads exactly the snapshot it began on
        #expect(Self.rounds(reader) == before, "reader on commit \(reader.txnID); writer's commit \(durable + 1)")
        reader.end()
        _ = try environment.check()
        #expect(environment.readers.currentTxnID == durable + 1)
    }
}

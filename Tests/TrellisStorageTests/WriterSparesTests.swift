import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// A write transaction takes the freed-pages list the last committed one left (`WriterSpares`)
/// instead of making one, emptied: nothing the commit before freed is recorded again (the free
/// tree and the slots' lists would then hold a page twice, or a page in use, which `check()`
/// reports), and the catalog's state is made only when no carried one stands for it.
@Suite struct WriterSparesTests {
    private static func key(_ number: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(number).bigEndian) { Array($0) } }

    @Test(arguments: [false, true])
    func aWriteReusesTheLastCommitsFreedListEmptied(syncOnCommit: Bool) throws {
        let directory = temporaryDirectory("writer-spares-\(syncOnCommit)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = StorageEnvironment.Options()
        options.syncOnCommit = syncOnCommit
        let environment = try StorageEnvironment(path: directory + "/spares.db", options: options)
        defer { environment.close() }
        try environment.write { write in
            try write.createTree("a")
            for number in 0..<400 { try write.put("a", key: Self.key(number), value: [UInt8](repeating: 1, count: 40)) }
        }
        var previous: FreedPages?
        for round in 0..<60 {
            let write = try environment.beginWrite()
            if let previous {
                #expect(write.freed === previous, "round \(round): the last commit's list is taken")
            }
            #expect(write.freed.pages.isEmpty, "round \(round): nothing of the commit before")
            // Rewrites a few leaves (their old pages freed), sometimes many.
            for number in stride(from: round % 7, to: round % 5 == 0 ? 400 : 30, by: 7) {
                try write.put("a", key: Self.key(number), value: [UInt8](repeating: UInt8(round), count: 40))
            }
            try write.commit()
            previous = write.freed
            _ = try environment.check()
        }
        // An aborted write hands nothing on: the next one makes its own list.
        let aborted = try environment.beginWrite()
        try aborted.put("a", key: Self.key(1), value: [9])
        aborted.abort()
        let next = try environment.beginWrite()
        #expect(next.freed !== aborted.freed)
        #expect(next.freed.pages.isEmpty)
        try next.put("a", key: Self.key(2), value: [8])
        try next.commit()
        _ = try environment.check()
        try environment.read { (read: ReadTransaction) throws in
            #expect(try read.get("a", key: Self.key(1)) == [UInt8](repeating: 57, count: 40), "the aborted put is gone")
            #expect(try read.get("a", key: Self.key(2)) == [8])
        }
    }
}

// The TrellisStorage build's transactions (TRELLIS_STORAGE_ENGINE=trellis, the default).
#if !TRELLIS_LMDB
import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// `Transaction.version` is kept with the snapshot (set when a transaction begins, renews or
/// suspends) instead of asked of the engine each time: it must still be the commit a read
/// snapshot reads, the number a write's commit will have, and follow `suspend` and `renew`.
@Suite struct TransactionVersionTests {
    let folder = TemporaryFolder()

    @Test func versionFollowsCommitsRenewAndSuspend() throws {
        let environment = try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24,
                                          mapSizeLimit: 1 << 30)
        let setUp = try environment.beginWrite()
        let tree = try #require(try setUp.database(named: "t", create: true, integerKeys: true))
        try setUp.commit()
        let reader = try environment.beginRead()
        let first = reader.version
        for round in 1...5 {
            let write = try environment.beginWrite()
            #expect(write.version == first + round, "a write's version is one past the last commit")
            try withUnsafeBytes(of: UInt64(round)) { try write.put(tree, integerKey: UInt64(round), value: $0) }
            try write.commit()
            #expect(reader.version == first, "a read snapshot keeps reading its commit")
        }
        try reader.renew()
        #expect(reader.version == first + 5)
        #expect(reader.entryCount(tree) == 5)
        reader.suspend()
        #expect(reader.isSuspended && reader.version == first + 5, "a suspended snapshot answers the version it read")
        let write = try environment.beginWrite()
        #expect(write.version == first + 6)
        write.abort()
        try reader.renew()
        #expect(reader.version == first + 5, "an aborted write made no commit")
        let copy = try #require(reader.duplicate())
        #expect(copy.version == reader.version)
        copy.abort()
        reader.abort()
    }
}
#endif

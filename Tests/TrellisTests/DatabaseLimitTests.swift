// LMDB's page format and handle rules: tests of the LMDB build only (TRELLIS_STORAGE_ENGINE=lmdb).
#if TRELLIS_LMDB
import CLMDB
import Foundation
import Testing
@testable import Trellis

/// LMDB's limit on named databases (`maxdbs`) is fixed when a file is opened and costs one
/// copied word per possible database on every write transaction, so Trellis sizes it to the
/// file: twice its databases (at least 1,024), or more when the schema opened needs more.
@Suite struct DatabaseLimitTests {
    let folder = TemporaryFolder()

    @Test func theLimitIsTwiceTheDatabasesAndAtLeastTheMinimum() {
        #expect(Environment.databaseLimit(forDatabases: 0) == 1024)
        #expect(Environment.databaseLimit(forDatabases: 448) == 1024)
        #expect(Environment.databaseLimit(forDatabases: 449) == 2048)
        #expect(Environment.databaseLimit(forDatabases: 1000) == 4096)
        #expect(Environment.databaseLimit(forDatabases: 5000) == 16384)
    }

    func openEnvironment(_ path: String, expecting databases: Int = 0) throws -> Environment {
        try Environment(path: path, readOnly: false, initialMapSize: 1 << 24, mapSizeLimit: 1 << 30,
                        expectedDatabases: databases)
    }

    func createDatabases(_ range: Range<Int>, in environment: Environment) throws {
        let txn = try environment.beginWrite()
        do {
            for index in range { _ = try txn.database(named: "d\(index)", create: true) }
            try txn.commit()
        } catch {
            txn.abort()
            throw error
        }
    }

    @Test func reachingTheLimitThrowsAnErrorThatSaysHowToGoOn() throws {
        let path = folder.file().path
        let environment = try openEnvironment(path)
        #expect(environment.databaseLimit == 1024)
        do {
            try createDatabases(0..<1100, in: environment)
            Issue.record("creating 1,100 databases under a limit of 1,024 succeeded")
        } catch let error as StorageError {
            #expect(error.code == MDB_DBS_FULL)
            #expect(error.description.contains("1024 named databases"))
            #expect(error.description.contains("open it again"))
        }
    }

    @Test func reopeningAFileSizesTheLimitToItsDatabases() throws {
        let path = folder.file().path
        try createDatabases(0..<1000, in: openEnvironment(path))
        let reopened = try openEnvironment(path)
        #expect(reopened.databaseLimit == 4096)
        try createDatabases(1000..<1500, in: reopened)
        let txn = try reopened.beginRead()
        defer { txn.abort() }
        #expect(try txn.databaseNames().count == 1500)
    }

    @Test func aSchemaThatNeedsMoreDatabasesOpensWithRoomForThem() throws {
        let environment = try openEnvironment(folder.file().path, expecting: 1500)
        #expect(environment.databaseLimit == 4096)
        try createDatabases(0..<1500, in: environment)
    }
}
#endif

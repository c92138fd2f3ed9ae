import Foundation
import JWTKit
import Logging
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol
import WSClient

/// Bad input is refused with typed errors on both sides, and nothing of it is applied.
@Suite(.serialized)
struct BadInputTests {
    /// Collects the errors the app's sessions report.
    final class ErrorLog: Sendable {
        let errors = Mutex<[SyncError]>([])
        func install(_ app: App) {
            app.syncManager.errorHandler = { error, _ in
                if let error = error as? SyncError { self.errors.withLock { $0.append(error) } }
            }
        }
        var serverCodes: [Int] { errors.withLock { $0.compactMap(\.serverCode) } }
    }

    @Test func clientWithAnotherSchemaVersionIsRefused() async throws {
        let fixture = try SyncFixture(serverArguments: ["--schema-version", "2"])
        let device = try await Device(server: fixture.server, schemaVersion: 1)
        let log = ErrorLog()
        log.install(device.app)
        try device.write { realm in realm.add(SyncDog(value: ["name": "local only"])) }
        let session = try device.session
        await #expect(throws: SyncError.self) {
            try await withTimeout(.seconds(20)) { try await session.wait(for: .upload) }
        }
        #expect(log.serverCodes == [235])
        #expect(log.errors.withLock { $0.first?.code } == .clientSessionError)
        #expect(session.state == .inactive)
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "0")
        #expect(try device.run { $0.objects(SyncDog.self).count } == 1)
        await device.close()
    }

    @Test func clientWhoseModelsDifferFromTheServerSchemaIsRefused() async throws {
        let database = try PostgresFixture.makeDatabase()
        let schema = try makeSchemaFile()
        // The server says a dog's age is a string.
        var documents = try JSONSerialization.jsonObject(with: Data(contentsOf: schema)) as? [[String: Any]] ?? []
        for (index, document) in documents.enumerated() where document["title"] as? String == "SyncDog" {
            var properties = document["properties"] as? [String: Any] ?? [:]
            properties["age"] = ["bsonType": "string"]
            documents[index]["properties"] = properties
        }
        try JSONSerialization.data(withJSONObject: documents).write(to: schema)
        let server = try ServerProcess(database: database, schema: schema)
        let device = try await Device(server: server)
        let log = ErrorLog()
        log.install(device.app)
        let session = try device.session
        await #expect(throws: SyncError.self) {
            try await withTimeout(.seconds(20)) { try await session.wait(for: .download) }
        }
        #expect(log.serverCodes == [225])
        #expect(log.errors.withLock { $0.first?.message.contains("SyncDog.age") } == true)
        await device.close()
    }

    @Test func uploadOfAClassUnknownToTheServerIsRefusedWhole() async throws {
        // The server knows dogs and people, not tasks.
        let database = try PostgresFixture.makeDatabase()
        let schema = try makeSchemaFile([SyncDog.self, SyncPerson.self, SyncAddress.self])
        let server = try ServerProcess(database: database, schema: schema)
        let device = try await Device(server: server, subscriptions: { subs in
            subs.append(QuerySubscription<SyncDog>(name: "dogs"))
        })
        let log = ErrorLog()
        log.install(device.app)
        try device.write { realm in
            realm.add(SyncDog(value: ["name": "in the same upload"]))
            realm.add(SyncTask(value: ["title": "unknown to the server"]))
        }
        try await withTimeout(.seconds(20)) { try await device.session.wait(for: .upload) }
        #expect(log.serverCodes == [230])
        #expect(log.errors.withLock { $0.first?.code } == .writeRejected)
        #expect(try PostgresFixture.psql(database, "SELECT count(*) FROM \"SyncDog\"") == "0")
        // A subscription to it is refused too (Realm's error at update).
        let subscriptions = try device.run { $0.subscriptions }
        await #expect(throws: Realm.Error.self) {
            try await withTimeout(.seconds(20)) {
                try await subscriptions.update { $0.append(QuerySubscription<SyncTask>(name: "tasks")) }
            }
        }
        #expect(log.serverCodes.contains(226))
        await device.close()
    }

    @Test func documentOfTheWrongTypeIsRefusedByTheServer() async throws {
        let fixture = try SyncFixture()
        let id = ObjectId.generate().stringValue
        let frames = try await RawSyncClient.upload(fixture.server, [
            SyncObjectChange(className: "SyncDog", primaryKey: .object(["$oid": .string(id)]), kind: .insert,
                             timestamp: "0000000000000001-00000-raw",
                             fields: [.set(name: "age", value: .string("three"))]),
        ])
        let errors = RawSyncClient.errors(frames)
        #expect(errors.map(\.code) == [SyncErrorCode.writeNotAllowed.rawValue])
        #expect(errors.first?.message.contains("'SyncDog.age' is long") == true)
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "0")
    }
}

/// Logins with JWTs signed by the server's key: accepted when valid, refused with typed
/// errors when forged or expired.
@Suite(.serialized)
struct JWTLoginTests {
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private func token(key: String, subject: String, expires: Date) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        return try await keys.sign(Claims(sub: SubjectClaim(value: subject), exp: ExpirationClaim(value: expires)))
    }

    @Test func validJWTLogsInAndSyncs() async throws {
        let fixture = try SyncFixture()
        let jwt = try await token(key: testJWTKey, subject: "ana", expires: Date().addingTimeInterval(600))
        let device = try await Device(server: fixture.server, credentials: .jwt(token: jwt))
        #expect(device.user.id == "ana")
        try device.write { realm in realm.add(SyncDog(value: ["name": "Rex"])) }
        try await device.sync()
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "1")
        await device.close()
    }

    @Test func forgedJWTIsRefused() async throws {
        let fixture = try SyncFixture()
        let jwt = try await token(key: "another-key-that-is-long-enough-0123456789", subject: "eve",
                                  expires: Date().addingTimeInterval(600))
        let app = testApp(fixture.server.baseURL)
        await #expect { try await app.login(credentials: .jwt(token: jwt)) } throws: { error in
            (error as? AppError)?.code == .authError && (error as? AppError)?.httpStatusCode == 401
        }
        await #expect { try await app.login(credentials: .jwt(token: "not.a.jwt")) } throws: { error in
            (error as? AppError)?.code == .authError
        }
    }

    @Test func expiredJWTIsRefused() async throws {
        let fixture = try SyncFixture()
        let jwt = try await token(key: testJWTKey, subject: "ana", expires: Date().addingTimeInterval(-60))
        let app = testApp(fixture.server.baseURL)
        await #expect { try await app.login(credentials: .jwt(token: jwt)) } throws: { error in
            (error as? AppError)?.code == .invalidSession
        }
    }
}

import Foundation
import Synchronization
import Testing
import Trellis
import TrellisSync

/// Users survive a relaunch and tokens renew themselves (issue 36, items 7 and 8): the access
/// token is refreshed with the refresh token, `app.currentUser` comes back from disk, a synced
/// Realm opens and takes writes offline, and an anonymous login reuses the stored user.
@Suite(.serialized)
struct UserPersistenceTests {
    @Test func expiredAccessTokenIsRefreshedAndSyncGoesOn() async throws {
        // Long enough that a token refreshed just before a connection is still valid when the
        // server reads the hello on a loaded machine (with 2 s, a refresh, a connection and a
        // hello taking over 2 s made every attempt fail with 202 and sync() time out).
        let lifetime = 6
        let fixture = try SyncFixture(serverArguments: ["--token-lifetime", "\(lifetime)"])
        let device = try await Device(server: fixture.server)
        let errors = Mutex<[SyncError]>([])
        device.app.syncManager.errorHandler = { error, _ in
            if let error = error as? SyncError { errors.withLock { $0.append(error) } }
        }
        let first = try device.user.accessToken.unwrapped("access token")
        try device.write { realm in realm.add(SyncDog(value: ["name": "before expiry"])) }
        try await device.sync()
        try await Task.sleep(for: .milliseconds(lifetime * 1000 + 500))
        // The token has expired: a new connection refreshes it first.
        try device.session.reconnect()
        try device.write { realm in realm.add(SyncDog(value: ["name": "after expiry"])) }
        try await device.sync()
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "2")
        #expect(try device.session.state == .active)
        #expect(device.user.accessToken != first)
        #expect(errors.withLock { $0.isEmpty })
        await device.close()
    }

    @Test func revokedRefreshTokenStopsTheSessionWithAnAuthError() async throws {
        let fixture = try SyncFixture(serverArguments: ["--token-lifetime", "1"])
        let device = try await Device(server: fixture.server)
        let errors = Mutex<[SyncError]>([])
        device.app.syncManager.errorHandler = { error, _ in
            if let error = error as? SyncError { errors.withLock { $0.append(error) } }
        }
        try PostgresFixture.psql(fixture.database, "UPDATE trellis_refresh_tokens SET revoked_at = now()")
        try await Task.sleep(for: .milliseconds(1500))
        let session = try device.session
        await #expect(throws: SyncError.self) {
            try await withTimeout(.seconds(20)) { try await session.wait(for: .download) }
        }
        #expect(errors.withLock { $0.first?.code } == .underlyingAuthError)
        #expect(session.state == .inactive)
        await device.close()
    }

    @Test func relaunchedAppFindsItsUserOpensOfflineAndSyncsAfterTheTokenExpired() async throws {
        // 6 s, as in expiredAccessTokenIsRefreshedAndSyncGoesOn: with 2 s, a refresh, a connection
        // and a hello on a loaded machine took longer than the token lived, every attempt failed
        // with 202 and sync() timed out (clean-clone CI at load 27).
        let lifetime = 6
        let fixture = try SyncFixture(serverArguments: ["--token-lifetime", "\(lifetime)"])
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("relaunch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let configuration = AppConfiguration(baseURL: fixture.server.baseURL, rootDirectory: root)
        let firstApp = App(id: "trellis", configuration: configuration)
        let user = try await firstApp.login(credentials: .anonymous)
        let before = Device(app: firstApp, user: user, directory: root, ownsDirectory: false)
        try before.write { realm in realm.add(SyncDog(value: ["name": "synced before"])) }
        try await before.sync()
        before.quit()
        let port = fixture.server.port
        fixture.server.kill()

        // Days later (the access token long expired), offline: the app starts again.
        try await Task.sleep(for: .milliseconds(lifetime * 1000 + 500))
        let relaunched = App(id: "trellis", configuration: configuration)
        let current = try relaunched.currentUser.unwrapped("currentUser after relaunch")
        #expect(current.id == user.id)
        #expect(try await relaunched.login(credentials: .anonymous).id == user.id)
        let after = Device(app: relaunched, user: current, directory: root, ownsDirectory: false)
        #expect(try after.run { $0.objects(SyncDog.self).count } == 1)
        try after.write { realm in realm.add(SyncDog(value: ["name": "written offline"])) }

        // The server is back: the queued write goes up with a refreshed token.
        let server = try ServerProcess(database: fixture.database, schema: fixture.schema, port: port)
        try await after.sync()
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "2")
        await after.close()
        server.kill()
    }

    @Test func loggingOutAnonymousUserForgetsItAndTheNextLoginIsANewUser() async throws {
        let fixture = try SyncFixture()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("logout-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let configuration = AppConfiguration(baseURL: fixture.server.baseURL, rootDirectory: root)
        let app = App(id: "trellis", configuration: configuration)
        let first = try await app.login(credentials: .anonymous)
        #expect(first.state == .loggedIn)
        try await first.logOut()
        #expect(first.state == .removed)
        #expect(app.currentUser == nil)
        #expect(App(id: "trellis", configuration: configuration).currentUser == nil)
        #expect(try await app.login(credentials: .anonymous).id != first.id)
        // The users file is readable by its owner only (it holds tokens).
        let file = root.appendingPathComponent("trellis-sync/trellis/users.json")
        let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
    }

    @Test func loggedOutJWTUserStaysKnownWithoutTokensAndLogsInAgain() async throws {
        let fixture = try SyncFixture()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let configuration = AppConfiguration(baseURL: fixture.server.baseURL, rootDirectory: root)
        let app = App(id: "trellis", configuration: configuration)
        let ana = try await app.login(credentials: .jwt(token: try await TestTokens.login("ana")))
        let refresh = try ana.refreshToken.unwrapped("refresh token")
        try await ana.logOut()
        #expect(ana.state == .loggedOut)
        #expect(ana.accessToken == nil && ana.refreshToken == nil)
        // Its refresh token was revoked on the server.
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM trellis_refresh_tokens "
            + "WHERE revoked_at IS NOT NULL AND user_id = 'ana'") == "1")
        #expect(App(id: "trellis", configuration: configuration).currentUser == nil)
        let again = try await app.login(credentials: .jwt(token: try await TestTokens.login("ana")))
        #expect(again === ana && again.state == .loggedIn && again.refreshToken != refresh)
    }
}

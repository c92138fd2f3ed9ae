import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol
import WSClient

/// Secure defaults (issue 36, items 1 and 2): no start without permissions and explicit login
/// providers, no built-in signing key, refresh tokens distinct, revocable and the only way
/// to a new access token, app ids and empty user ids checked.
@Suite(.serialized)
struct AuthTests {
    /// The server's error output when it refuses to start with `arguments`.
    private func startFailure(_ arguments: [String]) throws -> String {
        do {
            try runTool(ServerProcess.executable.path, ["--postgres", "postgres://nobody@127.0.0.1:1/none"] + arguments)
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func serverRefusesToStartWithoutRulesOrAllowAllOrLoginProviders() throws {
        let schema = try makeSchemaFile()
        let noRules = try startFailure(["--schema", schema.path, "--auth", "anonymous"])
        #expect(noRules.contains("No permissions given: pass --rules PATH"))
        let noAuth = try startFailure(["--schema", schema.path, "--allow-all"])
        #expect(noAuth.contains("No login provider is switched on"))
        let jwtWithoutKey = try startFailure(["--schema", schema.path, "--allow-all", "--auth", "jwt"])
        #expect(jwtWithoutKey.contains("--auth jwt needs --jwt-key"))
        let badRules = try startFailure(["--schema", schema.path, "--rules", "/nonexistent/rules", "--auth", "anonymous"])
        #expect(badRules.contains("does not exist"))
        let rules = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        let text = #"{"default_rule": {"roles": []}, "rules": [{"collection": "SyncDog", "roles": [{"name": "r", "#
            + #""document_filters": {"read": true, "write": true}}]}], "#
            + #""custom_user_data": {"collection_name": "Profiles", "user_id_field": "uid"}}"#
        try text.write(to: rules, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: rules) }
        let missingCollection = try startFailure(["--schema", schema.path, "--rules", rules.path, "--auth", "anonymous"])
        #expect(missingCollection.contains("custom user data collection 'Profiles' is not in the schema"))
    }

    @Test func allowAllLogsAWarningAtStart() throws {
        let fixture = try SyncFixture()
        #expect(fixture.server.log.contains("warning: --allow-all"))
    }

    @Test func anonymousLoginIsRefusedUnlessSwitchedOn() async throws {
        let fixture = try SyncFixture(serverArguments: ["--auth", "jwt"])
        let app = testApp(fixture.server.baseURL)
        await #expect { try await app.login(credentials: .anonymous) } throws: { error in
            (error as? AppError)?.message.contains("not enabled") == true
        }
        let user = try await app.login(credentials: .jwt(token: try await TestTokens.login("ana")))
        #expect(user.id == "ana")
    }

    @Test func loginTokenWithAnEmptySubjectIsRefused() async throws {
        let fixture = try SyncFixture()
        let app = testApp(fixture.server.baseURL)
        await #expect { try await app.login(credentials: .jwt(token: try await TestTokens.login(""))) } throws: { error in
            (error as? AppError)?.code == .authError && (error as? AppError)?.message.contains("empty") == true
        }
    }

    /// The frames the server answers a hello with (until its welcome or an error).
    private func hello(port: Int, pathAppId: String = "trellis", helloAppId: String = "trellis",
                       token: String, clientId: String = "raw-\(UUID())") async throws -> [SyncMessage] {
        let hello = RawSyncClient.hello(token: token, clientId: clientId, appId: helloAppId)
        return try await RawSyncClient.connect(port: port, pathAppId: pathAppId) { channel in
            try await channel.send(hello)
            let frames = try await channel.collect {
                switch $0 {
                case .error, .welcome: true
                default: false
                }
            }
            try await channel.close()
            return frames
        }
    }

    private func errorCode(_ frames: [SyncMessage]) -> Int? {
        frames.lazy.compactMap { if case .error(let error) = $0 { error.code } else { nil } }.first
    }

    @Test func syncSessionForAnotherAppIdIsRefused() async throws {
        let fixture = try SyncFixture()
        let user = try await testApp(fixture.server.baseURL)
            .login(credentials: .anonymous)
        let other = try await hello(port: fixture.server.port, pathAppId: "another-app", token: user.accessToken ?? "")
        #expect(errorCode(other) == 203)
        let otherInHello = try await hello(port: fixture.server.port, helloAppId: "another-app", token: user.accessToken ?? "")
        #expect(errorCode(otherInHello) == 203)
        let same = try await hello(port: fixture.server.port, token: user.accessToken ?? "")
        #expect(errorCode(same) == nil)
        #expect(same.contains { if case .welcome = $0 { true } else { false } })
    }

    @Test func anotherUsersClientIdIsRefusedSoItCannotStallTheirUploads() async throws {
        let fixture = try SyncFixture()
        let ana = try await Device(server: fixture.server, credentials: .jwt(token: try await TestTokens.login("ana")))
        try ana.write { realm in realm.add(SyncDog(value: ["name": "first"])) }
        try await ana.sync()
        let anasClient = try PostgresFixture.psql(fixture.database,
                                                  "SELECT client_id FROM trellis_clients WHERE user_id = 'ana'")
        #expect(!anasClient.isEmpty)
        let eve = try await testApp(fixture.server.baseURL).login(credentials: .anonymous)
        let frames = try await hello(port: fixture.server.port, token: eve.accessToken ?? "", clientId: anasClient)
        #expect(errorCode(frames) == 208)
        // Ana's uploads go on being applied.
        try ana.write { realm in realm.add(SyncDog(value: ["name": "second"])) }
        try await ana.sync()
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "2")
        await ana.close()
    }

    @Test func noBuiltInKeyAndEveryServerOfADatabaseSharesItsRandomKey() async throws {
        let fixture = try SyncFixture()
        // The key that used to be built in signs nothing this server accepts.
        let forged = try await TestTokens.login("eve", key: "trellis-development-key-change-me-please", kind: "access")
        #expect(errorCode(try await hello(port: fixture.server.port, token: forged)) == 203)
        // Nor does the Custom JWT provider's key: a login token is not an access token.
        let login = try await TestTokens.login("eve", kind: "access")
        #expect(errorCode(try await hello(port: fixture.server.port, token: login)) == 203)
        let key = try PostgresFixture.psql(fixture.database,
                                           "SELECT secret FROM trellis_server_keys WHERE name = 'token-signing'")
        #expect((Data(base64Encoded: key)?.count ?? 0) >= 32)
        let otherDatabase = try SyncFixture()
        let otherKey = try PostgresFixture.psql(otherDatabase.database, "SELECT secret FROM trellis_server_keys")
        #expect(otherKey != key)
        // A second server on the same database accepts the first one's tokens.
        let second = try ServerProcess(database: fixture.database, schema: fixture.schema)
        let user = try await testApp(fixture.server.baseURL)
            .login(credentials: .anonymous)
        #expect(errorCode(try await hello(port: second.port, token: user.accessToken ?? "")) == nil)
    }

    /// An HTTP call to the auth session endpoint: status and JSON body.
    private func session(_ method: String, base: String, bearer: String) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: try URL(string: "\(base)/api/client/v2.0/auth/session").unwrapped("URL"))
        request.httpMethod = method
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
    }

    @Test func refreshTokensAreDistinctRevocableAndTheOnlyWayToANewAccessToken() async throws {
        let fixture = try SyncFixture()
        let base = fixture.server.baseURL
        let user = try await testApp(base).login(credentials: .anonymous)
        let refresh = try user.refreshToken.unwrapped("refresh token")
        #expect(refresh != user.accessToken)
        // The refresh token opens no sync session; the access token mints nothing.
        #expect(errorCode(try await hello(port: fixture.server.port, token: refresh)) == 203)
        #expect(try await session("POST", base: base, bearer: user.accessToken ?? "").0 == 401)
        let (status, body) = try await session("POST", base: base, bearer: refresh)
        #expect(status == 201)
        let minted = try (body["access_token"] as? String).unwrapped("access_token")
        #expect(errorCode(try await hello(port: fixture.server.port, token: minted)) == nil)
        // An access token is not a login token either.
        let app = testApp(base)
        await #expect(throws: AppError.self) { try await app.login(credentials: .jwt(token: minted)) }
        // Revoked (log out): it mints no more.
        #expect(try await session("DELETE", base: base, bearer: refresh).0 == 204)
        #expect(try await session("POST", base: base, bearer: refresh).0 == 401)
        #expect(try PostgresFixture.psql(fixture.database,
                                         "SELECT count(*) FROM trellis_refresh_tokens WHERE revoked_at IS NOT NULL") == "1")
    }
}

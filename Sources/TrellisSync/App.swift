import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOSSL
import Synchronization
import Trellis

/// Where an ``App`` finds its server.
public struct AppConfiguration: Sendable {
    /// The server's base URL (`http://127.0.0.1:9090`).
    public var baseURL: String?
    /// Milliseconds a login or token request may take.
    public var defaultRequestTimeoutMS: UInt = 60_000
    /// The folder of the app's users file and synced Realm files (`trellis-sync/<app id>/…`
    /// in it); nil: the folder of `Realm.Configuration.defaultFileURL`.
    public var rootDirectory: URL?
    /// A PEM file of the root certificates to trust, instead of the system's, for an
    /// `https://` base URL and its `wss://` sync connection: a private CA, or the server's own
    /// self-signed certificate (`trellis-sync --tls-cert`). Not in Realm (its apps trust the
    /// system's roots). nil: the system's.
    public var trustedRootCertificatesURL: URL?

    /// Realm's initializer: `AppConfiguration(baseURL: "http://127.0.0.1:9090")`.
    public init(baseURL: String? = nil, defaultRequestTimeoutMS: UInt = 60_000, rootDirectory: URL? = nil,
                trustedRootCertificatesURL: URL? = nil) {
        self.baseURL = baseURL
        self.defaultRequestTimeoutMS = defaultRequestTimeoutMS
        self.rootDirectory = rootDirectory
        self.trustedRootCertificatesURL = trustedRootCertificatesURL
    }
}

/// How a user logs in: Realm's `Credentials`.
public enum Credentials: Sendable {
    /// A new anonymous user.
    case anonymous
    /// A JSON Web Token signed with the key the server was started with (`--jwt-key`); its
    /// `sub` claim is the user id.
    case jwt(token: String)
}

/// An error from the app's HTTP endpoints (login): Realm's `AppError`.
public struct AppError: Error, CustomStringConvertible, Sendable {
    /// Realm's app error codes used here.
    public enum Code: Int, Sendable {
        case unknown = -1
        case httpRequestFailed = 4
        case invalidSession = 2
        case authError = 47
        case badRequest = 48
        case appNotFound = 49
    }
    public let code: Code
    public let message: String
    /// The HTTP status of the answer, if one came.
    public let httpStatusCode: Int?
    public var description: String { "AppError(\(code)): \(message)" }
    public var localizedDescription: String { message }
}

/// A Trellis Sync app: Realm's `App`. One instance per app id and server. Its users are kept
/// on disk (``AppConfiguration/rootDirectory``), so after a relaunch ``currentUser`` is the
/// user logged in before and a synced Realm opens without the network.
public final class App: Sendable {
    public let appId: String
    public let configuration: AppConfiguration
    let users = Mutex<[User]>([])
    let store: UserStore

    /// The wall clock the sync clocks of this app's files read (tests give a device a skewed
    /// clock with ``setWallClock(_:)``).
    private let wallClockSource = Mutex<@Sendable () -> Date>({ Date() })

    /// The current wall-clock time as this app's sync clocks see it.
    func wallClock() -> Date { wallClockSource.withLock { $0 }() }

    /// Replaces the wall clock of this app's sync clocks (tests: a device whose clock is wrong).
    func setWallClock(_ clock: @escaping @Sendable () -> Date) { wallClockSource.withLock { $0 = clock } }

    /// The handler of errors of every sync session of this app (Realm's `app.syncManager`).
    public let syncManager = SyncManager()

    public init(id: String, configuration: AppConfiguration? = nil) {
        appId = id
        self.configuration = configuration ?? AppConfiguration()
        store = UserStore(folder: Self.folder(root: self.configuration.rootDirectory, appId: id))
        let loaded = store.load().map { User(record: $0, app: self) }
        users.withLock { $0 = loaded }
    }

    /// `<root>/trellis-sync/<app id>`: the users file and, per user, its synced files.
    static func folder(root: URL?, appId: String) -> URL {
        let base = root ?? Optional(Realm.Configuration.defaultFileURL).map { $0.deletingLastPathComponent() }
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        return base.appendingPathComponent("trellis-sync").appendingPathComponent(appId)
    }

    var folder: URL { store.file.deletingLastPathComponent() }

    /// The most recently logged-in user still logged in.
    public var currentUser: User? { users.withLock { $0.last { $0.isLoggedIn } } }

    /// Every user logged in.
    public var allUsers: [String: User] {
        users.withLock { Dictionary($0.filter(\.isLoggedIn).map { ($0.id, $0) }, uniquingKeysWith: { $1 }) }
    }

    var baseURL: String { (configuration.baseURL ?? "http://127.0.0.1:9090").trimmingCharacters(in: ["/"]) }

    /// Logs in and returns the user. An anonymous login while an anonymous user is logged in
    /// returns that user (as Realm does), so its files and queued writes stay its own.
    ///
    /// - Throws: ``AppError``: `.authError` for a forged or malformed JWT, `.invalidSession`
    ///   for an expired one, `.httpRequestFailed` when the server cannot be reached.
    public func login(credentials: Credentials) async throws -> User {
        let provider: String
        var body = "{}"
        switch credentials {
        case .anonymous:
            provider = "anon-user"
            if let existing = users.withLock({ $0.last { $0.isLoggedIn && $0.provider == provider } }) {
                try moveToFront(existing)
                return existing
            }
        case .jwt(let token):
            provider = "custom-token"
            body = "{\"token\":\"\(token.replacingOccurrences(of: "\"", with: ""))\"}"
        }
        let fields = try await request("POST", "/api/client/v2.0/app/\(appId)/auth/providers/\(provider)/login",
                                       body: body, bearer: nil, what: "Logging in")
        guard let token = fields["access_token"] as? String, let userId = fields["user_id"] as? String else {
            throw AppError(code: .unknown, message: "The login answer has no access_token or user_id.", httpStatusCode: 200)
        }
        let refresh = fields["refresh_token"] as? String
        let user = users.withLock { users -> User in
            if let existing = users.first(where: { $0.id == userId }) {
                existing.loggedIn(accessToken: token, refreshToken: refresh)
                return existing
            }
            let user = User(record: .init(id: userId, provider: provider, accessToken: token, refreshToken: refresh,
                                          isLoggedIn: true), app: self)
            users.append(user)
            return user
        }
        try moveToFront(user)
        return user
    }

    /// Makes `user` the current user and saves the users.
    private func moveToFront(_ user: User) throws {
        users.withLock { users in
            users.removeAll { $0 === user }
            users.append(user)
        }
        try saveUsers()
    }

    /// Writes the users file (after a login, a token refresh or a log out).
    func saveUsers() throws {
        try store.save(users.withLock { $0.map(\.record) })
    }

    /// Forgets a user (an anonymous user logging out: its identity cannot be logged into again).
    func remove(_ user: User) throws {
        users.withLock { $0.removeAll { $0 === user } }
        try saveUsers()
    }

    /// The TLS of the app's own trust roots, or nil for the system's.
    func trustedTLS() throws -> TLSConfiguration? {
        try configuration.trustedRootCertificatesURL.map(TrustedHTTPS.configuration(trusting:))
    }

    /// One JSON request to the server; its answer's fields, or the ``AppError`` it stands for.
    func request(_ method: String, _ path: String, body: String?, bearer: String?, what: String) async throws
        -> [String: Any]
    {
        let url = baseURL + path
        guard let requestURL = URL(string: url) else {
            throw AppError(code: .badRequest, message: "'\(url)' is not a URL: check AppConfiguration.baseURL.",
                           httpStatusCode: nil)
        }
        let data: Data
        let status: Int
        if let tls = try trustedTLS() {
            var headers = [(String, String)]()
            if body != nil { headers.append(("Content-Type", "application/json")) }
            if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
            do {
                (status, data) = try await TrustedHTTPS.send(method, url, headers: headers, body: body.map { Data($0.utf8) },
                                                             timeoutMS: configuration.defaultRequestTimeoutMS, tls: tls)
            } catch {
                throw AppError(code: .httpRequestFailed, message: "\(what) at \(url) failed: \(error). Is the server "
                    + "running at AppConfiguration.baseURL, with a certificate AppConfiguration.trustedRootCertificatesURL "
                    + "signed?", httpStatusCode: nil)
            }
        } else {
            var request = URLRequest(url: requestURL)
            request.httpMethod = method
            if let body {
                request.httpBody = Data(body.utf8)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
            request.timeoutInterval = Double(configuration.defaultRequestTimeoutMS) / 1000
            let response: URLResponse
            do {
                (data, response) = try await URLSession.shared.data(for: request)
            } catch {
                throw AppError(code: .httpRequestFailed, message: "\(what) at \(url) failed: \(error.localizedDescription). "
                    + "Is the server running at AppConfiguration.baseURL?", httpStatusCode: nil)
            }
            status = (response as? HTTPURLResponse)?.statusCode ?? 0
        }
        let fields = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard (200..<300).contains(status) else {
            let message = fields["error"] as? String ?? "HTTP status \(status)"
            let code: AppError.Code = switch fields["error_code"] as? String {
            case "InvalidSession": .invalidSession
            case "AuthError": .authError
            case "AppNotFound": .appNotFound
            case "BadRequest", "AuthProviderNotFound": .badRequest
            default: .unknown
            }
            throw AppError(code: code, message: message, httpStatusCode: status)
        }
        return fields
    }
}

/// Where sync errors go: Realm's `SyncManager.errorHandler`.
public final class SyncManager: Sendable {
    private let handler = Mutex<(@Sendable (Error, SyncSession?) -> Void)?>(nil)

    /// Called with every error a sync session reports (on a background thread).
    public var errorHandler: (@Sendable (Error, SyncSession?) -> Void)? {
        get { handler.withLock { $0 } }
        set { handler.withLock { $0 = newValue } }
    }
}

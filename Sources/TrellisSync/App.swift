import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Trellis

/// Where an ``App`` finds its server.
public struct AppConfiguration: Sendable {
    /// The server's base URL (`http://127.0.0.1:9090`).
    public var baseURL: String?
    /// Seconds a login request may take.
    public var defaultRequestTimeoutMS: UInt = 60_000

    /// Realm's initializer: `AppConfiguration(baseURL: "http://127.0.0.1:9090")`.
    public init(baseURL: String? = nil, defaultRequestTimeoutMS: UInt = 60_000) {
        self.baseURL = baseURL
        self.defaultRequestTimeoutMS = defaultRequestTimeoutMS
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

/// A Trellis Sync app: Realm's `App`. One instance per app id and server.
public final class App: Sendable {
    public let appId: String
    public let configuration: AppConfiguration
    private let users = Mutex<[User]>([])

    /// The handler of errors of every sync session of this app (Realm's `app.syncManager`).
    public let syncManager = SyncManager()

    public init(id: String, configuration: AppConfiguration? = nil) {
        appId = id
        self.configuration = configuration ?? AppConfiguration()
    }

    /// The most recently logged-in user still logged in.
    public var currentUser: User? { users.withLock { $0.last { $0.isLoggedIn } } }

    /// Every user logged in.
    public var allUsers: [String: User] {
        users.withLock { Dictionary($0.filter(\.isLoggedIn).map { ($0.id, $0) }, uniquingKeysWith: { $1 }) }
    }

    var baseURL: String { (configuration.baseURL ?? "http://127.0.0.1:9090").trimmingCharacters(in: ["/"]) }

    /// Logs in and returns the user.
    ///
    /// - Throws: ``AppError``: `.authError` for a forged or malformed JWT, `.invalidSession`
    ///   for an expired one, `.httpRequestFailed` when the server cannot be reached.
    public func login(credentials: Credentials) async throws -> User {
        let provider: String
        var body = "{}"
        switch credentials {
        case .anonymous: provider = "anon-user"
        case .jwt(let token):
            provider = "custom-token"
            body = "{\"token\":\"\(token.replacingOccurrences(of: "\"", with: ""))\"}"
        }
        let url = "\(baseURL)/api/client/v2.0/app/\(appId)/auth/providers/\(provider)/login"
        guard let requestURL = URL(string: url) else {
            throw AppError(code: .badRequest, message: "'\(url)' is not a URL: check AppConfiguration.baseURL.",
                           httpStatusCode: nil)
        }
        var request = URLRequest(url: requestURL)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.timeoutInterval = Double(configuration.defaultRequestTimeoutMS) / 1000
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw AppError(code: .httpRequestFailed, message: "Logging in at \(url) failed: \(error.localizedDescription). "
                + "Is the server running at AppConfiguration.baseURL?", httpStatusCode: nil)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let fields = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard status == 200, let token = fields["access_token"] as? String, let userId = fields["user_id"] as? String else {
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
        let user = User(id: userId, accessToken: token, app: self)
        users.withLock { $0.append(user) }
        return user
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

/// A logged-in user: Realm's `User`.
public final class User: Sendable {
    /// The user's id on the server.
    public let id: String
    /// The access token sent to the server when a sync session opens.
    public let accessToken: String
    public let app: App
    private let loggedIn = Atomic<Bool>(true)
    let engines = Mutex<[String: SyncEngine]>([:])

    init(id: String, accessToken: String, app: App) {
        self.id = id
        self.accessToken = accessToken
        self.app = app
    }

    public var isLoggedIn: Bool { loggedIn.load(ordering: .relaxed) }

    /// Logs out: every sync session of the user stops.
    public func logOut() async throws {
        loggedIn.store(false, ordering: .relaxed)
        for engine in engines.withLock({ Array($0.values) }) { engine.stop() }
    }

    /// A configuration for a flexible-sync Realm of this user. Set `objectTypes` on it (the
    /// synced classes); `initialSubscriptions` runs when the file is first opened (or every
    /// time with `rerunOnOpen`).
    public func flexibleSyncConfiguration(initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)? = nil,
                                          rerunOnOpen: Bool = false) -> Realm.Configuration {
        var configuration = Realm.Configuration()
        let folder = Optional(Realm.Configuration.defaultFileURL).map { $0.deletingLastPathComponent() }
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let directory = folder.appendingPathComponent("trellis-sync").appendingPathComponent(app.appId)
            .appendingPathComponent(id)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configuration.fileURL = directory.appendingPathComponent("flx_sync_default.realm")
        configuration.syncHook = SyncEngineHandle(user: self, initialSubscriptions: initialSubscriptions,
                                                  rerunOnOpen: rerunOnOpen)
        return configuration
    }

    /// The engine of one synced file (one per file per user).
    func engine(for configuration: Realm.Configuration, handle: SyncEngineHandle) -> SyncEngine {
        let path = configuration.fileURL?.standardizedFileURL.path ?? ""
        return engines.withLock { engines in
            if let engine = engines[path] { return engine }
            let engine = SyncEngine(user: self, configuration: configuration, handle: handle)
            engines[path] = engine
            return engine
        }
    }
}

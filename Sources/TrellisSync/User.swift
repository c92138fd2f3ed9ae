import Foundation
import Synchronization
import Trellis

/// A logged-in user: Realm's `User`. Its tokens are kept on disk with the app's users; the
/// access token is renewed with the refresh token when it expires (before a sync session
/// opens, and when the server says it expired), so sync goes on after days offline.
public final class User: Sendable {
    /// The user's id on the server.
    public let id: String
    /// The login provider's name (`anon-user`, `custom-token`).
    public let provider: String
    public let app: App
    private let tokens: Mutex<(access: String?, refresh: String?)>
    private let loggedIn: Atomic<Bool>
    private let removed = Atomic<Bool>(false)
    let engines = Mutex<[String: SyncEngine]>([:])

    init(record: UserStore.Record, app: App) {
        id = record.id
        provider = record.provider
        self.app = app
        tokens = Mutex((record.accessToken, record.refreshToken))
        loggedIn = Atomic(record.isLoggedIn)
    }

    var record: UserStore.Record {
        let (access, refresh) = tokens.withLock { ($0.access, $0.refresh) }
        return .init(id: id, provider: provider, accessToken: access, refreshToken: refresh, isLoggedIn: isLoggedIn)
    }

    /// The access token sent to the server when a sync session opens (nil when logged out).
    public var accessToken: String? { tokens.withLock { $0.access } }

    /// The long-lived token that gets new access tokens (nil when logged out).
    public var refreshToken: String? { tokens.withLock { $0.refresh } }

    public var isLoggedIn: Bool { loggedIn.load(ordering: .relaxed) }

    /// Realm's user states: logged in, logged out (its tokens forgotten; log in again), or
    /// removed (an anonymous user after logging out: it cannot be logged into again).
    public enum State: Sendable { case loggedOut, loggedIn, removed }

    public var state: State {
        if removed.load(ordering: .relaxed) { return .removed }
        return isLoggedIn ? .loggedIn : .loggedOut
    }

    func loggedIn(accessToken: String, refreshToken: String?) {
        tokens.withLock { $0 = (accessToken, refreshToken) }
        loggedIn.store(true, ordering: .relaxed)
    }

    /// Logs out: every sync session of the user stops, the server revokes its refresh token
    /// (when reachable), and its tokens are forgotten; an anonymous user is removed for good.
    public func logOut() async throws {
        loggedIn.store(false, ordering: .relaxed)
        let stopped = engines.withLock { engines in
            defer { engines = [:] }
            return Array(engines.values)
        }
        for engine in stopped { engine.stop() }
        if let refresh = refreshToken {
            _ = try? await app.request("DELETE", "/api/client/v2.0/auth/session", body: nil, bearer: refresh,
                                       what: "Logging out")
        }
        tokens.withLock { $0 = (nil, nil) }
        if provider == "anon-user" {
            removed.store(true, ordering: .relaxed)
            try app.remove(self)
        } else {
            try app.saveUsers()
        }
    }

    /// An access token that is valid for at least `margin` more seconds: the stored one, or a
    /// new one from the refresh token.
    ///
    /// - Throws: ``AppError``: `.invalidSession` when the refresh token was revoked or has
    ///   expired (log in again), `.httpRequestFailed` when the server cannot be reached.
    func validAccessToken(margin: TimeInterval = 60) async throws -> String {
        if let access = accessToken, let expiry = Self.expiry(of: access),
           expiry.timeIntervalSinceNow > margin { return access }
        return try await refreshAccessToken()
    }

    /// A new access token from the refresh token (`POST /api/client/v2.0/auth/session`).
    func refreshAccessToken() async throws -> String {
        guard let refresh = refreshToken else {
            throw AppError(code: .invalidSession, message: "The user \(id) is logged out: log in again.",
                           httpStatusCode: nil)
        }
        let fields = try await app.request("POST", "/api/client/v2.0/auth/session", body: nil, bearer: refresh,
                                           what: "Refreshing the access token")
        guard let access = fields["access_token"] as? String else {
            throw AppError(code: .unknown, message: "The token refresh answer has no access_token.", httpStatusCode: 201)
        }
        tokens.withLock { $0.access = access }
        try app.saveUsers()
        return access
    }

    /// Forgets the access token (the server said it expired): the next session refreshes it.
    func accessTokenExpired() { tokens.withLock { $0.access = nil } }

    /// The `exp` claim of a JWT (read without checking the signature: the server does that).
    static func expiry(of token: String) -> Date? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        guard let data = Data(base64Encoded: payload),
              let claims = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let exp = claims["exp"] as? NSNumber else { return nil }
        return Date(timeIntervalSince1970: exp.doubleValue)
    }

    /// A configuration for a flexible-sync Realm of this user. Set `objectTypes` on it (the
    /// synced classes); `initialSubscriptions` runs when the file is first opened (or every
    /// time with `rerunOnOpen`). The file is the user's own, so it opens offline after a
    /// relaunch from ``App/currentUser``.
    ///
    /// `clientResetMode` says what happens to changes not yet uploaded when the server's
    /// history is gone (``ClientResetMode``; by default they are recovered).
    public func flexibleSyncConfiguration(clientResetMode: ClientResetMode = .recoverUnsyncedChanges(),
                                          initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)? = nil,
                                          rerunOnOpen: Bool = false) -> Realm.Configuration {
        var configuration = Realm.Configuration()
        let directory = app.folder.appendingPathComponent(id)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configuration.fileURL = directory.appendingPathComponent("flx_sync_default.realm")
        configuration.syncHook = SyncEngineHandle(user: self, initialSubscriptions: initialSubscriptions,
                                                  rerunOnOpen: rerunOnOpen, clientResetMode: clientResetMode)
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

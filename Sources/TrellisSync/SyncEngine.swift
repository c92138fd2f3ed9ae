import Foundation
import Logging
import Synchronization
import Trellis
import TrellisSyncProtocol
import WSClient

/// What a configuration made by `flexibleSyncConfiguration` carries: it finds the file's
/// engine and forwards the core's hooks to it.
final class SyncEngineHandle: SyncCommitHook {
    let user: User
    let initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)?
    let rerunOnOpen: Bool
    let clientResetMode: ClientResetMode

    init(user: User, initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)?, rerunOnOpen: Bool,
         clientResetMode: ClientResetMode = .recoverUnsyncedChanges()) {
        self.user = user
        self.initialSubscriptions = initialSubscriptions
        self.rerunOnOpen = rerunOnOpen
        self.clientResetMode = clientResetMode
    }

    func engine(_ configuration: Realm.Configuration) -> SyncEngine { user.engine(for: configuration, handle: self) }

    func realmWillCommit(_ realm: Realm, changes: [SyncChangedObject]) throws {
        try engine(realm.configuration).record(realm, changes: changes)
    }

    func realmDidCommit(_ configuration: Realm.Configuration) { engine(configuration).post(.uploadNeeded) }

    func realmDidOpen(_ configuration: Realm.Configuration) { engine(configuration).start() }

    func downloadBeforeOpen(_ configuration: Realm.Configuration,
                            completion: @escaping @Sendable ((any Error)?) -> Void) {
        let engine = engine(configuration)
        engine.start()
        Task {
            do {
                try await engine.waitForDownload()
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }
}

/// What the session loop reacts to, in order.
enum EngineEvent: Sendable {
    case frame(String)
    case uploadNeeded
    case subscriptionsChanged
    case mark(Int64)
    case disconnect
}

/// The sync client of one file: its own Realm on a private queue for the outbox and the
/// downloads, and one WebSocket session to the server, reopened after failures.
final class SyncEngine: @unchecked Sendable {
    // @unchecked Sendable: `realm` and `outboxObjects` are touched only on `queue`; the rest is behind `state`.
    let user: User
    let configuration: Realm.Configuration
    let handle: SyncEngineHandle
    let queue: DispatchQueue
    private var realm: Realm?
    /// The objects with changes in the outbox, followed as entries are queued and dropped
    /// (touched only on `queue`, like `realm`).
    var outboxObjects = PendingObjects()
    let logger: Logging.Logger

    struct State {
        var started = false
        var stopped = false
        var suspended = false
        var connection: SyncSession.ConnectionState = .disconnected
        var events: AsyncStream<EngineEvent>.Continuation?
        var uploadWaiters: [(target: Int64, continuation: CheckedContinuation<Void, Error>)] = []
        var downloadWaiters: [Int64: CheckedContinuation<Void, Error>] = [:]
        var subscriptionWaiters: [(version: Int64, continuation: CheckedContinuation<Void, Error>)] = []
        var nextMark: Int64 = 1
        var acknowledged: Int64 = 0
        /// The most uploads a session of this engine had sent and not yet seen acknowledged
        /// at once (see ``SyncEngine/maxUploadsInFlight``; read by tests).
        var mostUploadsInFlight = 0
        var fatalError: SyncError?
        var progress: [UUID: (SyncSession.ProgressDirection, @Sendable (SyncSession.Progress) -> Void)] = [:]
        var task: Task<Void, Never>?
        var reranInitial = false
        /// A client reset under way: its mode; the server's state collected so far; the
        /// server's identity from the reset session's welcome.
        var resetMode: ClientResetMode?
        var resetBuffer: [ServerChange] = []
        var resetEpoch: String?
        /// Manual mode: the session stopped with the reset error and waits for
        /// `immediatelyHandleError` (then it reconnects and resets).
        var awaitingManualReset = false

        /// Whether the session loop ends for good.
        var isOver: Bool { stopped || (fatalError != nil && !awaitingManualReset) }
    }
    let state = Mutex(State())
    private(set) lazy var session = SyncSession(engine: self)

    init(user: User, configuration: Realm.Configuration, handle: SyncEngineHandle) {
        self.user = user
        self.configuration = configuration
        self.handle = handle
        queue = DispatchQueue(label: "trellis-sync \(configuration.fileURL?.lastPathComponent ?? "")")
        var logger = Logging.Logger(label: "trellis-sync-client")
        logger.logLevel = .critical
        self.logger = logger
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    /// Marks the engine's queue (so code already on it does not dispatch to it again).
    static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// The engine's own Realm (on `queue` only).
    func engineRealm() throws -> Realm {
        dispatchPrecondition(condition: .onQueue(queue))
        if let realm { return realm }
        let opened = try Realm(configuration: configuration, queue: queue)
        realm = opened
        return opened
    }

    /// Runs `body` on the engine's queue.
    func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Starts the session (once; the first Realm opened of the file does it).
    func start() {
        let first = state.withLock { state -> Bool in
            if state.started || state.stopped { return false }
            state.started = true
            return true
        }
        guard first else { return }
        let task = Task.detached { [self] in await self.run() }
        state.withLock { $0.task = task }
    }

    /// Stops for good (log out).
    func stop() {
        let unconnected = state.withLock { state -> Task<Void, Never>? in
            state.stopped = true
            // A connected session closes its WebSocket with a close frame, so the server ends
            // the session at once; cancelling it instead would leave the socket half open.
            guard let events = state.events else { return state.task }
            events.yield(.disconnect)
            return nil
        }
        unconnected?.cancel()
        failWaiters(SyncError(code: .clientUserError, message: "The user logged out; the session stopped.", isFatal: true))
    }

    func post(_ event: EngineEvent) { _ = state.withLock { $0.events?.yield(event) } }

    func setSuspended(_ suspended: Bool) {
        state.withLock { state in
            state.suspended = suspended
            if suspended {
                state.events?.yield(.disconnect)
                state.connection = .disconnected
            }
        }
    }

    private func run() async {
        var delay = 0.05
        while !Task.isCancelled {
            let (over, suspended, idle) = state.withLock { ($0.isOver, $0.suspended, $0.fatalError != nil) }
            if over { break }
            if suspended || idle {
                try? await Task.sleep(for: .milliseconds(20))
                continue
            }
            setConnection(.connecting)
            do {
                try await connectOnce()
                delay = 0.05
            } catch {
                logger.debug("sync connection failed: \(error)")
            }
            setConnection(.disconnected)
            if state.withLock({ $0.isOver }) { break }
            try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
            delay = min(delay * 2, 1)
        }
        setConnection(.disconnected)
    }

    func setConnection(_ connection: SyncSession.ConnectionState) {
        state.withLock { state in
            // A suspended session reads as disconnected while its socket closes.
            state.connection = state.suspended && connection != .disconnected ? .disconnected : connection
        }
    }

    private var syncURL: String {
        var base = user.app.baseURL
        if base.hasPrefix("https://") { base = "wss://" + base.dropFirst(8) }
        else if base.hasPrefix("http://") { base = "ws://" + base.dropFirst(7) }
        return "\(base)/api/client/v2.0/app/\(user.app.appId)/realm-sync"
    }

    /// One WebSocket session: hello, then events until it ends.
    private func connectOnce() async throws {
        let token: String
        do {
            token = try await user.validAccessToken()
        } catch let error as AppError where error.code == .invalidSession {
            // The refresh token was revoked or has expired: only a new login helps.
            let failure = SyncError(code: .underlyingAuthError, message: "The access token could not be refreshed: "
                + "\(error.message) Log the user in again.", isFatal: true)
            state.withLock { $0.fatalError = failure }
            user.app.syncManager.errorHandler?(failure, session)
            failWaiters(failure)
            return
        }
        let hello = try await onQueue { [self] in try makeHello(accessToken: token) }
        let (events, continuation) = AsyncStream.makeStream(of: EngineEvent.self)
        try await WebSocketClient.connect(url: syncURL, configuration: .init(maxFrameSize: 1 << 28),
                                          tlsConfiguration: try user.app.trustedTLS(), logger: logger) {
            inbound, outbound, _ in
            let marks = self.state.withLock { state -> [Int64] in
                state.events = continuation
                // Stopped or suspended while connecting: close at once (stop() and suspend()
                // found no session to tell).
                if state.stopped || state.suspended { continuation.yield(.disconnect) }
                return Array(state.downloadWaiters.keys)
            }
            defer { self.state.withLock { $0.events = nil } }
            try await outbound.write(.text(SyncCoding.encode(.hello(hello))))
            self.setConnection(.connected)
            continuation.yield(.uploadNeeded)
            for mark in marks.sorted() { continuation.yield(.mark(mark)) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // However the connection ends (a close frame or an error such as a reset),
                    // the loop below ends and the session reconnects; without this a failed
                    // connection left the session waiting for events forever, "connected" but
                    // deaf to the server.
                    defer { continuation.yield(.disconnect) }
                    for try await message in inbound.messages(maxSize: 1 << 28) {
                        if case .text(let text) = message { continuation.yield(.frame(text)) }
                    }
                }
                // The uploads sent and not acknowledged yet, oldest first (see `maxUploadsInFlight`).
                var inFlight = [Int64]()
                loop: for await event in events {
                    switch event {
                    case .disconnect:
                        break loop
                    case .uploadNeeded:
                        while inFlight.count < Self.maxUploadsInFlight {
                            let sent = inFlight.last ?? 0
                            guard let upload = try await self.onQueue({ [self] in try nextUpload(after: sent) }) else {
                                break
                            }
                            inFlight.append(upload.uploadId)
                            self.state.withLock { $0.mostUploadsInFlight = max($0.mostUploadsInFlight, inFlight.count) }
                            try await outbound.write(.text(SyncCoding.encode(.upload(upload))))
                        }
                    case .subscriptionsChanged:
                        let set = try await self.onQueue { [self] in subscriptionsForServer(try engineRealm()) }
                        try await outbound.write(.text(SyncCoding.encode(.subscribe(.init(subscriptions: set)))))
                    case .mark(let id):
                        try await outbound.write(.text(SyncCoding.encode(.mark(.init(id: id)))))
                    case .frame(let text):
                        // A download's documents are kept in the mirror as the frame's text of them.
                        guard let frame = try? SyncCoding.decodeNotingDocumentText(text) else { continue }
                        if try await !self.receive(frame.message, documents: frame.documents, inFlight: &inFlight,
                                                   continuation: continuation) { break loop }
                    }
                }
                group.cancelAll()
            }
            try? await outbound.close(.normalClosure, reason: nil)
        }
    }

    /// How many uploads a session sends before the first is acknowledged. The server handles a
    /// connection's messages one at a time, in order, and ends the session at the first it
    /// cannot apply (nothing after it is applied), so the acknowledgements come in order and an
    /// upload is never applied before an earlier one; whatever was not acknowledged when a
    /// session ends is sent again by the next, from the oldest (the server skips uploads it
    /// already applied: it keeps each client's last upload id).
    static let maxUploadsInFlight = 4

    /// Handles a server frame; false when the session must end.
    private func receive(_ message: SyncMessage, documents: FrameDocumentText?, inFlight: inout [Int64],
                         continuation: AsyncStream<EngineEvent>.Continuation) async throws -> Bool {
        switch message {
        case .download(let download):
            if try await collectForReset(download) {
                report(.download, transferred: Int64(download.changes.count), pending: download.hasMore ? 1 : 0)
                if let version = download.completesSubscriptionVersion {
                    completeSubscriptions(version)
                    continuation.yield(.uploadNeeded)
                }
                return true
            }
            try await onQueue { [self] in try apply(download, documentText: documents) }
            report(.download, transferred: Int64(download.changes.count), pending: download.hasMore ? 1 : 0)
            if let version = download.completesSubscriptionVersion { completeSubscriptions(version) }
        case .ack(let ack):
            let remaining = try await onQueue { [self] in try dropAcknowledged(upTo: ack.uploadId) }
            inFlight.removeAll { $0 <= ack.uploadId }
            state.withLock { $0.acknowledged = max($0.acknowledged, ack.uploadId) }
            completeUploads(upTo: ack.uploadId)
            report(.upload, transferred: ack.uploadId, pending: Int64(remaining))
            if remaining > 0 { continuation.yield(.uploadNeeded) }
        case .mark(let mark):
            let waiter = state.withLock { $0.downloadWaiters.removeValue(forKey: mark.id) }
            waiter?.resume()
        case .error(let frame) where SyncErrorCode(rawValue: frame.code)?.requiresClientReset == true:
            return beginClientReset(frame)
        case .error(let frame) where frame.code == SyncErrorCode.tokenExpired.rawValue:
            // The access token expired: refreshed before the next connection, not an error.
            user.accessTokenExpired()
            return false
        case .error(let frame):
            let error = SyncError(frame)
            user.app.syncManager.errorHandler?(error, session)
            if frame.isFatal {
                state.withLock { $0.fatalError = error }
                failWaiters(error)
                return false
            }
            if error.code == .invalidFlexibleSyncSubscriptions {
                try await onQueue { [self] in
                    try rollBackRefusedSubscriptions(version: frame.subscriptionVersion, message: frame.message)
                }
                // Realm's shape: `subscriptions.update` throws `Realm.Error.subscriptionFailed`.
                failSubscriptionWaiters(Realm.Error(code: .subscriptionFailed, message: frame.message),
                                        upTo: frame.subscriptionVersion)
            }
        case .welcome(let welcome):
            let resetting = state.withLock { state -> Bool in
                if state.resetMode != nil { state.resetEpoch = welcome.serverEpoch }
                return state.resetMode != nil
            }
            // The identity of the history this file syncs with (kept by a reset when it is done).
            if !resetting, let epoch = welcome.serverEpoch {
                try await onQueue { [self] in try storeServerEpoch(epoch) }
            }
        default:
            break
        }
        return true
    }

    // MARK: - Waiting

    func waitForUpload() async throws {
        let target = try await onQueue { [self] in try newestQueuedSequence() }
        if target == 0 { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let ready = state.withLock { state -> Result<Void, Error>? in
                if let error = state.fatalError { return .failure(error) }
                if state.acknowledged >= target { return .success(()) }
                state.uploadWaiters.append((target, continuation))
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    func waitForDownload() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let failure = state.withLock { state -> SyncError? in
                if let error = state.fatalError { return error }
                let id = state.nextMark
                state.nextMark += 1
                state.downloadWaiters[id] = continuation
                state.events?.yield(.mark(id))
                return nil
            }
            if let failure { continuation.resume(throwing: failure) }
        }
    }

    func waitForSubscriptions(version: Int64) async throws {
        let (completed, refused) = try await onQueue { [self] in
            let realm = try engineRealm()
            realm.refresh()
            return (SyncStoreLayout.text(realm, SyncStoreLayout.completedSubscriptions).flatMap(Int64.init) ?? 0,
                    SyncStoreLayout.text(realm, SyncStoreLayout.refusedSubscriptions))
        }
        // Refused before this call waited.
        if let refused, refused.hasPrefix("\(version)\n") {
            throw Realm.Error(code: .subscriptionFailed, message: String(refused.dropFirst("\(version)\n".count)))
        }
        if completed >= version { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let failure = state.withLock { state -> SyncError? in
                if let error = state.fatalError { return error }
                state.subscriptionWaiters.append((version, continuation))
                return nil
            }
            if let failure { continuation.resume(throwing: failure) }
        }
    }

    private func completeUploads(upTo id: Int64) {
        let ready = state.withLock { state in
            let ready = state.uploadWaiters.filter { $0.target <= id }
            state.uploadWaiters.removeAll { $0.target <= id }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    private func completeSubscriptions(_ version: Int64) {
        let ready = state.withLock { state in
            let ready = state.subscriptionWaiters.filter { $0.version <= version }
            state.subscriptionWaiters.removeAll { $0.version <= version }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Fails the waiters of sets up to `version` (all of them without a version).
    private func failSubscriptionWaiters(_ error: any Error, upTo version: Int64?) {
        let waiters = state.withLock { state in
            let limit = version ?? .max
            defer { state.subscriptionWaiters.removeAll { $0.version <= limit } }
            return state.subscriptionWaiters.filter { $0.version <= limit }
        }
        for waiter in waiters { waiter.continuation.resume(throwing: error) }
    }

    func failWaiters(_ error: SyncError) {
        let (uploads, downloads, subscriptions) = state.withLock { state in
            defer {
                state.uploadWaiters = []
                state.downloadWaiters = [:]
                state.subscriptionWaiters = []
            }
            return (state.uploadWaiters, Array(state.downloadWaiters.values), state.subscriptionWaiters)
        }
        for waiter in uploads { waiter.continuation.resume(throwing: error) }
        for waiter in downloads { waiter.resume(throwing: error) }
        for waiter in subscriptions { waiter.continuation.resume(throwing: error) }
    }

    private func report(_ direction: SyncSession.ProgressDirection, transferred: Int64, pending: Int64) {
        let observers = state.withLock { $0.progress.values.filter { $0.0 == direction }.map(\.1) }
        let progress = SyncSession.Progress(transferred: Int(transferred), transferrable: Int(transferred + pending))
        for observer in observers { observer(progress) }
    }

    // MARK: - Hello

    /// The first frame: identity, token, schema, where the client is, and its subscriptions.
    private func makeHello(accessToken: String) throws -> SyncMessage.Hello {
        let realm = try engineRealm()
        realm.refresh()
        try ensureInitialSubscriptions(realm)
        try indexUnresolvedLinks(realm)
        var clientId = SyncStoreLayout.text(realm, SyncStoreLayout.clientId)
        if clientId == nil {
            try realm.write {
                realm.isApplyingSyncDownload = true
                clientId = try ensureClientId(realm)
            }
            realm.isApplyingSyncDownload = false
        }
        let subscriptions = subscriptionsForServer(realm)
        let completed = SyncStoreLayout.text(realm, SyncStoreLayout.completedSubscriptions).flatMap(Int64.init) ?? -1
        var last = SyncStoreLayout.text(realm, SyncStoreLayout.lastServerVersion).flatMap(Int64.init) ?? 0
        var epoch = SyncStoreLayout.text(realm, SyncStoreLayout.serverEpoch)
        // A client reset starts afresh: no identity, no version (the server sends its state).
        let resetting = state.withLock { state -> Bool in
            if state.resetMode != nil { state.resetBuffer = [] }
            return state.resetMode != nil
        }
        if resetting {
            last = 0
            epoch = nil
        }
        var schema = [String: JSONValue]()
        let types = configuration.objectTypes ?? []
        if let appSchema = try? AppServicesSchema(objectTypes: types) {
            for className in appSchema.collectionClassNames {
                if let data = try? appSchema.jsonSchema(for: className),
                   let value = try? JSONValue(jsonText: String(decoding: data, as: UTF8.self)) {
                    schema[className] = value
                }
            }
        }
        return SyncMessage.Hello(appId: user.app.appId, accessToken: accessToken, clientId: clientId ?? "",
                                 schemaVersion: configuration.schemaVersion, schema: schema,
                                 lastServerVersion: completed == subscriptions.version ? last : 0,
                                 subscriptions: subscriptions, serverEpoch: epoch)
    }

    /// Runs the configuration's `initialSubscriptions` when the file has no subscription set
    /// yet (or on every open with `rerunOnOpen`).
    private func ensureInitialSubscriptions(_ realm: Realm) throws {
        guard let initial = handle.initialSubscriptions else { return }
        let exists = realm.syncStoreGet(SyncStoreLayout.subscriptions) != nil
        let rerun = handle.rerunOnOpen && !state.withLock { $0.reranInitial }
        guard !exists || rerun else { return }
        state.withLock { $0.reranInitial = true }
        let set = SyncSubscriptionSet(engine: self)
        try set.write(on: realm) { initial(set) }
    }
}

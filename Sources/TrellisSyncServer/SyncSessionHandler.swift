import Foundation
import Logging
import Synchronization
import Trellis
import TrellisSyncProtocol

/// What a session reacts to, in order.
enum SessionEvent: Sendable {
    /// A message of the client, and when its reading task had it whole (unmasked).
    case frame(String, received: ContinuousClock.Instant)
    /// The server's watch read history entries `(from, through]`; some may be for this session.
    case historyGrew(from: Int64, through: Int64)
    case closed
    /// The server is shutting down: the session ends after what came before.
    case drain
}

/// One client's session: checks its hello, sends it what its subscriptions select (a
/// bootstrap, then the history as it grows), and applies its uploads.
final class SyncSessionHandler {
    let store: PostgresStore
    let authenticator: Authenticator
    let rules: SyncRules
    let options: ServerOptions
    /// The app id of the WebSocket's path (`/api/client/v2.0/app/<id>/realm-sync`).
    let pathAppId: String
    /// The history as this server reads it once for every session (nil: each reads its own).
    let watch: HistoryWatch?
    let logger: Logging.Logger
    let send: (SyncMessage) async throws -> Void
    /// This session's id in the watch's fan-out.
    let sessionId: UUID

    /// The largest first message (a hello) a connection may send before its token is checked.
    static let maxHelloBytes = 1 << 20

    private var clientId = ""
    private var subscriptions = SubscriptionSet(version: 0, subscriptions: [])
    private var queries = [String: [SyncQuery]]()
    /// The newest history version this client was sent.
    private var sentVersion: Int64 = 0
    private var isOpen = false
    /// The watch's version when it started routing entries to this session by its current
    /// subscriptions (nil: not routed yet): every batch read after it that holds an entry
    /// the session may want wakes it, so a batch it is not woken for needs nothing sent.
    private var routedFrom: Int64?
    private var route = SessionRoute(clientId: "", queries: [:])
    /// When the last routed download frame went out: a device whose subscriptions select
    /// nothing new still gets an empty frame now and then (``progressInterval``), so the
    /// version it stores keeps up with the history and pruning does not reset it.
    private var lastRoutedFrame = ContinuousClock.now
    static let progressInterval = Duration.seconds(60)
    /// What the user may read and write, from the rules (set when the session opens).
    private var permissions = SessionPermissions(rules: SyncRules(), user: RuleUser(id: ""), collections: [])

    init(store: PostgresStore, authenticator: Authenticator, rules: SyncRules, options: ServerOptions,
         pathAppId: String, watch: HistoryWatch? = nil, sessionId: UUID = UUID(), logger: Logging.Logger,
         send: @escaping (SyncMessage) async throws -> Void) {
        self.sessionId = sessionId
        self.store = store
        self.watch = watch
        self.authenticator = authenticator
        self.rules = rules
        self.options = options
        self.pathAppId = pathAppId
        self.logger = logger
        self.send = send
    }

    /// Set when the user's custom data changed what the rules' expansions give: the session
    /// ends after the event in hand (error 228) and the next one starts with the new role.
    private var permissionsChanged = false

    /// Handles one event; false when the session must close.
    func handle(_ event: SessionEvent) async throws -> Bool {
        let keepOpen = try await handleEvent(event)
        guard keepOpen, permissionsChanged else { return keepOpen }
        // Device Sync keeps a session's role until it ends and resets the client when the role's
        // inputs differ at the next start; here the session ends now, and the next one removes
        // from the device what the new role may not read (``bootstrap(previous:)``).
        _ = try await fail(.serverPermissionsChanged, "The user's custom data changed what the rules give for "
            + "them: the session restarts with the new permissions.", fatal: false)
        return false
    }

    private func handleEvent(_ event: SessionEvent) async throws -> Bool {
        switch event {
        case .closed, .drain: return false
        case .historyGrew(let from, let through):
            if isOpen { try await sendRouted(from: from, through: through) }
            return true
        case .frame(let text, let received):
            let started = ContinuousClock.now
            options.faults.decoding(bytes: text.utf8.count, logger: logger)
            let message: SyncMessage
            do {
                message = try SyncCoding.decode(text)
            } catch {
                return try await fail(.badSyntax, "The frame is not a sync message: \(error)", fatal: true)
            }
            let decoded = ContinuousClock.now
            switch message {
            case .hello(let hello): return try await open(hello)
            case .upload(let upload):
                guard isOpen else { return try await fail(.badSyntax, "An upload came before hello.", fatal: true) }
                try await receive(upload, bytes: text.utf8.count, timing: (received, started, decoded))
                return true
            case .subscribe(let subscribe):
                guard isOpen else { return try await fail(.badSyntax, "A subscription came before hello.", fatal: true) }
                if try await setSubscriptions(subscribe.subscriptions) { try await bootstrap() }
                return true
            case .mark(let mark):
                guard isOpen else { return try await fail(.badSyntax, "A mark came before hello.", fatal: true) }
                try await sendHistory()
                try await send(.mark(mark))
                return true
            default:
                return try await fail(.badSyntax, "A client may not send \(message).", fatal: true)
            }
        }
    }

    /// `duration` in milliseconds, for the log.
    static func ms(_ duration: Duration) -> String {
        String(format: "%.1f ms", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
    }

    private func fail(_ code: SyncErrorCode, _ message: String, fatal: Bool, subscriptionVersion: Int64? = nil)
        async throws -> Bool
    {
        logger.notice("session \(clientId): error \(code.rawValue): \(message)")
        try await send(.error(.init(code: code.rawValue, message: message, isFatal: fatal,
                                    subscriptionVersion: subscriptionVersion)))
        return !fatal
    }

    private func open(_ hello: SyncMessage.Hello) async throws -> Bool {
        guard hello.protocolVersion == SyncProtocol.version else {
            return try await fail(.wrongProtocolVersion, "The client speaks sync protocol \(hello.protocolVersion); this "
                + "server speaks \(SyncProtocol.version). Update the client or the server.", fatal: true)
        }
        guard pathAppId == options.appId, hello.appId == options.appId else {
            return try await fail(.badAuthentication, "This server serves the app '\(options.appId)', not "
                + "'\(pathAppId == options.appId ? hello.appId : pathAppId)': check the App's id.", fatal: true)
        }
        let userId: String
        do {
            userId = try await authenticator.verifyAccess(hello.accessToken)
        } catch {
            return try await fail(error.code, error.message, fatal: true)
        }
        let inputs = try await ruleInputs(of: userId)
        permissions = SessionPermissions(rules: rules, user: inputs.user(userId), collections: store.schema.collections.keys)
        guard hello.schemaVersion == options.schemaVersion else {
            let advice = hello.schemaVersion < options.schemaVersion
                ? "The server's schema changed in a breaking way since this app was built: update the app to the "
                    + "models of schema version \(options.schemaVersion) (and open the Realm with schemaVersion "
                    + "\(options.schemaVersion))."
                : "This app is newer than the server: start the server with --schema-version \(hello.schemaVersion) and "
                    + "the schema of that version."
            return try await fail(.badSchemaVersion, "Client provided invalid schema version: the client presented "
                + "schema version \(hello.schemaVersion) but the server serves schema version \(options.schemaVersion). "
                + advice, fatal: true)
        }
        var problems = [String]()
        for (className, document) in hello.schema.sorted(by: { $0.key < $1.key }) {
            guard let server = store.schema.collections[className],
                  let client = try? SchemaShape(document: document) else { continue }
            problems += server.differences(from: client)
        }
        if !problems.isEmpty {
            return try await fail(.invalidSchemaChange, "The client's models differ from the server's schema: "
                + problems.joined(separator: "; ") + ". Update the schema file or the models.", fatal: true)
        }
        guard !hello.clientId.isEmpty, try await store.claim(clientId: hello.clientId, userId: userId) else {
            return try await fail(.badClientFileIdent, "The client id '\(hello.clientId)' belongs to another user's "
                + "client file: a synced file is one user's; open this user's own file.", fatal: true)
        }
        clientId = hello.clientId
        let identity = try await store.identity()
        let latest = try await store.latestVersion()
        if let reset = Self.resetReason(hello, identity: identity, latest: latest) {
            return try await fail(reset.code, reset.reason + " The client must reset its file (client reset): it downloads the "
                + "server's state again and, depending on its ClientResetMode, recovers or discards its unsynced "
                + "changes.", fatal: true)
        }
        guard try await setSubscriptions(hello.subscriptions) else { return false }
        let previous = try await previousPermissions(userId: userId, inputs: inputs, lastServerVersion: hello.lastServerVersion)
        isOpen = true
        try await send(.welcome(.init(userId: userId, serverVersion: latest, serverEpoch: identity.epoch)))
        logger.info("session \(clientId) opened by user \(userId), from version \(hello.lastServerVersion)")
        if let previous {
            let version = try await bootstrap(previous: previous.permissions)
            try await store.setRuleInputs(of: clientId, current: inputs, previous: previous.inputs, version: version)
        } else if hello.lastServerVersion == 0 {
            try await bootstrap()
        } else {
            sentVersion = hello.lastServerVersion
            try await sendHistory()
        }
        return true
    }

    /// Why a client cannot resume from where it is (the history it synced with is gone), or
    /// nil when it can: another server identity, a version below the history kept, or one
    /// the server never reached.
    static func resetReason(_ hello: SyncMessage.Hello, identity: ServerIdentity, latest: Int64)
        -> (code: SyncErrorCode, reason: String)?
    {
        if let epoch = hello.serverEpoch, epoch != identity.epoch {
            return (.badServerFileIdent, "The client synced with server history \(epoch), but this server's history is "
                + "\(identity.epoch): the database was recreated or replaced, and what the client had is gone.")
        }
        if hello.lastServerVersion > 0 && hello.lastServerVersion < identity.historyFloor {
            return (.clientFileExpired, "The client synced up to server version \(hello.lastServerVersion), but the "
                + "server keeps its history only from version \(identity.historyFloor) on (pruned).")
        }
        if hello.lastServerVersion > latest {
            return (.badServerVersion, "The client synced up to server version \(hello.lastServerVersion), but the "
                + "server's history ends at \(latest): it was restored from an older state.")
        }
        return nil
    }

    /// The custom data and user data the rules' `%%user` expansions read for `userId`.
    private func ruleInputs(of userId: String) async throws -> RuleInputs {
        var inputs = RuleInputs(customData: [:], data: try await store.userData(of: userId))
        if let custom = rules.customUserData {
            inputs.customData = try await store.customUserData(collection: custom.collection,
                                                               userIdField: custom.userIdField, userId: userId)
        }
        return inputs
    }

    /// The permissions of the client's previous session when they differ from this one's (the
    /// user's role may have changed: what it no longer allows must leave the device), also
    /// when the bootstrap sent for such a change was not applied yet; nil otherwise. Records
    /// this session's inputs.
    private func previousPermissions(userId: String, inputs: RuleInputs, lastServerVersion: Int64) async throws
        -> (permissions: SessionPermissions, inputs: RuleInputs)?
    {
        guard !rules.allowsAll else { return nil }
        let stored = try await store.ruleInputs(of: clientId)
        var earlier: RuleInputs?
        if let stored, stored.current != inputs {
            earlier = stored.current
        } else if let stored, let previous = stored.previous, lastServerVersion < stored.version {
            earlier = previous  // the client has not applied the last change's bootstrap yet
        }
        guard let earlier else {
            if stored == nil { try await store.setRuleInputs(of: clientId, current: inputs, previous: nil, version: 0) }
            return nil
        }
        let old = SessionPermissions(rules: rules, user: earlier.user(userId), collections: store.schema.collections.keys)
        guard old.expandedUserValues != permissions.expandedUserValues else {
            try await store.setRuleInputs(of: clientId, current: inputs, previous: nil, version: 0)
            return nil
        }
        let message = "session \(clientId): the rules' expansions changed for user \(userId) since the client's last "
            + "session; sending what the role now allows and removing what it no longer does"
        logger.notice("\(message)")
        return (old, earlier)
    }

    /// Whether a history batch changed this user's custom data so that the rules' expansions
    /// give other values than when the session started.
    private func customDataChanged(in entries: some Collection<HistoryEntry>) async throws -> Bool {
        guard !rules.allowsAll, let custom = rules.customUserData,
              entries.contains(where: { $0.change.className == custom.collection }) else { return false }
        let user = (try await ruleInputs(of: permissions.user.id)).user(permissions.user.id)
        let now = SessionPermissions(rules: rules, user: user, collections: [])
        return now.expandedUserValues != permissions.expandedUserValues
    }

    /// Checks and adopts a subscription set; false (after an error frame) when one is bad.
    private func setSubscriptions(_ set: SubscriptionSet) async throws -> Bool {
        var parsed = [String: [SyncQuery]]()
        for subscription in set.subscriptions {
            guard store.schema.collections[subscription.className] != nil else {
                let known = store.schema.collections.keys.sorted().joined(separator: ", ")
                _ = try await fail(.badQuery, "Invalid query: the subscription '\(subscription.name ?? subscription.query)' "
                    + "names the class '\(subscription.className)', which is not in the server's schema (known: \(known)).",
                    fatal: false, subscriptionVersion: set.version)
                return false
            }
            do {
                let query = try SyncQuery.parse(subscription.query)
                if let shape = store.schema.collections[subscription.className],
                   let problem = SubscriptionCheck.problem(query, text: subscription.query, in: shape)
                {
                    _ = try await fail(.badQuery, problem, fatal: false, subscriptionVersion: set.version)
                    return false
                }
                parsed[subscription.className, default: []].append(query)
            } catch {
                _ = try await fail(.badQuery, "\(error)", fatal: false, subscriptionVersion: set.version)
                return false
            }
        }
        subscriptions = set
        queries = parsed
        var watched = Set<String>()
        if !rules.allowsAll, let custom = rules.customUserData { watched.insert(custom.collection) }
        route = SessionRoute(clientId: clientId, queries: parsed, permissions: permissions, watchedClasses: watched)
        // Routed before the bootstrap and history that follow, which send everything up to at
        // least this version.
        routedFrom = watch?.route(sessionId, route)
        return true
    }

    private func matches(_ className: String, _ document: JSONValue) -> Bool {
        guard let queries = queries[className], case .object = document else { return false }
        if queries.contains(where: \.selectsEverything) { return true }
        guard let object = document.foundationObject as? [String: Any] else { return false }
        return queries.contains { $0.matches(object) }
    }

    /// Whether a stored document fits the schema; when not, the server logs it with its
    /// collection and `_id` (it was written with SQL: fix the row) and does not send it.
    private func fitsSchema(_ className: String, _ document: JSONValue) -> Bool {
        guard let shape = store.schema.collections[className], let fields = document.objectValue,
              let problem = shape.problem(inDocument: fields) else { return true }
        let key = fields[shape.primaryKey ?? "_id"]?.jsonText ?? "?"
        let message = "bad row in collection '\(className)' _id \(key): \(problem); it is not sent to clients until it "
            + "is fixed (UPDATE the row to fit the schema)"
        logger.error("\(message)")
        return false
    }

    /// Sends every document the subscriptions select, as of one snapshot, then what came after;
    /// the snapshot's version. With the `previous` session's permissions (the role changed):
    /// a removal of each document they let the device read that the current ones do not, or
    /// of which they hide fields the previous ones showed (then the document follows, so the
    /// hidden values are gone from the device).
    @discardableResult
    private func bootstrap(previous: SessionPermissions? = nil) async throws -> Int64 {
        // PostgreSQL leaves out what the queries surely do not select (docs/SYNC.md,
        // "Subscriptions"); each row it returns is still checked here. Queries run on the
        // document as the user may see it: on a collection whose role hides fields, SQL does
        // not filter (it sees the hidden fields), so a query on a hidden field selects as if
        // the field were absent and reveals nothing of its values.
        let filters = queries.filter { permissions.readsWholeDocuments($0.key) }.mapValues { SubscriptionFilter($0) }
        // Streamed: rows are read a batch at a time and sent as they are read, so a bootstrap of
        // any size holds one batch in memory; the last frame completes the subscription set.
        let frameSize = HistoryWatch.batch
        var pending = [ServerChange]()
        var snapshotVersion: Int64 = 0
        func flush(last: Bool) async throws {
            while pending.count >= frameSize || last {
                let count = min(frameSize, pending.count)
                let isLast = last && count == pending.count
                try await send(.download(.init(changes: Array(pending[..<count]), serverVersion: snapshotVersion,
                                               completesSubscriptionVersion: isLast ? subscriptions.version : nil,
                                               hasMore: !isLast)))
                pending.removeFirst(count)
                if isLast { return }
            }
        }
        snapshotVersion = try await store.snapshot(of: Array(queries.keys), filters: filters) { version, className, rows in
            snapshotVersion = version
            let key = store.schema.collections[className]?.primaryKey ?? "_id"
            for stored in rows {
                guard fitsSchema(className, stored.document) else { continue }
                let visible = permissions.readable(className, stored.document).flatMap { matches(className, $0) ? $0 : nil }
                let primaryKey = stored.document[key] ?? .null
                if let before = previous?.readable(className, stored.document)?.objectValue,
                   !Set(before.keys).isSubset(of: visible?.objectValue?.keys ?? [String: JSONValue]().keys) {
                    pending.append(ServerChange(className: className, primaryKey: primaryKey, document: nil,
                                                serverVersion: version))
                }
                guard let visible else { continue }
                pending.append(ServerChange(className: className, primaryKey: primaryKey, document: visible,
                                            serverVersion: version, timestamp: stored.timestamp))
            }
            try await flush(last: false)
        }
        try await flush(last: true)
        sentVersion = snapshotVersion
        try await sendHistory()
        return snapshotVersion
    }

    /// Sends the history after what the client was sent, filtered by its subscriptions and the
    /// permissions (``changes(for:)``).
    ///
    /// The entries come from the server's ``HistoryWatch`` when it holds them (read once for
    /// every session); otherwise, or for what it has not read yet, from the history table.
    /// `fromWatchOnly`: stop at what the watch has read (it wakes the session again when it
    /// reads more).
    private func sendHistory(fromWatchOnly: Bool = false) async throws {
        let batch = HistoryWatch.batch
        while true {
            let entries: [HistoryEntry]
            let isLastBatch: Bool
            if let cached = watch?.entries(after: sentVersion, limit: batch), !cached.isEmpty || fromWatchOnly {
                entries = cached
                // Without `fromWatchOnly`, what the watch has not read yet is read below.
                isLastBatch = fromWatchOnly && cached.count < batch
            } else {
                entries = try await store.history(after: sentVersion, limit: batch)
                isLastBatch = entries.count < batch
            }
            guard let last = entries.last else { return }
            if try await customDataChanged(in: entries) {
                permissionsChanged = true
                return
            }
            let changes = changes(for: entries)
            sentVersion = last.version
            try await send(.download(.init(changes: changes, serverVersion: sentVersion, hasMore: entries.count >= batch)))
            if isLastBatch { return }
        }
    }

    /// Sends what the watch's entries `(from, through]` hold for this session. Entries between
    /// what it was sent and `from` need nothing when the session was routed before them (a
    /// batch with an entry it may want would have woken it first); otherwise, or when the
    /// watch no longer holds them, the whole history after what it was sent is read.
    private func sendRouted(from: Int64, through: Int64) async throws {
        if routedFrom == nil { routedFrom = watch?.route(sessionId, route) }
        guard let routedFrom, sentVersion >= routedFrom, let watch else {
            return try await sendHistory(fromWatchOnly: true)
        }
        var start = max(sentVersion, from)
        while start < through {
            guard let entries = watch.entries(after: start, limit: HistoryWatch.batch) else {
                return try await sendHistory(fromWatchOnly: true)
            }
            let inRange = entries.prefix { $0.version <= through }
            guard let last = inRange.last else { break }
            if try await customDataChanged(in: inRange) {
                permissionsChanged = true
                return
            }
            let changes = changes(for: inRange)
            sentVersion = max(sentVersion, last.version)
            // Nothing for this device: no frame (its next frame or mark carries the version).
            if !changes.isEmpty {
                try await send(.download(.init(changes: changes, serverVersion: sentVersion)))
                lastRoutedFrame = .now
            }
            start = last.version
        }
        sentVersion = max(sentVersion, through)
        if ContinuousClock.now - lastRoutedFrame > Self.progressInterval {
            try await send(.download(.init(changes: [], serverVersion: sentVersion)))
            lastRoutedFrame = .now
        }
    }

    /// What the device gets of history entries, filtered by its subscriptions and the
    /// permissions: a document its queries select, with the fields the user may read. An
    /// object the device may hold (it was readable and selected just before the change, or
    /// this client wrote the change, or the earlier history was pruned) that no longer
    /// matches is sent without a document (removed locally). A change the user may not see
    /// (another user's object, or its delete) is sent, without a document, only when the
    /// object was readable and on the device just before it, or this client wrote it;
    /// otherwise not even its primary key reaches the client.
    private func changes(for entries: some Collection<HistoryEntry>) -> [ServerChange] {
        var changes = [ServerChange]()
        for entry in entries where queries[entry.change.className] != nil && route.mayWant(entry) {
            let className = entry.change.className
            var change = entry.change
            // A document that does not fit the schema (written with SQL) is not sent:
            // clients keep what they had of it.
            if let document = change.document, !fitsSchema(className, document) { continue }
            let isOwn = entry.clientId == clientId
            let previous = entry.previous.flatMap { permissions.readable(className, $0) }
            let wasHeld = previous.map { matches(className, $0) } ?? false
            if let document = change.document, let visible = permissions.readable(className, document) {
                if matches(className, visible) {
                    change.document = visible
                } else if isOwn || wasHeld || !entry.previousKnown {
                    change.document = nil
                } else {
                    continue
                }
            } else {
                // Its own change always comes back (the device skipped what came for the object
                // while the upload was pending, and waits for the merged state).
                guard isOwn || wasHeld else { continue }
                change.document = nil
                change.timestamp = nil
            }
            changes.append(change)
        }
        return changes
    }

    /// Applies and acknowledges an upload of `bytes` bytes; `timing`: when its frame was read,
    /// when this session started on it and when it was decoded (for the debug log).
    private func receive(_ upload: SyncMessage.Upload, bytes: Int,
                         timing: (received: ContinuousClock.Instant, started: ContinuousClock.Instant,
                                  decoded: ContinuousClock.Instant)) async throws {
        if upload.changes.count > options.maxChangesPerUpload {
            // Its history entries would hold the history lock too long (docs/SYNC.md, "Limits").
            _ = try await fail(.writeNotAllowed, "The upload \(upload.uploadId) was refused, nothing of it applied: it "
                + "holds \(upload.changes.count) changes, more than the server takes in one upload "
                + "(--max-changes-per-upload \(options.maxChangesPerUpload)).", fatal: false)
            try await send(.ack(.init(uploadId: upload.uploadId, serverVersion: sentVersion)))
            return
        }
        var upload = upload
        var problems = [String]()
        var clamped = 0
        let bounds = TimestampBounds(maxSkewMilliseconds: options.maxClockSkewMilliseconds)
        let now = Date()
        for index in upload.changes.indices {
            let change = upload.changes[index]
            switch bounds.check(change.timestamp, clientId: clientId, now: now) {
            case .accepted(let stamp): upload.changes[index].timestamp = stamp
            case .clamped(let stamp):
                upload.changes[index].timestamp = stamp
                clamped += 1
            case .refused(let reason): problems.append("\(change.className) \(change.primaryKey.jsonText): \(reason)")
            }
        }
        if clamped > 0 {
            let message = "session \(clientId): \(clamped) timestamp(s) of upload \(upload.uploadId) were more than "
                + "\(options.maxClockSkewMilliseconds / 1000) s ahead of the server's clock and were set to it "
                + "(the device's clock is wrong; --max-clock-skew)"
            logger.notice("\(message)")
        }
        for change in upload.changes {
            guard let shape = store.schema.collections[change.className] else {
                problems.append("the class '\(change.className)' is not in the server's schema")
                continue
            }
            if let key = shape.primaryKey, let problem = shape.mismatch(change.primaryKey, at: key) {
                problems.append("primary key: \(problem)")
            }
            for field in change.fields {
                switch field {
                case .set(let name, let value):
                    if let problem = shape.mismatch(value, at: name) { problems.append(problem) }
                case .list(let name, _, let value):
                    if let problem = shape.mismatch(.array(value), at: name) { problems.append(problem) }
                case .setDiff(let name, let added, _):
                    if let problem = shape.mismatch(.array(added), at: name) { problems.append(problem) }
                case .map(let name, let values):
                    if shape.types[name] == nil {
                        problems.append("'\(change.className)' has no property '\(name)'")
                    } else if let problem = shape.mismatch(.object(values.compactMapValues { $0 }), at: name) {
                        problems.append(problem)
                    }
                }
            }
        }
        if !problems.isEmpty {
            // Nothing of the upload is applied; it is acknowledged so the client drops it.
            _ = try await fail(.writeNotAllowed, "The upload \(upload.uploadId) was refused, nothing of it applied: "
                + problems.joined(separator: "; ") + ".", fatal: false)
            try await send(.ack(.init(uploadId: upload.uploadId, serverVersion: sentVersion)))
            return
        }
        let (version, refused) = try await store.apply(upload, clientId: clientId, permissions: permissions)
        try await send(.ack(.init(uploadId: upload.uploadId, serverVersion: version)))
        if logger.logLevel <= .debug {
            // Where an upload's time went (TRELLIS_SYNC_LOG=debug): waiting behind this session's
            // earlier events, decoding, and checking + applying + acknowledging.
            let message = "session \(clientId): upload \(upload.uploadId) (\(bytes) bytes, \(upload.changes.count) "
                + "changes): waited \(Self.ms(timing.started - timing.received)), decoded in "
                + "\(Self.ms(timing.decoded - timing.started)), applied and acknowledged in "
                + "\(Self.ms(ContinuousClock.now - timing.decoded))"
            logger.debug("\(message)")
        }
        if !refused.isEmpty { try await compensate(refused) }
        // A session the watch routes to is woken for what the upload added (its own changes
        // come back that way): it does not read the history itself. Otherwise it could read,
        // after each of its own small uploads, what another user's large upload added and the
        // watch has not read yet, and its next upload would wait for that.
        if !isRouted { try await sendHistory() }
    }

    /// Whether the watch wakes this session for every later history entry it may want, so it
    /// need not read the history itself.
    private var isRouted: Bool {
        guard watch != nil, let routedFrom else { return false }
        return sentVersion >= routedFrom
    }

    /// Tells the client which of its writes the rules refused (Device Sync's compensating
    /// write), then sends those objects as the server keeps them, which undoes its changes.
    private func compensate(_ refused: [RefusedChange]) async throws {
        let writes = refused.map { SyncMessage.CompensatingWrite(className: $0.className, primaryKey: $0.primaryKey,
                                                                 reason: $0.reason) }
        let list = writes.prefix(5).map { "\($0.className) \($0.primaryKey.jsonText): \($0.reason)" }
            .joined(separator: "; ") + (writes.count > 5 ? "; and \(writes.count - 5) more" : "")
        logger.notice("session \(clientId): \(writes.count) write(s) refused by the rules: \(list)")
        try await send(.error(.init(code: SyncErrorCode.compensatingWrite.rawValue,
                                    message: "The server refused \(writes.count) write(s) the permissions do not allow "
                                        + "and reverted them: \(list).", isFatal: false, compensatingWrites: writes)))
        var changes = [ServerChange]()
        for change in refused {
            let visible = change.document.flatMap { document in
                permissions.readable(change.className, document).flatMap { matches(change.className, $0) ? $0 : nil }
            }
            changes.append(ServerChange(className: change.className, primaryKey: change.primaryKey, document: visible,
                                        serverVersion: sentVersion, timestamp: change.timestamp))
        }
        try await send(.download(.init(changes: changes, serverVersion: sentVersion)))
    }
}

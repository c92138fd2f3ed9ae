import Foundation
import Trellis
import TrellisSyncProtocol

/// Client reset (docs/SYNC.md, "Client reset"): when the server's history the file synced with
/// is gone (errors 207, 209, 222), the session reconnects asking for a fresh start, collects
/// the server's bootstrap, and in one write transaction replaces the file's synced objects
/// with the server's state, then (recovery modes) applies the changes not yet uploaded again
/// by Realm's recovery rules; the commit queues them for upload as new changes. One
/// transaction: a crash leaves the file as before the reset (which then happens again).
extension SyncEngine {
    /// An unsynced change of one object, as recovery needs it.
    struct UnsyncedObject {
        var className: String
        var primaryKey: JSONValue
        /// Created locally (not on the server as far as this file knows).
        var inserted = false
        /// The top-level properties changed locally.
        var fields = Set<String>()
        /// The object as it is locally, nil when deleted locally.
        var document: [String: JSONValue]?
    }

    /// The server said the history is gone: reset per the configuration's mode. False: end
    /// the session (a reset reconnects; manual mode stops with the error).
    func beginClientReset(_ frame: SyncMessage.ErrorMessage) -> Bool {
        let mode = handle.clientResetMode
        if case .manual(let handler) = mode {
            let error = manualResetError(frame)
            state.withLock { $0.fatalError = error; $0.awaitingManualReset = true }
            if let handler { handler(error, session) } else { user.app.syncManager.errorHandler?(error, session) }
            failWaiters(error)
            return false
        }
        logger.notice("client reset (\(mode)): \(frame.message)")
        state.withLock { state in
            state.resetMode = mode
            state.resetBuffer = []
        }
        return false
    }

    /// The `.clientResetError` of manual mode, with the token that carries the reset out: it backs
    /// the file up (with the file's `encryptionKey`, as Realm's backup keeps it) and resets.
    private func manualResetError(_ frame: SyncMessage.ErrorMessage) -> SyncError {
        let backup = Self.backupURL(for: configuration.fileURL)
        let token = SyncError.ActionToken(backupPath: backup.path) { [self] in
            try onQueueSync {
                let realm = try engineRealm()
                realm.refresh()
                try FileManager.default.createDirectory(at: backup.deletingLastPathComponent(),
                                                        withIntermediateDirectories: true)
                // With the file's key: an encrypted Realm's backup is encrypted as the file was.
                try realm.writeCopy(toFile: backup, encryptionKey: configuration.encryptionKey)
            }
            // The session loop, idle since the error, reconnects for the reset.
            state.withLock { state in
                state.fatalError = nil
                state.awaitingManualReset = false
                state.resetMode = .discardUnsyncedChanges()
                state.resetBuffer = []
            }
        }
        return SyncError(code: .clientResetError, message: frame.message + " (client reset mode .manual: back up and "
            + "reset with SyncSession.immediatelyHandleError(clientResetInfo()!.1, syncManager:).)",
            serverCode: frame.code, isFatal: true, actionToken: token)
    }

    /// Where a manual reset backs the file up: `recovered-realms/` beside it, as Realm does.
    static func backupURL(for file: URL?) -> URL {
        let folder = (file?.deletingLastPathComponent() ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("recovered-realms")
        let stamp = Int(Date().timeIntervalSince1970 * 1000)
        let name = file?.deletingPathExtension().lastPathComponent ?? "realm"
        return folder.appendingPathComponent("recovered_realm-\(name)-\(stamp)-\(UUID().uuidString.prefix(8)).realm")
    }

    /// Runs `body` on the queue, waiting (from any thread but the queue itself).
    func onQueueSync<T>(_ body: () throws -> T) throws -> T {
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) { return try body() }
        return try queue.sync(execute: body)
    }

    /// A download while a reset waits for the server's state: collected until the bootstrap
    /// completes, then the reset is carried out. True when the frame was taken.
    func collectForReset(_ download: SyncMessage.Download) async throws -> Bool {
        let (mode, collected) = state.withLock { state -> (ClientResetMode?, [ServerChange]) in
            guard state.resetMode != nil else { return (nil, []) }
            state.resetBuffer += download.changes
            return (state.resetMode, state.resetBuffer)
        }
        guard let mode else { return false }
        guard let completed = download.completesSubscriptionVersion else { return true }
        let epoch = state.withLock { $0.resetEpoch }
        do {
            try await onQueue { [self] in
                try performClientReset(collected, serverVersion: download.serverVersion,
                                       completedSubscriptions: completed, epoch: epoch, mode: mode)
            }
        } catch {
            // Recovery failed and the mode does not discard: manual, as Realm falls back.
            let failure = SyncError(code: .clientResetError, message: "The client reset could not recover the "
                + "unsynced changes: \(error). The file is unchanged; the session stopped.", isFatal: true)
            state.withLock { $0.fatalError = failure; $0.resetMode = nil; $0.resetBuffer = [] }
            user.app.syncManager.errorHandler?(failure, session)
            failWaiters(failure)
            throw failure
        }
        state.withLock { $0.resetMode = nil; $0.resetBuffer = [] }
        return true
    }

    /// Replaces the file's synced state with the server's, then recovers or discards.
    func performClientReset(_ changes: [ServerChange], serverVersion: Int64, completedSubscriptions: Int64,
                            epoch: String?, mode: ClientResetMode) throws {
        let realm = try engineRealm()
        realm.refresh()
        let before = realm.freeze()
        mode.beforeReset?(before)
        let unsynced = try unsyncedObjects(realm)
        switch mode {
        case .recoverUnsyncedChanges:
            try resetFile(realm, changes, serverVersion, completedSubscriptions, epoch, recovering: unsynced)
        case .recoverOrDiscardUnsyncedChanges:
            do {
                try resetFile(realm, changes, serverVersion, completedSubscriptions, epoch, recovering: unsynced)
            } catch {
                logger.notice("client reset: recovery failed (\(error)); discarding the unsynced changes")
                try resetFile(realm, changes, serverVersion, completedSubscriptions, epoch, recovering: nil)
            }
        case .discardUnsyncedChanges, .manual:
            try resetFile(realm, changes, serverVersion, completedSubscriptions, epoch, recovering: nil)
        }
        mode.afterReset?(before, realm)
    }

    /// The objects with changes in the outbox, in the order first changed.
    func unsyncedObjects(_ realm: Realm) throws -> [UnsyncedObject] {
        var order = [String]()
        var objects = [String: UnsyncedObject]()
        for entry in realm.syncStoreEntries(prefix: SyncStoreLayout.outboxPrefix) {
            guard let change = SyncStoreLayout.outboxChange(entry.value) else { continue }
            let id = change.className + "\u{0}" + change.primaryKey.jsonText
            var object = objects[id] ?? UnsyncedObject(className: change.className, primaryKey: change.primaryKey)
            if objects[id] == nil { order.append(id) }
            if change.kind == .insert { object.inserted = true }
            for field in change.fields {
                object.fields.insert(String(field.name.split(separator: ".").first ?? Substring(field.name)))
            }
            objects[id] = object
        }
        return try order.compactMap { id -> UnsyncedObject? in
            guard var object = objects[id] else { return nil }
            if let type = objectType(object.className), let schema = realm.schema[object.className],
               let local = find(realm, type, schema, object.primaryKey) {
                // With the links the file cannot show put back (as its last upload had them): the
                // reset's state may hold their targets, and recovery then sets them instead of
                // uploading their absence, as Realm's recovery copies unresolved links with the rest.
                var document = try Self.document(of: local)
                if let key = realm.syncObjectKey(local),
                   let mirror = SyncStoreLayout.mirrorEntry(realm, SyncStoreLayout.mirror(object.className, key)) {
                    document = keepingUnresolvedLinks(document, mirror: mirror.document, of: local, realm: realm)
                }
                object.document = document
            }
            return object
        }
    }

    /// One transaction: the server's objects in, every other synced object out, outbox and
    /// mirror rebuilt, the server's identity and versions stored; then (with `recovering`)
    /// the unsynced changes applied as local changes, queued for upload by the commit.
    private func resetFile(_ realm: Realm, _ changes: [ServerChange], _ serverVersion: Int64, _ completed: Int64,
                           _ epoch: String?, recovering: [UnsyncedObject]?) throws {
        realm.beginWrite()
        realm.isApplyingSyncDownload = true
        defer { realm.isApplyingSyncDownload = false }
        do {
            for prefix in [SyncStoreLayout.outboxPrefix, SyncStoreLayout.mirrorPrefix, SyncStoreLayout.unresolvedPrefix,
                           SyncStoreLayout.unresolvedBySourcePrefix] {
                for entry in realm.syncStoreEntries(prefix: prefix) { try realm.syncStoreDelete(entry.key) }
            }
            try observeTimestamps(of: SyncMessage.Download(changes: changes, serverVersion: serverVersion), in: realm)
            var kept = Set<String>()
            // Links are left out when their target is missing (`missingTargets`), as downloads do.
            let decoder = ExtendedJSONBatchDecoder(realm: realm, skipsMissingLinks: true)
            var second = [(className: String, type: Object.Type, schema: ObjectSchema, document: [String: Any])]()
            for change in changes {
                guard let type = objectType(change.className), let schema = realm.schema[change.className],
                      let document = change.document?.foundationObject as? [String: Any],
                      let values = try? decoder.values(document, schema: schema) else { continue }
                let object = Self.upsert(realm, type, values)
                kept.insert(change.className + "\u{0}" + change.primaryKey.jsonText)
                if let key = realm.syncObjectKey(object), let documentValue = change.document?.objectValue {
                    try SyncStoreLayout.putMirror(realm, SyncStoreLayout.mirror(change.className, key),
                                                MirrorEntry(primaryKey: change.primaryKey, document: documentValue))
                }
                if schema.properties.contains(where: { $0.type == .object }) {
                    second.append((change.className, type, schema, document))
                }
            }
            // Every object of the server's state is in: the links still missing are unresolved
            // (outside the subscriptions), and recorded as a download records them, so a target
            // that arrives later (or is created here) sets the link instead of the next local
            // edit clearing it on the server.
            for object in second {
                guard let values = try? decoder.values(object.document, schema: object.schema) else { continue }
                let missing = decoder.missingTargets
                let written = Self.upsert(realm, object.type, values)
                if !missing.isEmpty, let key = realm.syncObjectKey(written) {
                    try recordUnresolvedLinks(missing, from: object.className, key, in: realm)
                }
            }
            try removeObjects(notIn: kept, realm)
            try SyncStoreLayout.putText(realm, SyncStoreLayout.lastServerVersion, String(serverVersion))
            try SyncStoreLayout.putText(realm, SyncStoreLayout.completedSubscriptions, String(completed))
            let stored = storedSubscriptions(realm)
            if stored.version == completed { try SyncStoreLayout.putJSON(realm, SyncStoreLayout.activeSubscriptions, stored) }
            if let epoch { try SyncStoreLayout.putText(realm, SyncStoreLayout.serverEpoch, epoch) }
            if let recovering {
                // From here the changes are the app's own: the commit queues them for upload
                // (diffs against the mirror, which now holds the server's documents).
                realm.isApplyingSyncDownload = false
                try recover(recovering, realm)
            }
            try realm.commitWrite()
        } catch {
            if realm.isInWriteTransaction { realm.cancelWrite() }
            throw error
        }
    }

    /// Deletes the synced objects the server did not send.
    private func removeObjects(notIn kept: Set<String>, _ realm: Realm) throws {
        for type in configuration.objectTypes ?? [] {
            guard let type = type as? Object.Type, let schema = realm.schema[type.className()], !schema.isEmbedded,
                  let keyProperty = schema.primaryKeyProperty else { continue }
            var doomed = [Object]()
            for object in Self.all(realm, type) {
                let key = try Self.document(of: object)[keyProperty.columnName] ?? .null
                if !kept.contains(type.className() + "\u{0}" + key.jsonText) { doomed.append(object) }
            }
            for object in doomed { realm.delete(object) }
        }
    }

    private static func all<T: Object>(_ realm: Realm, _ type: T.Type) -> [Object] { Array(realm.objects(type)) }

    /// Realm's recovery rules, on the server's state: an object created locally is created
    /// (with its local values); an object deleted locally is deleted; a field changed locally
    /// takes its local value on the server's object; updates of an object the server no
    /// longer has are dropped (the delete wins).
    private func recover(_ objects: [UnsyncedObject], _ realm: Realm) throws {
        for object in objects {
            guard let type = objectType(object.className), let schema = realm.schema[object.className],
                  let keyProperty = schema.primaryKeyProperty else { continue }
            let existing = find(realm, type, schema, object.primaryKey)
            guard let document = object.document else {
                // The row is new in this transaction (the reset made it from the server's
                // state), so the commit would see nothing to upload: the delete is queued here.
                if let existing {
                    if let key = realm.syncObjectKey(existing) {
                        try realm.syncStoreDelete(SyncStoreLayout.mirror(object.className, key))
                        try dropUnresolvedLinks(from: object.className, key, in: realm)
                    }
                    realm.delete(existing)
                    try queueDelete(realm, className: object.className, primaryKey: object.primaryKey)
                }
                continue
            }
            let recovered: [String: JSONValue]
            if object.inserted {
                recovered = document
            } else if existing != nil {
                recovered = document.filter { object.fields.contains($0.key) || $0.key == keyProperty.columnName }
            } else {
                continue
            }
            guard let values = JSONValue.object(recovered).foundationObject as? [String: Any] else { continue }
            _ = Self.upsert(realm, type, try ExtendedJSON.syncValues(values, schema: schema, realm: realm))
        }
    }

    /// Keeps the server's identity the file syncs with (the first welcome, or after a server
    /// upgrade that introduced identities).
    func storeServerEpoch(_ epoch: String) throws {
        let realm = try engineRealm()
        realm.refresh()
        guard SyncStoreLayout.text(realm, SyncStoreLayout.serverEpoch) != epoch else { return }
        try realm.write {
            realm.isApplyingSyncDownload = true
            try SyncStoreLayout.putText(realm, SyncStoreLayout.serverEpoch, epoch)
        }
        realm.isApplyingSyncDownload = false
    }

    /// Queues the delete of an object in the outbox of the current write transaction, with
    /// the file's next timestamp.
    private func queueDelete(_ realm: Realm, className: String, primaryKey: JSONValue) throws {
        let clientId = try ensureClientId(realm)
        var clock = HybridLogicalClock(clientId: clientId,
                                       last: SyncStoreLayout.text(realm, SyncStoreLayout.clock).flatMap(HybridTimestamp.init))
        let stamp = clock.tick(now: user.app.wallClock()).description
        let sequence = SyncStoreLayout.text(realm, SyncStoreLayout.nextSequence).flatMap(UInt64.init) ?? 1
        try SyncStoreLayout.putOutbox(realm, sequence, SyncObjectChange(className: className, primaryKey: primaryKey,
                                                                        kind: .delete, timestamp: stamp, fields: []))
        try SyncStoreLayout.putText(realm, SyncStoreLayout.nextSequence, String(sequence + 1))
        try SyncStoreLayout.putText(realm, SyncStoreLayout.clock, clock.last.description)
    }
}

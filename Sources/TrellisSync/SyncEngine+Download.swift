import Foundation
import Synchronization
import Trellis
import TrellisSyncProtocol

/// Downloads: applied in ordinary write transactions (so notifications, LinkingObjects and
/// embedded objects behave as for local writes), not queued for upload.
extension SyncEngine {
    /// Applies one download frame; objects with local changes not yet acknowledged are left
    /// alone (the server sends them again once it merged those changes). `documentText`, the
    /// frame's text of each change's document, becomes the mirror entries' text as it is.
    func apply(_ download: SyncMessage.Download, documentText: FrameDocumentText? = nil) throws {
        let realm = try engineRealm()
        realm.refresh()
        let pending = pendingObjects(realm)
        realm.beginWrite()
        realm.isApplyingSyncDownload = true
        defer { realm.isApplyingSyncDownload = false }
        do {
            try observeTimestamps(of: download, in: realm)
            // Looked up once per download, not per object or per link.
            let writer = DocumentRowWriter(realm: realm)
            let decoder = writer.decoder
            var classes = [String: (type: Object.Type, schema: ObjectSchema)?]()
            var skipped = [SyncError]()
            // The objects this frame created, which links downloaded before may be waiting for.
            var arrived = [ArrivedObject]()
            let keepsText = !SyncDownloadMeasurement.writesMirrorFromDocuments.load(ordering: .relaxed)
            for (index, change) in download.changes.enumerated() {
                if pending.count > 0, pending.contains(change.className + "\u{0}" + change.primaryKey.jsonText) { continue }
                if classes[change.className] == nil {
                    classes[change.className] = objectType(change.className).flatMap { type in
                        decoder.objectSchema(change.className).map { (type, $0) }
                    }
                }
                guard let (type, schema) = classes[change.className] ?? nil else { continue }
                if case .object(let fields)? = change.document {
                    do {
                        if let created = try write(fields, of: change.className, primaryKey: change.primaryKey, type, schema,
                                                   text: keepsText ? documentText?.change(at: index) : nil,
                                                   writer: writer, in: realm)
                        {
                            arrived.append(created)
                        }
                    } catch let unusable as UnusableDocument {
                        // A document the model cannot hold is skipped and reported; the rest applies.
                        skipped.append(Self.unusableDocument(change, unusable.error))
                    }
                } else if let object = find(realm, type, schema, change.primaryKey, decoder: decoder) {
                    try remove(realm, object)
                }
            }
            // Links to objects that were not in the file when their owner came: in this frame, an
            // earlier one or another session's download.
            try resolveLinks(to: arrived, pending: pending, writer: writer, in: realm)
            if download.serverVersion > 0 {
                try SyncStoreLayout.putText(realm, SyncStoreLayout.lastServerVersion, String(download.serverVersion))
            }
            if let completed = download.completesSubscriptionVersion {
                try SyncStoreLayout.putText(realm, SyncStoreLayout.completedSubscriptions, String(completed))
                let stored = storedSubscriptions(realm)
                if stored.version == completed { try SyncStoreLayout.putJSON(realm, SyncStoreLayout.activeSubscriptions, stored) }
                try removeUnsubscribed(realm, pending: pending)
            }
            try realm.commitWrite()
            for error in skipped { user.app.syncManager.errorHandler?(error, session) }
        } catch {
            if realm.isInWriteTransaction { realm.cancelWrite() }
            throw error
        }
    }

    /// Writes one downloaded document (creating or updating its object) and its mirror, and
    /// records the links it has to objects the file does not have (instead of those it had).
    /// Returns the object when it was created. `text`, when given, is the frame's text of the
    /// document and its primary key, stored as the mirror entry's.
    ///
    /// - Throws: ``UnusableDocument`` for a document the model cannot hold (nothing is written).
    func write(_ fields: [String: JSONValue], of className: String, primaryKey: JSONValue, _ type: Object.Type,
               _ schema: ObjectSchema, text: FrameDocumentText.Change? = nil, writer: DocumentRowWriter,
               in realm: Realm) throws -> ArrivedObject?
    {
        // Straight into the rows; an object that holds the document already is not written.
        if !writer.leavesPropertiesToWrappers(className), !DocumentRowWriter.measuresCreateInstead.load(ordering: .relaxed) {
            let outcome: DocumentRowWriter.Outcome?
            do {
                outcome = try writer.write(fields, className: className)
            } catch {
                throw UnusableDocument(error: error)
            }
            if let outcome {
                try SyncStoreLayout.putMirror(realm, SyncStoreLayout.mirror(className, outcome.objectKey),
                                              primaryKey: primaryKey, document: fields, text: text)
                if !outcome.created { try dropUnresolvedLinks(from: className, outcome.objectKey, in: realm) }
                try recordUnresolvedLinks(writer.missingTargets, from: className, outcome.objectKey, in: realm)
                return outcome.created
                    ? ArrivedObject(identity: outcome.identity, className: className, objectKey: outcome.objectKey) : nil
            }
        }
        // Classes with properties of other kinds, and documents without every property: through
        // `create(_:value:update:)`.
        let decoder = writer.decoder
        let existing = find(realm, type, schema, primaryKey, decoder: decoder)
        // An object that already reads as the document (this device's own upload coming back
        // merged and unchanged) is not written again: an upsert would set nothing (`.modified`)
        // but costs a conversion and a comparison per property.
        if let existing, let key = realm.syncObjectKey(existing), (try? Self.document(of: existing)) == fields {
            try SyncStoreLayout.putMirror(realm, SyncStoreLayout.mirror(className, key), primaryKey: primaryKey,
                                          document: fields, text: text)
            // Every link of the document is set (a missing target would leave it out).
            try dropUnresolvedLinks(from: className, key, in: realm)
            return nil
        }
        let values: [String: Any]
        do {
            values = try decoder.values(fields.mapValues(\.decodableObject), schema: schema)
        } catch {
            throw UnusableDocument(error: error)
        }
        let missing = decoder.missingTargets
        let object = Self.upsert(realm, type, values)
        guard let key = realm.syncObjectKey(object) else { return nil }
        try SyncStoreLayout.putMirror(realm, SyncStoreLayout.mirror(className, key), primaryKey: primaryKey,
                                      document: fields, text: text)
        if existing != nil { try dropUnresolvedLinks(from: className, key, in: realm) }
        try recordUnresolvedLinks(missing, from: className, key, in: realm)
        guard existing == nil, let keyName = schema.primaryKeyProperty?.name, let keyValue = values[keyName] else {
            return nil
        }
        return ArrivedObject(identity: ExtendedJSONBatchDecoder.linkTargetIdentity(className: className, primaryKey: keyValue),
                             className: className, objectKey: key)
    }

    /// The error reported for a downloaded document that does not fit the model.
    private static func unusableDocument(_ change: ServerChange, _ error: any Error) -> SyncError {
        SyncError(code: .clientSessionError, message: "The server sent '\(change.className)' \(change.primaryKey.jsonText), "
            + "which does not fit the model: \(error). It was skipped and the rest of the download applied; fix the "
            + "document on the server (it keeps syncing when it is changed).", isFatal: false)
    }

    /// Moves the file's clock past every timestamp of the download (also of objects left
    /// alone for now), so the next local edit is later than every edit this device has seen,
    /// whatever its wall clock says.
    func observeTimestamps(of download: SyncMessage.Download, in realm: Realm) throws {
        let stamps = download.changes.compactMap(\.timestamp)
        guard !stamps.isEmpty else { return }
        let clientId = try ensureClientId(realm)
        let stored = SyncStoreLayout.text(realm, SyncStoreLayout.clock).flatMap(HybridTimestamp.init)
        var clock = HybridLogicalClock(clientId: clientId, last: stored)
        for stamp in stamps { clock.observe(stamp) }
        if clock.last != stored { try SyncStoreLayout.putText(realm, SyncStoreLayout.clock, clock.last.description) }
    }

    static func upsert<T: Object>(_ realm: Realm, _ type: T.Type, _ values: [String: Any]) -> T {
        realm.createWritingDocument(type, value: values)
    }

    func objectType(_ className: String) -> Object.Type? {
        configuration.objectTypes?.first { $0.className() == className } as? Object.Type
    }

    func find(_ realm: Realm, _ type: Object.Type, _ schema: ObjectSchema, _ key: JSONValue,
              decoder: ExtendedJSONBatchDecoder? = nil) -> Object? {
        guard let property = schema.primaryKeyProperty,
              let value = try? (decoder ?? ExtendedJSONBatchDecoder(realm: realm, skipsMissingLinks: true))
                .values([property.name: key.decodableObject], schema: schema)[property.name]
        else { return nil }
        return Self.lookUp(realm, type, value)
    }

    private static func lookUp<T: Object>(_ realm: Realm, _ type: T.Type, _ key: Any) -> T? {
        realm.object(ofType: type, forPrimaryKey: key)
    }

    /// Removes an object locally (a delete from the server, or it left the subscriptions).
    private func remove(_ realm: Realm, _ object: Object) throws {
        if let key = realm.syncObjectKey(object) {
            try realm.syncStoreDelete(SyncStoreLayout.mirror(object.objectSchema.className, key))
            try dropUnresolvedLinks(from: object.objectSchema.className, key, in: realm)
        }
        realm.delete(object)
    }

    /// After a subscription set is complete: objects no subscription selects are removed.
    private func removeUnsubscribed(_ realm: Realm, pending: PendingObjects) throws {
        let subscriptions = storedSubscriptions(realm).subscriptions
        for type in configuration.objectTypes ?? [] {
            guard let type = type as? Object.Type, let schema = realm.schema[type.className()], !schema.isEmbedded,
                  let keyProperty = schema.primaryKeyProperty else { continue }
            let queries = subscriptions.filter { $0.className == type.className() }.map(\.query)
            let doomed = try Self.outside(realm, type, queries: queries)
            for object in doomed {
                let key = JSONValue(foundationObject: (try? ExtendedJSON.document(for: object))
                    .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }?[keyProperty.columnName] ?? NSNull())
                if pending.contains(type.className() + "\u{0}" + key.jsonText) { continue }
                try remove(realm, object)
            }
        }
    }

    private static func outside<T: Object>(_ realm: Realm, _ type: T.Type, queries: [String]) throws -> [T] {
        let all = realm.objects(type)
        if queries.isEmpty { return Array(all) }
        // A query the models cannot run (a file whose set was stored before queries were
        // checked against the models) removes nothing, rather than stopping the download.
        guard let kept = try? all.filter(validating: queries.map { "(\($0))" }.joined(separator: " || ")) else {
            return []
        }
        var keep = Set<UInt64>()
        for object in kept { if let key = realm.syncObjectKey(object) { keep.insert(key) } }
        return all.filter { realm.syncObjectKey($0).map { !keep.contains($0) } ?? false }
    }

    /// The subscription set stored in the file.
    func storedSubscriptions(_ realm: Realm) -> SubscriptionSet {
        SyncStoreLayout.json(realm, SyncStoreLayout.subscriptions, as: SubscriptionSet.self)
            ?? SubscriptionSet(version: 0, subscriptions: [])
    }

    /// The stored set as the server gets it: the file keeps the queries as written (they are
    /// also run here, on the models' names), the server's documents name mapped properties by
    /// their persisted names (`propertiesMapping()`), as Realm sends them.
    func subscriptionsForServer(_ realm: Realm) -> SubscriptionSet {
        var set = storedSubscriptions(realm)
        var types = [String: ObjectBase.Type]()
        for type in configuration.objectTypes ?? [] where types[type.className()] == nil { types[type.className()] = type }
        for index in set.subscriptions.indices {
            let subscription = set.subscriptions[index]
            guard let type = types[subscription.className], let query = try? SyncQuery.parse(subscription.query) else {
                continue
            }
            set.subscriptions[index].query = query.storedNames(for: type).text
        }
        return set
    }

    /// The server refused the subscription set `version`: the file goes back to the set the
    /// server still serves (the last one it completed), kept under the refused version so the
    /// set's state reads `.error` until the next update, and the next session does not send
    /// the refused queries again.
    func rollBackRefusedSubscriptions(version: Int64?, message: String) throws {
        let realm = try engineRealm()
        realm.refresh()
        let stored = storedSubscriptions(realm)
        guard version == nil || version == stored.version else { return }
        var fallback = SyncStoreLayout.json(realm, SyncStoreLayout.activeSubscriptions, as: SubscriptionSet.self)
            ?? SubscriptionSet(version: 0, subscriptions: [])
        fallback.version = stored.version
        try realm.write {
            realm.isApplyingSyncDownload = true
            try SyncStoreLayout.putJSON(realm, SyncStoreLayout.subscriptions, fallback)
            try SyncStoreLayout.putText(realm, SyncStoreLayout.refusedSubscriptions, "\(stored.version)\n\(message)")
        }
        realm.isApplyingSyncDownload = false
    }

    /// Throws when a subscription's query does not fit this file's models (an unknown class
    /// or property, a wrong type): as Realm checks a query against the local schema before
    /// the set is stored, so no set that cannot run here is ever stored or sent.
    func checkAgainstModels(_ subscription: SubscriptionSet.Subscription, _ realm: Realm) throws {
        guard let type = objectType(subscription.className) else {
            throw Realm.Error(code: .invalidQuery, message: "Cannot subscribe to '\(subscription.className)': it is not "
                + "one of this Realm's objectTypes. Add the class to the configuration's objectTypes.")
        }
        do {
            try Self.validate(realm, type, subscription.query)
        } catch let error as Realm.Error {
            throw Realm.Error(code: .invalidQuery, message: "The subscription '\(subscription.name ?? subscription.query)' "
                + "does not fit the models: \(error.message)")
        }
    }

    private static func validate<T: Object>(_ realm: Realm, _ type: T.Type, _ query: String) throws {
        _ = try realm.objects(type).filter(validating: query)
    }
}

/// A downloaded document the model cannot hold (``SyncEngine/write(_:of:primaryKey:_:_:text:writer:in:)``).
struct UnusableDocument: Error {
    let error: any Error
}

/// For measurements only (`SyncBench --mirror-written-from-documents`): downloads then write
/// their mirror entries from the parsed documents, as before session 36, instead of keeping the
/// frame's text of them.
package enum SyncDownloadMeasurement {
    package static let writesMirrorFromDocuments = Atomic<Bool>(false)
}

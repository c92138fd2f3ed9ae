import Foundation
import Trellis
import TrellisSyncProtocol

/// Local changes: queued in the commit that makes them (the core calls ``record(_:changes:)``
/// inside the write transaction), uploaded in order, dropped when acknowledged.
extension SyncEngine {
    /// Queues one commit's changes: per changed object, its difference from the mirror.
    func record(_ realm: Realm, changes: [SyncChangedObject]) throws {
        let clientId = try ensureClientId(realm)
        var clock = HybridLogicalClock(clientId: clientId,
                                       last: SyncStoreLayout.text(realm, SyncStoreLayout.clock).flatMap(HybridTimestamp.init))
        let stamp = clock.tick(now: user.app.wallClock()).description
        var sequence = SyncStoreLayout.text(realm, SyncStoreLayout.nextSequence).flatMap(UInt64.init) ?? 1
        // Links waiting for an object this write created are set first, so they are not measured as removed.
        try resolveLinks(toCreated: changes, in: realm)
        // Per class, once per commit: a new object's defaults and the embedded properties.
        var defaults = [String: [String: JSONValue]]()
        var embedded = [String: Set<String>]()
        // Documents read straight from the rows (one plan per class for the commit).
        let reader = DocumentRowReader<JSONValue>(realm: realm)
        for change in changes {
            let mirrorKey = SyncStoreLayout.mirror(change.className, change.objectKey)
            let mirror = SyncStoreLayout.mirrorEntry(realm, mirrorKey)
            let outgoing: SyncObjectChange
            if change.isDeleted {
                guard let mirror else { continue }
                outgoing = SyncObjectChange(className: change.className, primaryKey: mirror.primaryKey, kind: .delete,
                                        timestamp: stamp, fields: [])
                try realm.syncStoreDelete(mirrorKey)
                try dropUnresolvedLinks(from: change.className, change.objectKey, in: realm)
            } else {
                guard let object = realm.syncObject(className: change.className, objectKey: change.objectKey),
                      let keyProperty = object.objectSchema.primaryKeyProperty else { continue }
                var document = try reader.document(of: object)
                if let mirror {
                    document = keepingUnresolvedLinks(document, mirror: mirror.document, of: object, realm: realm)
                }
                let primaryKey = document[keyProperty.columnName] ?? .null
                if let mirror {
                    if embedded[change.className] == nil {
                        embedded[change.className] = Self.embeddedProperties(of: object.objectSchema, in: realm)
                    }
                    let fields = Self.differences(from: mirror.document, to: document, schema: object.objectSchema,
                                                  embedded: embedded[change.className] ?? [])
                    if fields.isEmpty { continue }
                    outgoing = SyncObjectChange(className: change.className, primaryKey: primaryKey, kind: .update,
                                            timestamp: stamp, fields: fields)
                } else {
                    let fields = document.sorted { $0.key < $1.key }.map { FieldChange.set(name: $0.key, value: $0.value) }
                    if defaults[change.className] == nil { defaults[change.className] = Self.defaultValues(of: object) }
                    let unset = (defaults[change.className] ?? [:]).filter { document[$0.key] == $0.value }.map(\.key)
                    outgoing = SyncObjectChange(className: change.className, primaryKey: primaryKey, kind: .insert,
                                            timestamp: stamp, fields: fields,
                                            defaultFields: unset.isEmpty ? nil : unset.sorted())
                }
                try SyncStoreLayout.putMirror(realm, mirrorKey, MirrorEntry(primaryKey: primaryKey, document: document))
            }
            try SyncStoreLayout.putOutbox(realm, sequence, outgoing)
            sequence += 1
        }
        try SyncStoreLayout.putText(realm, SyncStoreLayout.nextSequence, String(sequence))
        try SyncStoreLayout.putText(realm, SyncStoreLayout.clock, clock.last.description)
    }

    /// The client id of the file, made in this transaction when it has none.
    func ensureClientId(_ realm: Realm) throws -> String {
        if let id = SyncStoreLayout.text(realm, SyncStoreLayout.clientId) { return id }
        let id = UUID().uuidString.lowercased()
        try SyncStoreLayout.putText(realm, SyncStoreLayout.clientId, id)
        return id
    }

    /// An object's canonical Extended JSON document (the values of its JSON text, made
    /// without the text).
    static func document(of object: ObjectBase) throws -> [String: JSONValue] {
        try ExtendedJSON.documentValue(for: object).mapValues(JSONValue.init(extendedJSON:))
    }

    /// ``document(of:)`` through JSON text, as it was made before session 26 (what the
    /// direct conversion is checked against).
    static func documentThroughText(of object: ObjectBase) throws -> [String: JSONValue] {
        let data = try ExtendedJSON.document(for: object)
        return try JSONValue(jsonText: String(decoding: data, as: UTF8.self)).objectValue ?? [:]
    }

    /// The document of a new object of the same class as `object`, before the app sets
    /// anything: the model's defaults (an insert marks the values equal to them as defaults,
    /// which lose to values set explicitly elsewhere). Made once per class per commit (not per
    /// object): a default that differs per object (a generated id, the time) matches an object's
    /// value only by chance either way.
    static func defaultValues(of object: ObjectBase) -> [String: JSONValue] {
        (try? document(of: type(of: object).init())) ?? [:]
    }

    /// The persisted names of the properties of `schema` that hold one embedded object.
    static func embeddedProperties(of schema: ObjectSchema, in realm: Realm) -> Set<String> {
        var names = Set<String>()
        for property in schema.properties where property.type == .object && !property.isArray && !property.isSet
            && !property.isMap
        {
            if let target = property.objectClassName, realm.schema[target]?.isEmbedded == true {
                names.insert(property.columnName)
            }
        }
        return names
    }

    /// The property changes from `old` to `new`: lists as (base, value), sets as additions and
    /// removals, maps per key, an embedded object that stays per field (`address.city`),
    /// everything else as a new value.
    static func differences(from old: [String: JSONValue], to new: [String: JSONValue], schema: ObjectSchema,
                            embedded: Set<String> = []) -> [FieldChange]
    {
        var fields = [FieldChange]()
        for property in schema.properties where property.type != .linkingObjects {
            let name = property.columnName
            let before = old[name] ?? .null
            let after = new[name] ?? .null
            if before == after { continue }
            if embedded.contains(name), let oldFields = before.objectValue, let newFields = after.objectValue {
                for key in Set(oldFields.keys).union(newFields.keys).sorted() where oldFields[key] != newFields[key] {
                    fields.append(.set(name: name + "." + key, value: newFields[key] ?? .null))
                }
            } else if property.isArray {
                fields.append(.list(name: name, base: before.arrayValue ?? [], value: after.arrayValue ?? []))
            } else if property.isSet {
                let oldItems = before.arrayValue ?? [], newItems = after.arrayValue ?? []
                fields.append(.setDiff(name: name, added: newItems.filter { !oldItems.contains($0) },
                                       removed: oldItems.filter { !newItems.contains($0) }))
            } else if property.isMap {
                let oldEntries = before.objectValue ?? [:], newEntries = after.objectValue ?? [:]
                var values = [String: JSONValue?]()
                for (key, value) in newEntries where oldEntries[key] != value { values[key] = .some(value) }
                for key in oldEntries.keys where newEntries[key] == nil { values[key] = .some(nil) }
                fields.append(.map(name: name, values: values))
            } else {
                fields.append(.set(name: name, value: after))
            }
        }
        return fields
    }

    /// The next upload: the oldest outbox entries after `sent` (the last entry already sent in
    /// this session), at most `limit` of them and about `maxBytes` (servers read messages of
    /// 16 MiB by default) (nil when there are none).
    func nextUpload(after sent: Int64 = 0, limit: Int = 500, maxBytes: Int = 4 << 20) throws -> SyncMessage.Upload? {
        // During a client reset nothing is uploaded: the outbox is recovered or discarded first.
        if state.withLock({ $0.resetMode != nil }) { return nil }
        let realm = try engineRealm()
        realm.refresh()
        var changes = [SyncObjectChange]()
        var first: UInt64 = 0
        var last: UInt64 = 0
        var bytes = 0
        // Only the entries sent are read: the outbox may hold many more.
        let start = sent > 0 ? SyncStoreLayout.outbox(UInt64(sent) + 1) : nil
        realm.syncStoreForEach(prefix: SyncStoreLayout.outboxPrefix, from: start) { key, value in
            let sequence = SyncStoreLayout.sequence(ofOutbox: Array(key))
            // An upload is a run of consecutive entries (`firstChangeId…uploadId`): a gap ends it.
            if !changes.isEmpty, sequence != last + 1 { return false }
            guard let change = SyncStoreLayout.outboxChange(value) else { return true }
            if !changes.isEmpty, bytes + value.count > maxBytes { return false }
            bytes += value.count
            changes.append(change)
            if first == 0 { first = sequence }
            last = sequence
            return changes.count < limit
        }
        return changes.isEmpty ? nil : SyncMessage.Upload(uploadId: Int64(last), firstChangeId: Int64(first), changes: changes)
    }

    /// The newest outbox entry's number (0 when empty).
    func newestQueuedSequence() throws -> Int64 {
        let realm = try engineRealm()
        realm.refresh()
        return Int64(pendingObjects(realm).newest)
    }

    /// Drops acknowledged entries. Returns how many remain.
    func dropAcknowledged(upTo uploadId: Int64) throws -> Int {
        let realm = try engineRealm()
        realm.refresh()
        realm.beginWrite()
        realm.isApplyingSyncDownload = true
        defer { realm.isApplyingSyncDownload = false }
        do {
            // Entries are in upload order: the acknowledged ones come first, and only they are read.
            var acknowledged = [[UInt8]]()
            realm.syncStoreForEach(prefix: SyncStoreLayout.outboxPrefix) { key, _ in
                guard Int64(SyncStoreLayout.sequence(ofOutbox: Array(key))) <= uploadId else { return false }
                acknowledged.append(Array(key))
                return true
            }
            for key in acknowledged { try realm.syncStoreDelete(key) }
            try realm.commitWrite()
        } catch {
            realm.cancelWrite()
            throw error
        }
        return pendingObjects(realm).count
    }

    /// The objects with changes still in the outbox (`class\0primary key`): downloads leave
    /// them alone until the server has merged those changes and sends the result back. Reads
    /// only the entries queued since the last call (``PendingObjects``).
    func pendingObjects(_ realm: Realm) -> PendingObjects {
        var oldest: UInt64?
        realm.syncStoreForEach(prefix: SyncStoreLayout.outboxPrefix) { key, _ in
            oldest = SyncStoreLayout.sequence(ofOutbox: Array(key))
            return false
        }
        outboxObjects.update(oldest: oldest) { start, body in
            realm.syncStoreForEach(prefix: SyncStoreLayout.outboxPrefix, from: SyncStoreLayout.outbox(start)) { key, value in
                body(SyncStoreLayout.sequence(ofOutbox: Array(key)), SyncStoreLayout.outboxObject(value))
            }
        }
        return outboxObjects
    }
}

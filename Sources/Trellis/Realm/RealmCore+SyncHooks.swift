import Foundation

// Hooks for the TrellisSync client, at `package` level: the core keeps no networking, but a
// synced Realm must queue each local change in the same LMDB write transaction as the change
// (so it survives a crash), and apply downloaded changes as ordinary write transactions.

/// What a synced Realm calls inside every local write transaction, just before it commits.
package protocol SyncCommitHook: AnyObject, Sendable {
    /// Queues `changes` for upload (through ``Realm/syncStorePut(_:_:)``, in the same
    /// transaction). Throwing rolls the whole write transaction back.
    func realmWillCommit(_ realm: Realm, changes: [SyncChangedObject]) throws
    /// A local write transaction with changes committed (time to upload).
    func realmDidCommit(_ configuration: Realm.Configuration)
    /// A Realm of the synced file was opened (time to start the session).
    func realmDidOpen(_ configuration: Realm.Configuration)
    /// ``Realm/asyncOpen(configuration:callbackQueue:callback:)`` of a synced file: starts the
    /// session and calls `completion` once everything the server has for the file is applied
    /// (or with the error that stopped the session).
    func downloadBeforeOpen(_ configuration: Realm.Configuration,
                            completion: @escaping @Sendable ((any Error)?) -> Void)
}

/// A top-level object a write transaction inserted, changed or deleted (a change to an embedded
/// object is reported as a change of the object that owns it).
package struct SyncChangedObject: Hashable, Sendable {
    package let className: String
    package let objectKey: UInt64
    /// The row is gone at the end of the transaction.
    package let isDeleted: Bool
}

/// A collection of links emptied by the app (`removeAll()`, an assignment, or `add(_:update: .all)`
/// of an existing object, which replaces its collections whole) in a write transaction of a synced
/// Realm: TrellisSync removes the elements whose targets the file does not have too, as Realm's
/// clear removes unresolved links, which a list or set hides and cannot remove one by one. Also a
/// to-one link set under `update: .all`, and a single embedded object replaced that way.
struct SyncClearedCollection: Hashable {
    let objectKey: ObjectKey
    let className: String
    /// The persisted name (`propertiesMapping()`), as the sync documents name it.
    let property: String
}

extension RealmCore {
    /// Notes that the app emptied the collection at `location` (an object's list, set or map of
    /// links; an embedded object's too, noted under the embedded object's key), and marks its
    /// object changed even when it showed no element, so the sync hook sees the clear (an
    /// embedded object's change is its top-level owner's). Nothing for a download or an
    /// unsynced Realm, nor within `create(_:value:update: .modified)`: it sets a collection by
    /// difference, as realm-core's `List::assign` does under a diffing policy, which keeps
    /// unresolved links (TrellisSync's client-reset recovery writes that way too).
    func noteSyncClear(_ location: CollectionLocation) {
        noteSyncReplacement(location.table, location.key, location.field)
    }

    /// Notes that the app set the link property `field` of an object whole, as ``noteSyncClear(_:)``
    /// notes a collection emptied: also a to-one link set under `update: .all` (realm-core sets
    /// it, null included, which replaces an unresolved link) and a collection of embedded
    /// objects replaced (new objects: the old ones' unresolved links go with them).
    func noteSyncReplacement(_ table: Table, _ key: ObjectKey, _ field: FieldInfo) {
        guard configuration.syncHook != nil, !isApplyingSyncDownload, propertyUpdatePolicy != .modified,
              field.isLink else { return }
        syncClearedCollections.insert(SyncClearedCollection(objectKey: key, className: table.info.className,
                                                            property: field.columnName))
        recordedChanges.modified(table.tableId, key, column: field.rowColumn)
    }

    /// Whether a collection assigned to an existing object (`create(_:value:update:)`) is set
    /// by difference (see ``AddSession/diffsCollections``).
    var diffsAssignedCollections: Bool { propertyUpdatePolicy == .modified && !assignsCollectionsWhole }

    /// Calls the configuration's sync hook with what this write transaction changed, unless
    /// the transaction applies downloaded changes.
    func recordSyncChanges() throws {
        guard let hook = configuration.syncHook, !isApplyingSyncDownload, !recordedChanges.isEmpty else { return }
        let changes = syncChangedObjects()
        if changes.isEmpty { return }
        try hook.realmWillCommit(Realm(core: self), changes: changes)
        committedSyncChanges = true
    }

    /// Tells the sync hook that changes it queued are committed.
    func announceSyncCommit() {
        guard committedSyncChanges else { return }
        committedSyncChanges = false
        configuration.syncHook?.realmDidCommit(configuration)
    }

    /// The top-level objects behind the recorded changes, in a stable order.
    private func syncChangedObjects() -> [SyncChangedObject] {
        var seen = Set<SyncChangedObject>()
        var out = [SyncChangedObject]()
        func note(_ table: Table, _ key: ObjectKey, deleted: Bool) {
            guard let top = topLevelOwner(table, key, deleted: deleted) else { return }
            let change = SyncChangedObject(className: top.table.info.className, objectKey: top.key,
                                           isDeleted: top.deleted)
            if seen.insert(change).inserted { out.append(change) }
        }
        for (tableId, record) in recordedChanges.records.sorted {
            guard let table = table(id: tableId) else { continue }
            for range in record.insertedRanges {
                for key in range where !record.deletedNew.contains(key) { note(table, key, deleted: false) }
            }
            for key in record.modifications.keys.sorted() { note(table, key, deleted: false) }
            for key in record.deletions.sorted() { note(table, key, deleted: true) }
        }
        return out
    }

    /// The top-level object owning `key` (itself when `table` is not embedded): embedded
    /// objects are followed up their parent links. Nil for an embedded object already deleted
    /// (its parent's change is recorded on its own).
    private func topLevelOwner(_ table: Table, _ key: ObjectKey, deleted: Bool)
        -> (table: Table, key: ObjectKey, deleted: Bool)?
    {
        var current = (table: table, key: key)
        if !current.table.info.isEmbedded {
            return (table, key, rowView(table, key) == nil)
        }
        if deleted { return nil }
        for _ in 0..<64 {
            guard rowView(current.table, current.key) != nil,
                  let parent = backlinks(to: current.table, key: current.key).first,
                  let origin = self.table(id: parent.key.originTable)
            else { return nil }
            current = (origin, parent.key.originKey)
            if !origin.info.isEmbedded { return (origin, current.key, rowView(origin, current.key) == nil) }
        }
        return nil
    }
}

extension Realm {
    /// The name of the LMDB database holding TrellisSync's state (outbox, mirror, metadata).
    private static let syncStoreName = "sync"

    private func syncStore(create: Bool) -> DatabaseHandle? {
        (try? core.transaction.database(named: Realm.syncStoreName, create: create && core.writeTransaction != nil))
            ?? nil
    }

    /// The value stored under `key` in the sync store, as of this Realm's snapshot or write.
    package func syncStoreGet(_ key: [UInt8]) -> [UInt8]? {
        core.verifyThread()
        guard let store = syncStore(create: false) else { return nil }
        return key.withUnsafeBytes { core.transaction.get(store, key: $0).map { Array($0) } }
    }

    /// Stores `value` under `key` in the current write transaction.
    package func syncStorePut(_ key: [UInt8], _ value: [UInt8]) throws {
        core.verifyInWrite()
        guard let store = syncStore(create: true), let txn = core.writeTransaction else { return }
        _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try txn.put(store, key: k, value: v) } }
    }

    /// Removes `key` in the current write transaction.
    package func syncStoreDelete(_ key: [UInt8]) throws {
        core.verifyInWrite()
        guard let store = syncStore(create: false), let txn = core.writeTransaction else { return }
        _ = try key.withUnsafeBytes { try txn.delete(store, key: $0) }
    }

    /// Every entry whose key starts with `prefix`, in key order.
    package func syncStoreEntries(prefix: [UInt8]) -> [(key: [UInt8], value: [UInt8])] {
        core.verifyThread()
        guard let store = syncStore(create: false), let cursor = try? core.transaction.cursor(store) else { return [] }
        return cursor.entries(withPrefix: prefix).map { (Array($0.key), Array($0.value)) }
    }

    /// Calls `body` with each entry whose key starts with `prefix`, in key order, until it
    /// returns false; nothing is copied (the bytes are valid during the call only), so a walk
    /// that stops early costs only what it read. With `start`, the walk begins at the first
    /// key at or after it (give a key that starts with `prefix`).
    package func syncStoreForEach(prefix: [UInt8], from start: [UInt8]? = nil,
                                  _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool)
        rethrows
    {
        core.verifyThread()
        guard let store = syncStore(create: false), let cursor = try? core.transaction.cursor(store) else { return }
        let first = start.map { $0.lexicographicallyPrecedes(prefix) ? prefix : $0 } ?? prefix
        var entry = first.isEmpty ? cursor.first() : first.withUnsafeBytes { cursor.seek(atLeast: $0) }
        while let current = entry, current.key.starts(with: prefix) {
            if try !body(current.key, current.value) { return }
            entry = cursor.next()
        }
    }

    /// The collections of links of `className` object `objectKey` the app emptied with
    /// `removeAll()` in the current write transaction, by persisted property name.
    package func syncClearedCollections(className: String, objectKey: UInt64) -> Set<String> {
        let cleared = core.syncClearedCollections
        if cleared.isEmpty { return [] }
        return Set(cleared.lazy.filter { $0.objectKey == objectKey && $0.className == className }.map(\.property))
    }

    /// Whether the current write applies downloaded changes (then it is not queued for upload).
    package var isApplyingSyncDownload: Bool {
        get { core.isApplyingSyncDownload }
        nonmutating set { core.isApplyingSyncDownload = newValue }
    }

    /// `create(type, value: values, update: .modified)` of a document, the object's whole state
    /// (TrellisSync's downloads and client-reset recovery): the sets, maps and lists it gives
    /// are made to hold exactly its elements, where an app's `.modified` only inserts into a
    /// set and sets the given keys of a map (realm-core's diffing assign).
    package func createWritingDocument<T: Object>(_ type: T.Type, value values: [String: Any]) -> T {
        let whole = core.assignsCollectionsWhole
        core.assignsCollectionsWhole = true
        defer { core.assignsCollectionsWhole = whole }
        return create(type, value: values, update: .modified)
    }

    /// The object of class `className` stored under `objectKey`, if it exists.
    package func syncObject(className: String, objectKey: UInt64) -> Object? {
        core.verifyThread()
        guard let type = schemaTypes.first(where: { $0.className() == className }),
              let table = core.table(for: type, create: false), core.rowView(table, objectKey) != nil
        else { return nil }
        return core.accessor(type, table: table, key: objectKey) as? Object
    }

    /// The storage key of a managed object of this Realm.
    package func syncObjectKey(_ object: ObjectBase) -> UInt64? { object._managed?.key }

    /// The model classes of the configuration (a synced Realm lists them).
    package var schemaTypes: [ObjectBase.Type] { configuration.objectTypes ?? [] }
}

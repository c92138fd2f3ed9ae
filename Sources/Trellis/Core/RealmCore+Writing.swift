import Foundation

/// Row-level writes: every change to a row goes through here, so backlinks, primary-key
/// entries and embedded children stay consistent with the rows.
extension RealmCore {
    private func storageFailure(_ error: any Error) -> Never {
        if let storage = error as? StorageError, storage.kind == .mapFull {
            throwRealmException("Trellis could not write to '\(environmentPath)': this write transaction would grow "
                + "the file past the \(file.environment.mapSize) bytes mapped. Nothing of it was saved. Raise "
                + "Realm.Configuration.maximumFileSize if it is set, write less per transaction, or close the other "
                + "Realms of this file in this process so the map can grow.")
        }
        throwRealmException("Trellis could not write to '\(environmentPath)': \(error)")
    }

    /// Writes a new row (or replaces an existing one) and brings the indexes up to date.
    func writeRow(_ table: Table, key: ObjectKey, values: [_StoredValue.Payload], isNew: Bool) {
        values.withUnsafeBufferPointer { writeRow(table, key: key, values: $0, isNew: isNew) }
    }

    /// As ``writeRow(_:key:values:isNew:)``, from values the caller keeps (adding objects keeps
    /// them on the stack: no array per object).
    func writeRow(_ table: Table, key: ObjectKey, values: UnsafeBufferPointer<_StoredValue.Payload>, isNew: Bool) {
        guard let txn = writeTransaction else { throwRealmException(Realm.addRequiresWriteMessage) }
        let old = isNew ? nil : rowView(table, key)
        let oldLinks = old.map { linkTargets(of: table, row: $0) } ?? []
        if !table.indexes.isEmpty { updateIndexes(table, key: key, old: old, new: Array(values)) }
        // Used up by putRow, before anything below can encode another row.
        let bytes = RowWriter.encode(values, into: rowScratch)
        if isNew {
            recordedChanges.inserted(table.tableId, key)
        } else if let old = rowView(table, key) {  // read again: the index writes may have moved it
            for field in table.info.storedFields where field.typeInfo.collection == .none
                && !old.hasSameColumn(RowView(bytes: bytes), field.rowColumn, variableWidth: field.typeInfo.type.isVariableWidth)
            {
                recordedChanges.modified(table.tableId, key, column: field.rowColumn)
            }
        }
        putRow(bytes, table, key: key, in: txn, isNew: isNew)
        if oldLinks.isEmpty {
            addBacklinks(of: table, key: key, values: values)
        } else {
            updateLinks(table, key: key, old: oldLinks, new: linkTargets(of: table, values: values))
        }
    }

    /// ``updateLinks(_:key:old:new:)`` for a row that linked nothing before (a new row, most
    /// often): a backlink for each link in `values`, without gathering them first.
    private func addBacklinks(of table: Table, key: ObjectKey, values: UnsafeBufferPointer<_StoredValue.Payload>) {
        for field in table.toOneLinks {
            guard case .link(let targetKey) = values[field.rowColumn], let target = linkedTable(field) else { continue }
            changeBacklink(target: target, targetKey: targetKey, origin: table, column: field, originKey: key, by: 1)
        }
    }

    /// Replaces one column of an existing row.
    func updateColumn(_ table: Table, key: ObjectKey, field: FieldInfo, value: _StoredValue.Payload) {
        guard let row = rowView(table, key) else { throwRealmException("Object has been deleted or invalidated.") }
        let info = table.info
        let oldLink: LinkTarget? = field.isLink && !row.isNull(field.rowColumn)
            ? LinkTarget(field: field, key: row.slot(field.rowColumn)) : nil
        let bytes = RowWriter.rewrite(row, columnCount: info.storedFields.count,
                                      isVariableWidth: { info.storedFields[$0].typeInfo.type.isVariableWidth },
                                      replacing: field.rowColumn, with: value)
        guard let txn = writeTransaction else { throwRealmException(Realm.writeRequiredMessage) }
        // The table's indexes, not the model's flag: a table may be bound to the file's indexes.
        if !table.indexes.isEmpty, table.index(of: field) != nil {
            var values = table.info.storedFields.map { storedPayload(row, $0) }
            values[field.rowColumn] = value
            updateIndexes(table, key: key, old: row, new: values)
        }
        bytes.withUnsafeBytes { putRow($0, table, key: key, in: txn) }
        recordedChanges.modified(table.tableId, key, column: field.rowColumn)
        if field.isLink {
            var newLink: [LinkTarget] = []
            if case .link(let target) = value { newLink = [LinkTarget(field: field, key: target)] }
            updateLinks(table, key: key, old: oldLink.map { [$0] } ?? [], new: newLink)
        }
    }

    /// Stores a row's bytes under its key.
    private func putRow(_ bytes: UnsafeRawBufferPointer, _ table: Table, key: ObjectKey, in txn: Transaction,
                        isNew: Bool = false)
    {
        do {
            // New keys come from a counter that only grows, so a new row goes at the end.
            try txn.put(table.rows, integerKey: key, value: bytes, append: isNew)
            try columnLog.recordWrite(table, key: key, row: bytes, isNew: isNew, in: txn)
        } catch {
            storageFailure(error)
        }
        noteChange()
    }

    /// A link from one column of a row to a target object.
    struct LinkTarget: Equatable {
        let field: FieldInfo
        let key: ObjectKey
        static func == (a: LinkTarget, b: LinkTarget) -> Bool { a.field === b.field && a.key == b.key }
    }

    private func linkTargets(of table: Table, row: RowView) -> [LinkTarget] {
        guard !table.toOneLinks.isEmpty else { return [] }
        return table.toOneLinks.compactMap { field in
            row.isNull(field.rowColumn) ? nil : LinkTarget(field: field, key: row.slot(field.rowColumn))
        }
    }

    private func linkTargets(of table: Table, values: UnsafeBufferPointer<_StoredValue.Payload>) -> [LinkTarget] {
        guard !table.toOneLinks.isEmpty else { return [] }
        return table.toOneLinks.compactMap { field in
            guard case .link(let key) = values[field.rowColumn] else { return nil }
            return LinkTarget(field: field, key: key)
        }
    }

    /// Moves backlinks from the old targets to the new ones; embedded targets that lost their
    /// parent are deleted.
    private func updateLinks(_ table: Table, key: ObjectKey, old: [LinkTarget], new: [LinkTarget]) {
        for link in old where !new.contains(link) {
            guard let target = linkedTable(link.field) else { continue }
            changeBacklink(target: target, targetKey: link.key, origin: table, column: link.field, originKey: key, by: -1)
            if link.field.isEmbeddedLink { deleteObject(target, key: link.key) }
        }
        for link in new where !old.contains(link) {
            guard let target = linkedTable(link.field) else { continue }
            changeBacklink(target: target, targetKey: link.key, origin: table, column: link.field, originKey: key, by: 1)
        }
    }

    func linkedTable(_ field: FieldInfo) -> Table? {
        guard let type = field.typeInfo.objectType else {
            // A class known only from the file's stored schema (an import without models, or a
            // DynamicObject's class).
            return field.typeInfo.storedTargetName.flatMap {
                storedSchema?.table(named: $0) ?? dynamicTable(named: $0, create: true)
            }
        }
        return table(for: type, create: true)
    }

    /// Adds `delta` to the number of times `origin` links `target` through `column`.
    func changeBacklink(target: Table, targetKey: ObjectKey, origin: Table, column: FieldInfo, originKey: ObjectKey,
                        by delta: Int)
    {
        guard let txn = writeTransaction else { throwRealmException(Realm.writeRequiredMessage) }
        recordedChanges.modified(target.tableId, targetKey,
                                 column: ChangeSet.backlinkColumn(originTable: origin.tableId, originColumn: column.rowColumn))
        let key = BacklinkKey(targetTable: target.tableId, targetKey: targetKey, originTable: origin.tableId,
                              originColumn: UInt16(column.rowColumn), originKey: originKey)
        // What the entry's count changes by (never below zero): the stored count changes by it.
        var applied = delta
        do {
            try key.withBytes { (k) in
                if delta > 0 {
                    // Most links are new: one write that fails if the entry exists already.
                    var count = UInt32(delta)
                    let inserted = try withUnsafeBytes(of: &count) { (v) in
                        try txn.put(file.backlinks, key: k, value: v, noOverwrite: true)
                    }
                    if inserted { return }
                }
                let current = txn.get(file.backlinks, key: k).map { Int($0.load(orZeroAt: 0, as: UInt32.self)) } ?? 0
                let updated = current + delta
                applied = max(updated, 0) - current
                if updated <= 0 {
                    try txn.delete(file.backlinks, key: k)
                } else {
                    var count = UInt32(updated)
                    _ = try withUnsafeBytes(of: &count) { (v) in
                        try txn.put(file.backlinks, key: k, value: v)
                    }
                }
            }
            if applied != 0, storesBacklinkCounts {
                backlinkCountLog.record(targetTable: key.targetTable, targetKey: targetKey, originTable: key.originTable,
                                        originColumn: key.originColumn, delta: applied)
            }
        } catch {
            storageFailure(error)
        }
    }

    /// The number of links to a target from one origin table and column (its stored count), or
    /// from every origin without one (`@links.@count`): the sum of the counts of its backlink
    /// entries, read in place with a reused cursor (no entry is copied).
    func backlinkCount(to table: Table, key: ObjectKey, from origin: Table? = nil, column: Int = 0) -> Int {
        backlinkCount(to: table, key: key, from: origin, column: column, cache: &cachedCountBlock)
    }

    /// ``backlinkCount(to:key:from:column:)`` keeping the stored count block it reads in `cache`
    /// (see ``storedBacklinkCount(to:key:from:column:cache:)``).
    func backlinkCount(to table: Table, key: ObjectKey, from origin: Table?, column: Int,
                       cache: inout CachedCountBlock?) -> Int
    {
        if let origin, readsStoredBacklinkCounts,
           let stored = storedBacklinkCount(to: table, key: key, from: origin, column: column, cache: &cache)
        {
            return stored
        }
        return withUnsafeTemporaryAllocation(byteCount: 18, alignment: 8) { prefix in
            BigEndian.store(table.tableId, into: prefix, at: 0)
            BigEndian.store(key, into: prefix, at: 4)
            guard let origin else { return backlinkCount(withPrefix: UnsafeRawBufferPointer(rebasing: prefix[..<12])) }
            BigEndian.store(origin.tableId, into: prefix, at: 12)
            BigEndian.store(UInt16(truncatingIfNeeded: column), into: prefix, at: 16)
            return backlinkCount(withPrefix: UnsafeRawBufferPointer(prefix))
        }
    }

    private func backlinkCount(withPrefix prefix: UnsafeRawBufferPointer) -> Int {
        let sum = transaction.withReusableCursor(file.backlinks) { cursor in cursor?.sumOfCounts(withPrefix: prefix) ?? 0 }
        if isPlausibleLinkCount(sum) { return sum }
        // A damaged entry's count: the entries, each count as `backlinks(to:)` reads it.
        do {
            return try transaction.cursor(file.backlinks).entries(withPrefix: Array(prefix)).reduce(0) { total, entry in
                total + plausibleEntryCount(entry.value)
            }
        } catch {
            throwRealmException("Trellis could not read the backlinks of '\(environmentPath)': \(error)")
        }
    }

    /// The count of one backlink entry; 1 for a count no file of this size could hold (only a
    /// damaged file has one): the entry says there is a link.
    private func plausibleEntryCount(_ value: UnsafeRawBufferPointer) -> Int {
        let count = Int(value.load(orZeroAt: 0, as: UInt32.self))
        return isPlausibleLinkCount(count) ? count : 1
    }

    /// Every backlink entry of a target (optionally from one origin table and column).
    func backlinks(to table: Table, key: ObjectKey, from origin: Table? = nil, column: FieldInfo? = nil)
        -> [(key: BacklinkKey, count: Int)]
    {
        let prefix = BacklinkKey.prefix(targetTable: table.tableId, targetKey: key, originTable: origin?.tableId,
                                        originColumn: column.map { UInt16($0.rowColumn) })
        do {
            return try transaction.cursor(file.backlinks).entries(withPrefix: prefix).compactMap { entry in
                BacklinkKey(entry.key).map { ($0, plausibleEntryCount(entry.value)) }
            }
        } catch {
            throwRealmException("Trellis could not read the backlinks of '\(environmentPath)': \(error)")
        }
    }

    // MARK: - Deleting

    /// Deletes a row: unlinks everything pointing at it (to-one links become nil), deletes its
    /// embedded children, and removes its index entries. The objects its cascading links point
    /// at are the caller's (see ``deleteObject(_:key:)``).
    func deleteRow(_ table: Table, key: ObjectKey) {
        guard let txn = writeTransaction else { throwRealmException(Realm.addRequiresWriteMessage) }
        guard rowView(table, key) != nil else { return }
        clearCollections(table, key: key)
        guard let row = rowView(table, key) else { return }
        let outgoing = linkTargets(of: table, row: row)
        var primaryKey: [UInt8]?
        if let pkField = table.info.primaryKeyField {
            primaryKey = PrimaryKeyEncoding.encode(storedPayload(row, pkField))
        }
        updateIndexes(table, key: key, old: row, new: nil)
        do {
            _ = try txn.delete(table.rows, integerKey: key)
            try columnLog.recordDelete(table, key: key, in: txn)
            if let primaryKey, let pkIndex = table.primaryKeys {
                try primaryKey.withUnsafeBytes { (k) in _ = try txn.delete(pkIndex, key: k) }
            }
        } catch {
            storageFailure(error)
        }
        noteChange()
        recordedChanges.deleted(table.tableId, key)
        updateLinks(table, key: key, old: outgoing, new: [])
        for (incoming, _) in backlinks(to: table, key: key) {
            guard let origin = self.table(id: incoming.originTable),
                  let field = origin.info.storedFields.first(where: { $0.rowColumn == Int(incoming.originColumn) })
            else { continue }
            if field.typeInfo.collection != .none {
                unlinkFromCollection(CollectionLocation(table: origin, key: incoming.originKey, field: field),
                                     target: key)
            } else {
                // Nulling the origin's link also removes this backlink entry.
                updateColumn(origin, key: incoming.originKey, field: field, value: .null)
            }
        }
    }

    /// The stored form of one column, read back from a row (for primary keys).
    func storedPayload(_ row: RowView, _ field: FieldInfo) -> _StoredValue.Payload {
        if row.isNull(field.rowColumn) { return .null }
        switch field.typeInfo.type {
        case .int: return .int(row.int(field.rowColumn))
        case .string: return .string(row.string(field.rowColumn))
        case .objectId: return .objectId(row.objectId(field.rowColumn))
        case .UUID: return .uuid(row.uuid(field.rowColumn))
        case .bool: return .bool(row.bool(field.rowColumn))
        case .date: return .date(row.date(field.rowColumn))
        default: return .null
        }
    }

    // MARK: - Primary keys

    func lookUpPrimaryKey(_ table: Table, _ value: _StoredValue.Payload) -> ObjectKey? {
        guard let index = table.primaryKeys else { return nil }
        return PrimaryKeyEncoding.withEncoded(value) { k in
            transaction.get(index, searchingKey: k).map(PrimaryKeyEncoding.objectKey)
        }
    }

    /// Adds a primary-key entry; false (and nothing written) when the value is already taken.
    @discardableResult
    func insertPrimaryKey(_ table: Table, _ value: _StoredValue.Payload, key: ObjectKey) -> Bool {
        guard let index = table.primaryKeys, let txn = writeTransaction else { return true }
        var objectKey = key.littleEndian
        let length = PrimaryKeyEncoding.valueByteCount(key)
        do {
            return try PrimaryKeyEncoding.withEncoded(value) { (k) in
                try withUnsafeBytes(of: &objectKey) { (v) in
                    try txn.put(index, key: k, value: UnsafeRawBufferPointer(rebasing: v.prefix(length)), noOverwrite: true)
                }
            }
        } catch {
            storageFailure(error)
        }
    }

    // MARK: - Setting a property

    /// Realm's order of checks before a write to a managed object: the thread, a deleted or
    /// invalidated object, then a missing write transaction.
    func verifyWritable(_ managed: ManagedObject) {
        verifyThread()
        guard managed.epoch == epoch, !isClosed, rowView(managed.table, managed.key) != nil else {
            throwRealmException("Object has been deleted or invalidated.")
        }
        verifyInWrite()
    }

    /// Traps on a write to a managed object's primary key (after ``verifyWritable(_:)``'s
    /// checks), with Realm's message: the accessor's for `@Persisted` and dynamic access,
    /// realm-core's for a legacy `RealmProperty`/`RealmOptional` value.
    func refusePrimaryKeyChange(_ managed: ManagedObject, _ field: FieldInfo, legacyValue: Bool) -> Never {
        verifyWritable(managed)
        if legacyValue {
            throwRealmException("Cannot modify primary key after creation: '\(managed.info.className).\(field.name)'")
        }
        throwRealmException("Primary key can't be changed after an object is inserted.")
    }

    /// The managed setter of `@Persisted`: checks, encodes (adding linked objects), writes.
    /// `legacyValue`: the write comes through a `RealmProperty`/`RealmOptional`'s `value` or
    /// key-value coding on one, which Realm reports in realm-core's words for a primary key.
    func setProperty<Value: _Persistable>(of object: ObjectBase, _ managed: ManagedObject, _ field: FieldInfo,
                                          value: Value, legacyValue: Bool = false)
    {
        if field.isLinkingObjects { throwRealmException("LinkingObjects properties are read-only") }
        if field.isPrimaryKey { refusePrimaryKeyChange(managed, field, legacyValue: legacyValue) }
        verifyWritable(managed)
        if field.typeInfo.collection != .none {
            guard let assignable = Value.self as? any _CollectionAssignable.Type else {
                throwRealmException("Trellis internal error: '\(field.name)' cannot be assigned.")
            }
            assignable._trellisAssign(value, to: object, field: field)
            return
        }
        if field.isEmbeddedLink, let embedded = value as? EmbeddedObject?, let current = embedded?._managed,
           current.table === linkedTable(field),
           let row = rowView(managed.table, managed.key), !row.isNull(field.rowColumn),
           row.slot(field.rowColumn) == current.key
        {
            return  // assigning the embedded object a parent already holds: no change (Realm #117)
        }
        let session = AddSession(core: self, policy: propertyUpdatePolicy)
        let stored = Value._trellisEncode(value, _EncodingContext(session: session))
        updateColumn(managed.table, key: managed.key, field: field, value: stored.payload)
        // `create(_:value:update: .all)` sets the link whole, as `add(_:update: .all)` does.
        if propertyUpdatePolicy == .all, field.isLink { noteSyncReplacement(managed.table, managed.key, field) }
    }
}

/// Collection types assign by replacing their contents (Realm: `obj.dogs = otherList`).
protocol _CollectionAssignable {
    static func _trellisAssign(_ value: Any, to object: ObjectBase, field: FieldInfo)
}

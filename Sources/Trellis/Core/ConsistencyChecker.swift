/// Verifies, over a whole file, that the relationship indexes agree with the rows:
///
/// - every forward link (to-one column, list/set element, map value) points at an existing row;
/// - the backlink index holds exactly one count per (target, origin, property) equal to the
///   number of forward links, and nothing else;
/// - the stored backlink counts are the sums of the backlink index's counts;
/// - every embedded object has exactly one parent link;
/// - every stored collection belongs to an existing row, and its header agrees with its contents;
/// - every row's primary key is in the primary-key index and names that row (no two rows share
///   a key; a non-optional key is never null), and the index holds nothing else;
/// - every `indexed:` property's index holds exactly one entry per row, with the row's value;
/// - every column copy holds exactly the values of its rows (``ColumnCheck``);
/// - every database of the file has a handle, each table reads its own databases through it,
///   and a handle sees as many entries as LMDB records for the database (a handle the snapshot
///   cannot use reads as an empty table, which no other check would notice).
///
/// Used by the tests after relationship operations and by the crash tests after a reopen.
struct ConsistencyChecker {
    let core: RealmCore
    private(set) var problems: [String] = []
    private var expected: [BacklinkIdentity: Int] = [:]

    private struct BacklinkIdentity: Hashable {
        let targetTable: UInt32, targetKey: ObjectKey, originTable: UInt32, originColumn: UInt16, originKey: ObjectKey
    }

    init(core: RealmCore) { self.core = core }

    mutating func run() -> [String] {
        let tables = core.file.catalog.classes.compactMap { core.table(id: $0.tableId) }
        checkDatabaseHandles(tables)
        for table in tables {
            checkRows(of: table)
            checkPrimaryKeys(of: table)
            checkIndexes(of: table)
            problems += ColumnCheck.problems(of: table, in: core.transaction)
        }
        checkBacklinks(tables)
        checkBacklinkCounts()
        checkCollectionOwners()
        return problems
    }

    private mutating func checkRows(of table: Table) {
        let keys = rowKeys(table)
        for key in keys {
            for field in table.info.storedFields where field.isLink {
                for target in linkTargets(table, key, field) {
                    guard let targetTable = core.linkedTable(field) else { continue }
                    if core.rowView(targetTable, target) == nil {
                        problems.append("\(table.info.className)[\(key)].\(field.name) links to missing "
                            + "\(targetTable.info.className)[\(target)]")
                    }
                    let identity = BacklinkIdentity(targetTable: targetTable.tableId, targetKey: target,
                                                    originTable: table.tableId, originColumn: UInt16(field.rowColumn),
                                                    originKey: key)
                    expected[identity, default: 0] += 1
                }
            }
        }
    }

    private mutating func checkPrimaryKeys(of table: Table) {
        guard let index = table.primaryKeys, let field = table.info.primaryKeyField else { return }
        let className = table.info.className
        let keys = rowKeys(table)
        for key in keys {
            guard let row = core.rowView(table, key) else { continue }
            let value = core.storedPayload(row, field)
            let shown = PrimaryKeyEncoding.describe(value)
            if case .null = value, !field.typeInfo.isOptional {
                problems.append("\(className)[\(key)].\(field.name) is null, but the primary key is not optional")
            }
            switch core.lookUpPrimaryKey(table, value) {
            case nil:
                problems.append("\(className)[\(key)].\(field.name) is \(shown), which the primary-key index lacks")
            case let owner? where owner != key:
                problems.append("\(className)[\(key)] has the primary key \(shown) of \(className)[\(owner)]")
            default:
                break
            }
        }
        let entries = core.transaction.entryCount(index)
        if entries != keys.count {
            problems.append("\(className) has \(keys.count) objects but \(entries) primary-key entries")
        }
    }

    private mutating func checkIndexes(of table: Table) {
        guard !table.indexes.isEmpty else { return }
        let keys = rowKeys(table)
        for index in table.indexes {
            var expected = Set<[UInt8]>()
            for key in keys {
                guard let row = core.rowView(table, key) else { continue }
                expected.insert(index.entryKey(core.storedPayload(row, index.field), key))
            }
            var found = Set<[UInt8]>()
            if let cursor = core.transaction.existingCursor(index.database) {
                for entry in cursor.entries(withPrefix: []) { found.insert(Array(entry.key)) }
            }
            if found != expected {
                problems.append("\(table.info.className).\(index.field.name) index has \(found.subtracting(expected).count) "
                    + "stale and lacks \(expected.subtracting(found).count) entries")
            }
        }
    }

    /// The targets one property of one row links to (once per occurrence).
    private mutating func linkTargets(_ table: Table, _ key: ObjectKey, _ field: FieldInfo) -> [ObjectKey] {
        guard let row = core.rowView(table, key) else { return [] }
        let location = CollectionLocation(table: table, key: key, field: field)
        switch field.typeInfo.collection {
        case .none:
            return row.isNull(field.rowColumn) ? [] : [row.slot(field.rowColumn)]
        case .list:
            let elements = core.listElements(location)
            let header = core.listHeader(location)
            if elements.count != header.count {
                problems.append("\(table.info.className)[\(key)].\(field.name) header says \(header.count) elements, "
                    + "chunks hold \(elements.count)")
            }
            return elements.compactMap(CollectionElement.linkKey)
        case .set:
            let elements = core.setElements(location)
            if elements.count != core.storedSetOrMapCount(location) {
                problems.append("\(table.info.className)[\(key)].\(field.name) set count disagrees with its members")
            }
            return elements.compactMap(CollectionElement.linkKey)
        case .map:
            let entries = core.mapEntries(location)
            if entries.count != core.storedSetOrMapCount(location) {
                problems.append("\(table.info.className)[\(key)].\(field.name) map count disagrees with its entries")
            }
            return entries.compactMap { CollectionElement.linkKey($0.value) }
        }
    }

    /// The stored backlink counts agree with the backlink index (written first, inside a write).
    private mutating func checkBacklinkCounts() {
        guard let counts = core.file.backlinkCounts else { return }
        do {
            try core.flushBacklinkCountsForReading()
        } catch {
            problems.append("backlink counts could not be written: \(error)")
        }
        problems += BacklinkCountBuilder.problems(counts: counts, backlinks: core.file.backlinks, core.transaction)
    }

    private mutating func checkBacklinks(_ tables: [Table]) {
        var parents = [UInt32: [ObjectKey: Int]]()
        var found = Set<BacklinkIdentity>()
        for (key, value) in entries(core.file.backlinks) {
            guard let parsed = BacklinkKey(key) else {
                problems.append("backlink entry with a malformed key")
                continue
            }
            let identity = BacklinkIdentity(targetTable: parsed.targetTable, targetKey: parsed.targetKey,
                                            originTable: parsed.originTable, originColumn: parsed.originColumn,
                                            originKey: parsed.originKey)
            let count = Int(value.load(orZeroAt: 0, as: UInt32.self))
            found.insert(identity)
            parents[parsed.targetTable, default: [:]][parsed.targetKey, default: 0] += count
            if expected[identity] != count {
                problems.append("backlink \(describe(identity)) counts \(count), forward links count "
                    + "\(expected[identity] ?? 0)")
            }
        }
        for (identity, count) in expected where !found.contains(identity) {
            problems.append("missing backlink \(describe(identity)) for \(count) forward link(s)")
        }
        for table in tables where table.info.isEmbedded {
            for key in rowKeys(table) {
                let count = parents[table.tableId]?[key] ?? 0
                if count != 1 {
                    problems.append("embedded \(table.info.className)[\(key)] has \(count) parents (must have 1)")
                }
            }
        }
    }

    private mutating func checkCollectionOwners() {
        for (key, _) in entries(core.file.collections) where key.count > CollectionKey.ownerSize {
            let tableId: UInt32 = BigEndian.read(key, at: 0)
            let objectKey: ObjectKey = BigEndian.read(key, at: 4)
            guard let table = core.table(id: tableId) else { continue }
            if core.rowView(table, objectKey) == nil {
                problems.append("collection entry of missing owner \(table.info.className)[\(objectKey)]")
            }
        }
    }

    private func describe(_ id: BacklinkIdentity) -> String {
        let target = core.table(id: id.targetTable)?.info.className ?? "#\(id.targetTable)"
        let origin = core.table(id: id.originTable)?.info.className ?? "#\(id.originTable)"
        return "\(origin)[\(id.originKey)] column \(id.originColumn) -> \(target)[\(id.targetKey)]"
    }

    private mutating func checkDatabaseHandles(_ tables: [Table]) {
        let txn = core.transaction
        let handles = core.file.environment.handles
        let names = (try? txn.databaseNames()) ?? []
        for name in names where (try? txn.database(named: name, create: false)) ?? nil == nil {
            problems.append("the database '\(name)' has no handle in this process")
        }
        for table in tables {
            var expected = [(Table.rowsName(table.info.className), table.rows)]
            if let primaryKeys = table.primaryKeys { expected.append((Table.primaryKeysName(table.info.className), primaryKeys)) }
            expected += table.indexes.map { (SecondaryIndex.name(table.info.className, $0.field.columnName), $0.database) }
            if let columns = table.columns { expected.append((ColumnStorage.name(table.info.className), columns.database)) }
            if let delta = table.columns?.delta { expected.append((ColumnDelta.name(table.info.className), delta)) }
            for (name, handle) in expected {
                if let opened = handles.name(of: handle), opened != name {
                    problems.append("\(table.info.className) reads '\(name)' through the handle of '\(opened)'")
                    continue
                }
                let recorded = txn.recordedEntryCount(ofDatabaseNamed: name) ?? 0
                let seen = txn.entryCount(handle)
                if recorded != seen {
                    problems.append("\(table.info.className): '\(name)' holds \(recorded) entries but its handle "
                        + "sees \(seen)")
                }
            }
        }
    }

    private func rowKeys(_ table: Table) -> [ObjectKey] {
        entries(table.rows).map { Cursor.integerKey($0.key) }
    }

    private func entries(_ database: DatabaseHandle) -> [Cursor.Entry] {
        core.transaction.existingCursor(database)?.entries(withPrefix: []) ?? []
    }
}

extension Realm {
    /// Every disagreement between links, backlinks, embedded parents and collections in the
    /// file (empty when consistent). A diagnostic for tests and tools.
    public func _consistencyProblems() -> [String] {
        core.verifyThread()
        var checker = ConsistencyChecker(core: core)
        return checker.run()
    }
}

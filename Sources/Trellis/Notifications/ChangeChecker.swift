/// Answers "did this object change?" from a change set, following key paths through links
/// and backlinks, or (by default, for collections) any property of the object or of objects
/// it links to, up to four links deep, as Realm does.
struct ChangeChecker {
    unowned let core: RealmCore
    let changes: ChangeSet
    static let defaultDepth = 4
    /// `mayChange` answers by table and depth, asked once per commit rather than per element.
    private let memo = Memo()
    private final class Memo { var mayChange: [Int: Bool] = [:] }

    init(core: RealmCore, changes: ChangeSet) {
        self.core = core
        self.changes = changes
    }

    /// The columns of one object that changed (stored columns `>= 0`, backlink columns `< 0`).
    func changedColumns(_ table: Table, _ key: ObjectKey) -> Set<Int> {
        changes.tables[table.tableId]?.modifications[key] ?? []
    }

    /// Whether the object changed along any of `paths`, or deeply when `paths` is nil.
    func isModified(_ table: Table, _ key: ObjectKey, paths: [ObservedKeyPath]?) -> Bool {
        if !changes.isComplete { return true }
        guard let paths else { return isModifiedDeeply(table, key, depth: Self.defaultDepth) }
        return paths.contains { isModified(table, key, along: $0.fields[...]) }
    }

    /// Whether the object changed along one key path.
    func isModified(_ table: Table, _ key: ObjectKey, along path: ArraySlice<FieldInfo>) -> Bool {
        guard let field = path.first else { return false }
        let rest = path.dropFirst()
        if field.isLinkingObjects {
            guard let origin = originTable(of: field), let originField = originField(of: field, in: origin) else {
                return false
            }
            let column = ChangeSet.backlinkColumn(originTable: origin.tableId, originColumn: originField.rowColumn)
            if changedColumns(table, key).contains(column) { return true }
            guard !rest.isEmpty else { return false }
            return core.backlinks(to: table, key: key, from: origin, column: originField)
                .contains { isModified(origin, $0.key.originKey, along: rest) }
        }
        if changedColumns(table, key).contains(field.rowColumn) { return true }
        guard !rest.isEmpty, field.isLink, let target = core.linkedTable(field) else { return false }
        return linkTargets(table, key, field).contains { isModified(target, $0, along: rest) }
    }

    /// Whether any stored property of the object changed, or (within `depth` links) any
    /// property of an object it links to.
    func isModifiedDeeply(_ table: Table, _ key: ObjectKey, depth: Int) -> Bool {
        if changedColumns(table, key).contains(where: { $0 >= 0 }) { return true }
        guard depth > 1 else { return false }
        for field in table.info.storedFields where field.isLink {
            guard let target = core.linkedTable(field), mayChange(target, depth: depth - 1) else { continue }
            if linkTargets(table, key, field).contains(where: { isModifiedDeeply(target, $0, depth: depth - 1) }) {
                return true
            }
        }
        return false
    }

    /// Whether objects of `table`, or of tables it links to within `depth`, changed at all.
    private func mayChange(_ table: Table, depth: Int) -> Bool {
        let memoKey = Int(table.tableId) << 8 | depth
        if let known = memo.mayChange[memoKey] { return known }
        var result = changes.tables[table.tableId]?.modifications.isEmpty == false
        if !result, depth > 1 {
            result = table.info.storedFields.contains { field in
                field.isLink && (core.linkedTable(field).map { mayChange($0, depth: depth - 1) } ?? false)
            }
        }
        memo.mayChange[memoKey] = result
        return result
    }

    /// The objects a link, list, set or map of objects holds in the current snapshot.
    func linkTargets(_ table: Table, _ key: ObjectKey, _ field: FieldInfo) -> [ObjectKey] {
        let location = CollectionLocation(table: table, key: key, field: field)
        switch field.typeInfo.collection {
        case .none:
            guard let row = core.rowView(table, key), !row.isNull(field.rowColumn) else { return [] }
            return [row.slot(field.rowColumn)]
        case .list: return core.listElements(location).compactMap(CollectionElement.linkKey)
        case .set: return core.setElements(location).compactMap(CollectionElement.linkKey)
        case .map: return core.mapEntries(location).compactMap { CollectionElement.linkKey($0.value) }
        }
    }

    private func originTable(of field: FieldInfo) -> Table? {
        field.typeInfo.objectType.flatMap { core.table(for: $0, create: false) }
    }

    private func originField(of field: FieldInfo, in origin: Table) -> FieldInfo? {
        field.originProperty.flatMap { origin.info.field(named: $0) }
    }
}

/// Observes one object: reports the properties that changed, with their old values (read
/// from a copy of the row as it was last reported) unless the change is the observing Realm's
/// own commit (Realm supplies none then), or its deletion.
final class ObjectObserver<T: ObjectBase>: ChangeObserver {
    private unowned let core: RealmCore
    private let table: Table
    private let key: ObjectKey
    private let object: T
    private let paths: [ObservedKeyPath]?
    private let block: (ObjectChange<T>) -> Void
    private var row: [UInt8]
    private var isDeleted = false

    init(object: T, managed: ManagedObject, paths: [ObservedKeyPath]?, block: @escaping (ObjectChange<T>) -> Void) {
        core = managed.core
        table = managed.table
        key = managed.key
        self.object = object
        self.paths = paths
        self.block = block
        row = managed.core.rowView(managed.table, managed.key).map { Array($0.bytes) } ?? []
        super.init(version: managed.core.transaction.version)
        initialPending = false  // objects have no initial notification
    }

    override func advance(_ changes: ChangeSet, notify: Bool) {
        if isDeleted { return }
        guard let current = core.rowView(table, key) else {
            isDeleted = true
            if notify { block(.deleted) }
            return
        }
        let newRow = Array(current.bytes)
        defer { row = newRow }
        let checker = ChangeChecker(core: core, changes: changes)
        var changed = [FieldInfo]()
        for field in table.info.fields {
            if let paths {
                let matching = paths.filter { $0.fields.first === field }
                if !matching.isEmpty, checker.isModified(table, key, paths: matching) { changed.append(field) }
            } else if !field.isLinkingObjects, isChanged(field, checker, newRow) {
                changed.append(field)
            }
        }
        guard notify, !changed.isEmpty else { return }
        let withOldValues = !changes.isOwnCommit
        block(.change(object, changed.map { propertyChange($0, newRow, withOldValue: withOldValues) }))
    }

    private func isChanged(_ field: FieldInfo, _ checker: ChangeChecker, _ newRow: [UInt8]) -> Bool {
        if checker.changes.isComplete { return checker.changedColumns(table, key).contains(field.rowColumn) }
        if field.typeInfo.collection != .none { return true }
        return row.withUnsafeBytes { old in
            newRow.withUnsafeBytes { new in
                !RowView(bytes: old).hasSameColumn(RowView(bytes: new), field.rowColumn,
                                                   variableWidth: field.typeInfo.type.isVariableWidth)
            }
        }
    }

    private func propertyChange(_ field: FieldInfo, _ newRow: [UInt8], withOldValue: Bool) -> PropertyChange {
        guard field.typeInfo.collection == .none, !field.isLinkingObjects else {
            return PropertyChange(name: field.name, oldValue: nil, newValue: nil)
        }
        let old = withOldValue
            ? row.withUnsafeBytes { field.witness.storedValue(RowView(bytes: $0), core: core, column: field.rowColumn) }
            : nil
        let new = newRow.withUnsafeBytes {
            field.witness.storedValue(RowView(bytes: $0), core: core, column: field.rowColumn)
        }
        return PropertyChange(name: field.name, oldValue: old, newValue: new)
    }
}

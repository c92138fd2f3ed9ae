/// Which of a commit's changes can change a result set's membership or order.
struct ResultsDependencies {
    /// The root class's columns the filters, sorts and distinct steps read; nil when a step
    /// reads beyond the root object (links, backlinks, subqueries, collections).
    let rootColumns: Set<Int>?

    init(steps: [ResultsStep], info: ClassInfo) {
        var columns = Set<Int>()
        var onlyRoot = true
        func note(_ path: String) {
            let names = path.split(separator: ".")
            guard names.count == 1, let field = info.field(named: String(names[0])),
                  field.typeInfo.collection == .none, !field.isLinkingObjects
            else { onlyRoot = false; return }
            columns.insert(field.rowColumn)
        }
        func note(_ path: QueryKeyPath) {
            guard path.variable == nil, path.components.count == 1, case .property(let name) = path.components[0] else {
                onlyRoot = false
                return
            }
            note(name)
        }
        func note(_ expression: QueryExpression) {
            switch expression {
            case .keyPath(let path): note(path)
            case .list(let items): items.forEach(note)
            case .subqueryCount: onlyRoot = false
            case .constant, .argument: break
            }
        }
        func note(_ predicate: QueryPredicate) {
            switch predicate {
            case .constant: break
            case .and(let operands), .or(let operands): operands.forEach(note)
            case .not(let inner): note(inner)
            case .comparison(let comparison): note(comparison.lhs); note(comparison.rhs)
            }
        }
        for step in steps {
            switch step {
            case .filter(let predicate): note(predicate)
            case .sort(let descriptors): descriptors.forEach { note($0.keyPath) }
            case .distinct(let paths): paths.forEach(note)
            }
        }
        rootColumns = onlyRoot ? columns : nil
    }

    /// Whether `changes` can change the membership or order of results over `table`.
    func mayChange(_ changes: ChangeSet, table: Table) -> Bool {
        let root = changes.tables[table.tableId]
        if let root, !root.insertions.isEmpty || !root.deletions.isEmpty { return true }
        guard let rootColumns else {
            // The steps read other objects: any change anywhere may matter.
            return changes.tables.values.contains { !$0.isEmpty }
        }
        guard let root, !rootColumns.isEmpty else { return false }
        return root.modifications.values.contains { !$0.isDisjoint(with: rootColumns) }
    }
}

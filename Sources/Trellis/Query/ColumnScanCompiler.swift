import Foundation

/// Turns a query over a class into a ``ChunkTest`` when every comparison in it is one the
/// column copy answers: a property of the class (not through a link or a collection) against
/// constants, with `==`, `!=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN`, and for strings
/// `BEGINSWITH`, `ENDSWITH`, `CONTAINS` (no `[c]`/`[d]`), null checks, combined with `AND`,
/// `OR`, `NOT`. Nil otherwise: the query then runs over the rows.
///
/// The predicate has already been checked by ``QueryCompiler`` (which reports bad queries);
/// this only decides whether the column copy can answer it and how.
enum ColumnScanCompiler {
    /// The test for `predicate` over `table`'s column copy, for the current snapshot of `core`
    /// (a test through a link reads the target's chunks in it).
    static func compile(_ predicate: QueryPredicate, table: Table, core: RealmCore) -> ChunkTest? {
        guard let storage = table.columns else { return nil }
        return Compilation(core: core).test(predicate, table, words: ChunkFormat.words(storage.slotCount))
    }
}

private struct Compilation {
    unowned let core: RealmCore

    func test(_ predicate: QueryPredicate, _ table: Table, words: Int) -> ChunkTest? {
        switch predicate {
        case .constant(let value):
            return ConstantTest(value)
        case .and(let operands), .or(let operands):
            var tests: [ChunkTest] = []
            for operand in operands {
                guard let test = test(operand, table, words: words) else { return nil }
                tests.append(test)
            }
            guard !tests.isEmpty else {
                if case .and = predicate { return ConstantTest(true) }
                return ConstantTest(false)
            }
            if case .and = predicate { return CombinedTest(.and, tests, words: words) }
            return CombinedTest(.or, tests, words: words)
        case .not(let inner):
            return test(inner, table, words: words).map { CombinedTest(.not, [$0], words: words) }
        case .comparison(let comparison):
            return test(comparison, table, words: words)
        }
    }

    private func test(_ original: QueryComparison, _ table: Table, words: Int) -> ChunkTest? {
        let info = table.info
        var c = original
        guard c.quantifier == .single else { return nil }
        if case .keyPath = c.rhs, c.op != .in, constant(c.lhs) != nil {
            c = QueryComparison(quantifier: c.quantifier, lhs: c.rhs, op: c.op.mirrored, options: c.options, rhs: c.lhs)
        }
        guard case .keyPath(let path) = c.lhs, path.variable == nil, let first = path.components.first,
              case .property(let name) = first, let field = info.field(named: name), field.isStored,
              field.typeInfo.collection == .none
        else { return nil }
        if field.isLink {
            // One to-one hop to a property of the target (`dog.age > 10`).
            guard path.components.count == 2, let target = core.linkedTable(field), let storage = target.columns else {
                return nil
            }
            let hop = QueryComparison(quantifier: c.quantifier, lhs: .keyPath(QueryKeyPath(Array(path.components.dropFirst()))),
                                      op: c.op, options: c.options, rhs: c.rhs)
            guard let inner = test(hop, target, words: ChunkFormat.words(storage.slotCount)) else { return nil }
            return LinkedTest(column: field.rowColumn, target: storage, inner: inner, txn: core.transaction)
        }
        guard path.components.count == 1 else { return nil }
        let column = field.rowColumn
        let type = field.typeInfo.type
        switch c.op {
        case .in:
            guard let items = list(c.rhs), !items.isEmpty else { return nil }
            var tests: [ChunkTest] = []
            for item in items {
                guard let test = comparison(column, type, .equal, item, c.options, table) else { return nil }
                tests.append(test)
            }
            return tests.count == 1 ? tests[0] : CombinedTest(.or, tests, words: words)
        case .between:
            guard let bounds = list(c.rhs), bounds.count == 2, c.options.isEmpty else { return nil }
            switch (type, bounds[0], bounds[1]) {
            case (.int, .int(let low), .int(let high)):
                return IntegerTest(column: column, op: .between, low: low, high: high)
            case (.double, _, _), (.float, _, _), (.date, _, _):
                guard let low = floating(bounds[0], type), let high = floating(bounds[1], type) else { return nil }
                return FloatingTest(column: column, isFloat: type == .float, op: .between, low: low, high: high)
            default:
                return nil
            }
        default:
            guard let value = constant(c.rhs) else { return nil }
            return comparison(column, type, c.op, value, c.options, table)
        }
    }

    /// One property against one constant.
    private func comparison(_ column: Int, _ type: PropertyType, _ op: QueryOperator, _ value: QueryValue,
                            _ options: QueryStringOptions, _ table: Table) -> ChunkTest?
    {
        if case .null = value {
            switch op {
            case .equal: return NullTest(column: column, matchesNull: true)
            case .notEqual: return NullTest(column: column, matchesNull: false)
            default: return nil
            }
        }
        switch (type, value) {
        case (.int, .int(let bound)):
            guard op.isOrdering || op == .equal || op == .notEqual else { return nil }
            return IntegerTest(column: column, op: op, low: bound)
        case (.bool, .bool(let bound)):
            guard op == .equal || op == .notEqual else { return nil }
            return IntegerTest(column: column, op: op, low: bound ? 1 : 0)
        case (.double, _), (.float, _), (.date, _):
            guard op.isOrdering || op == .equal || op == .notEqual, let bound = floating(value, type) else { return nil }
            return FloatingTest(column: column, isFloat: type == .float, op: op, low: bound)
        case (.string, .string(let text)):
            guard options.isEmpty, [.equal, .notEqual, .beginsWith, .endsWith, .contains].contains(op) else { return nil }
            return BytesTest(column: column, op: op, constant: Array(text.utf8), text: text, rows: table.rows,
                             txn: core.transaction)
        case (.objectId, .objectId(let id)):
            guard op == .equal || op == .notEqual else { return nil }
            return BytesTest(column: column, op: op, constant: id.byteArray, text: nil, rows: table.rows,
                             txn: core.transaction)
        default:
            return nil
        }
    }

    /// A numeric constant as the Double a Double, Float or Date column compares with.
    private func floating(_ value: QueryValue, _ type: PropertyType) -> Double? {
        switch (type, value) {
        case (.date, .date(let date)): date.timeIntervalSinceReferenceDate
        case (.double, .int(let i)), (.float, .int(let i)): Double(i)
        case (.double, .double(let d)), (.float, .double(let d)): d
        default: nil
        }
    }

    private func constant(_ expression: QueryExpression) -> QueryValue? {
        switch expression {
        case .constant(let value), .argument(let value):
            if case .list = value { return nil }
            return value
        default:
            return nil
        }
    }

    private func list(_ expression: QueryExpression) -> [QueryValue]? {
        switch expression {
        case .list(let items):
            var values: [QueryValue] = []
            for item in items {
                guard let value = constant(item) else { return nil }
                values.append(value)
            }
            return values
        case .constant(.list(let values)), .argument(.list(let values)):
            return values.allSatisfy({ if case .list = $0 { false } else { true } }) ? values : nil
        default:
            return nil
        }
    }
}

private extension QueryOperator {
    var isOrdering: Bool {
        switch self {
        case .less, .lessOrEqual, .greater, .greaterOrEqual: true
        default: false
        }
    }
}

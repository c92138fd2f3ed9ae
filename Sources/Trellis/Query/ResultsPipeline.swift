import Foundation

/// One step of a ``Results`` chain.
enum ResultsStep {
    case filter(QueryPredicate)
    case sort([SortDescriptor])
    case distinct([String])
}

/// Applies a ``Results`` chain's filters, sorts and distinct steps to the source's rows, in the
/// order they were added.
struct ResultsPipeline {
    unowned let core: RealmCore
    let table: Table

    func apply(_ steps: ArraySlice<ResultsStep>, keys: [ObjectKey], rows: [UnsafeRawBufferPointer])
        -> ([ObjectKey], [UnsafeRawBufferPointer])
    {
        var keys = keys, rows = rows
        for step in steps {
            switch step {
            case .filter(let predicate): (keys, rows) = filter(predicate, withRows(keys, rows))
            case .sort(let descriptors): (keys, rows) = sort(descriptors, keys, rows)
            case .distinct(let keyPaths): (keys, rows) = distinct(keyPaths, withRows(keys, rows))
            }
        }
        return (keys, rows)
    }

    /// The keys with their rows, read now if a column scan or sort left them out.
    private func withRows(_ keys: [ObjectKey], _ rows: [UnsafeRawBufferPointer])
        -> ([ObjectKey], [UnsafeRawBufferPointer])
    {
        rows.count == keys.count ? (keys, rows) : core.rows(of: table, keys: keys)
    }

    private func compile(_ predicate: QueryPredicate) -> QueryCompiler.Compiled {
        do {
            return try QueryCompiler.compile(predicate, for: table.info, in: core)
        } catch {
            throwRealmException("Invalid predicate '\(predicate)': \(error.message)")
        }
    }

    /// The number of objects of the class that match, counted in the column copy; nil when it
    /// cannot answer the predicate, or when an index can (a primary key `==` is one lookup).
    func columnCount(_ predicate: QueryPredicate) -> Int? {
        _ = compile(predicate)  // checks the predicate, and reports a bad one
        if table.info.primaryKeyField != nil || !table.indexes.isEmpty,
           indexedCandidates([.filter(predicate)]) != nil
        {
            return nil
        }
        guard let test = ColumnScanCompiler.compile(predicate, table: table, core: core),
              let storage = core.readableColumns(of: table)
        else { return nil }
        return ColumnScan.count(matching: test, in: storage, core.transaction)
    }

    /// Scans the column copy when it can answer the predicate (the rows are then left for the
    /// caller to read as it needs them: the second array is empty); otherwise walks the whole
    /// table once, testing each row as the cursor reaches it.
    func scan(_ predicate: QueryPredicate) -> ([ObjectKey], [UnsafeRawBufferPointer]) {
        let compiled = compile(predicate)  // checks the predicate, and reports a bad one
        if let test = ColumnScanCompiler.compile(predicate, table: table, core: core), let storage = core.readableColumns(of: table) {
            return (ColumnScan.keys(matching: test, in: storage, core.transaction), [])
        }
        let scope = compiled.makeScope()
        var keys = [ObjectKey](), rows = [UnsafeRawBufferPointer]()
        guard let cursor = core.transaction.existingCursor(table.rows) else { return (keys, rows) }
        var entry = cursor.first()
        while let (rawKey, bytes) = entry {
            let key = Cursor.integerKey(rawKey)
            scope[0] = QueryRow(table: table, key: key, row: RowView(bytes: bytes))
            if compiled.test(scope) {
                keys.append(key)
                rows.append(bytes)
            }
            entry = cursor.next()
        }
        return (keys, rows)
    }

    private func filter(_ predicate: QueryPredicate, _ source: ([ObjectKey], [UnsafeRawBufferPointer]))
        -> ([ObjectKey], [UnsafeRawBufferPointer])
    {
        let (keys, rows) = source
        let compiled = compile(predicate)
        let scope = compiled.makeScope()
        var outKeys = [ObjectKey](), outRows = [UnsafeRawBufferPointer]()
        for index in keys.indices {
            scope[0] = QueryRow(table: table, key: keys[index], row: RowView(bytes: rows[index]))
            if compiled.test(scope) {
                outKeys.append(keys[index])
                outRows.append(rows[index])
            }
        }
        return (outKeys, outRows)
    }

    /// Reads one single-valued key path of every row.
    private func column(_ keyPath: String, _ keys: [ObjectKey], _ rows: [UnsafeRawBufferPointer]) -> [QueryValue] {
        let reader: (QueryScope) -> QueryValue
        do {
            reader = try Self.singleValueReader(keyPath, info: table.info, core: core)
        } catch {
            throwRealmException(error.message)
        }
        let scope = QueryScope(depth: 0)
        return keys.indices.map { index in
            scope[0] = QueryRow(table: table, key: keys[index], row: RowView(bytes: rows[index]))
            return reader(scope)
        }
    }

    /// A reader for a key path that gives one value per object (a property, possibly through
    /// to-one links): what sorting and distinct accept.
    static func singleValueReader(_ keyPath: String, info: ClassInfo, core: RealmCore,
                                  resolver: QueryClassResolver? = nil) throws(QueryError) -> (QueryScope) -> QueryValue
    {
        let components = keyPath.split(separator: ".").map { QueryKeyPathComponent.property(String($0)) }
        let operand = try QueryCompiler(core: core, rootInfo: info, resolver: resolver).operand(QueryKeyPath(components))
        guard case .single(let reader) = operand.values else {
            throw QueryError(message: "Cannot sort or distinct on key path '\(keyPath)': only properties and "
                + "to-one links may be used, not collections.", offset: nil)
        }
        return reader
    }

    private func sort(_ descriptors: [SortDescriptor], _ keys: [ObjectKey], _ rows: [UnsafeRawBufferPointer])
        -> ([ObjectKey], [UnsafeRawBufferPointer])
    {
        if let storage = core.readableColumns(of: table),
           let sorted = ColumnSort.sorted(keys, by: descriptors, table: table, storage: storage, txn: core.transaction)
        {
            return (sorted, [])  // the rows are read as they are needed
        }
        let (keys, rows) = withRows(keys, rows)
        let columns = descriptors.map { column($0.keyPath, keys, rows) }
        let brokenLinks = descriptors.map { descriptor in
            Self.nilLinks(on: descriptor.keyPath, count: keys.count) { column($0, keys, rows) }
        }
        let order = keys.indices.sorted { a, b in
            for (descriptor, (values, broken)) in zip(descriptors, zip(columns, brokenLinks)) {
                if let first = Self.sortsFirst(a, b, values, broken, ascending: descriptor.ascending) { return first }
            }
            return a < b
        }
        return (order.map { keys[$0] }, order.map { rows[$0] })
    }

    /// For a key path through to-one links (`dog.age`), whether each object has a nil link on
    /// the way, its link prefixes read by `read`; nil for a key path without links.
    static func nilLinks(on keyPath: String, count: Int, read: (String) -> [QueryValue]) -> [Bool]? {
        let prefixes = linkPrefixes(keyPath).map(read)
        if prefixes.isEmpty { return nil }
        return (0..<count).map { index in prefixes.contains { index < $0.count && $0[index].isNull } }
    }

    /// Whether object `a` sorts before object `b` by one descriptor; nil when they tie on it.
    /// realm-core's order for a key path through links (BaseDescriptor's Sorter): an object with
    /// a nil link on the way has no value and goes last (first when descending), after the
    /// objects whose value is nil; two such objects tie.
    static func sortsFirst(_ a: Int, _ b: Int, _ values: [QueryValue], _ nilLinks: [Bool]?, ascending: Bool) -> Bool? {
        if let nilLinks, nilLinks[a] || nilLinks[b] {
            return nilLinks[a] && nilLinks[b] ? nil : ascending != nilLinks[a]
        }
        let comparison = sortOrder(values[a], values[b])
        if comparison == 0 { return nil }
        return ascending ? comparison < 0 : comparison > 0
    }

    /// Realm's sort order: nil first, then values in their natural order (false before true);
    /// values of different kinds (in an `AnyRealmValue`) by kind, as Realm's mixed ordering:
    /// booleans, numbers, strings, data, dates, object ids, UUIDs, then links.
    static func sortOrder(_ a: QueryValue, _ b: QueryValue) -> Int {
        switch (a.isNull, b.isNull) {
        case (true, true): return 0
        case (true, false): return -1
        case (false, true): return 1
        case (false, false):
            if case .bool(let x) = a, case .bool(let y) = b { return x == y ? 0 : (x ? 1 : -1) }
            if case .link(_, let x) = a, case .link(_, let y) = b { return x < y ? -1 : (x == y ? 0 : 1) }
            if let order = QueryValueComparison.order(a, b) { return order }
            let (x, y) = (kindRank(a), kindRank(b))
            return x < y ? -1 : (x == y ? 0 : 1)
        }
    }

    private static func kindRank(_ value: QueryValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int, .double, .decimal: 2
        case .string: 3
        case .data: 4
        case .date: 5
        case .objectId: 6
        case .uuid: 7
        case .object, .memberwise, .link: 8
        case .list, .nestedCollection, .geo: 9
        }
    }

    private func distinct(_ keyPaths: [String], _ source: ([ObjectKey], [UnsafeRawBufferPointer]))
        -> ([ObjectKey], [UnsafeRawBufferPointer])
    {
        let (keys, rows) = source
        let columns = keyPaths.map { column($0, keys, rows) }
        // realm-core drops the objects with a nil link on the way to a distinct key path
        // ("childIntCol.intCol" of an object without a child), before keeping the first of each.
        let links = keyPaths.flatMap(Self.linkPrefixes).map { column($0, keys, rows) }
        var seen = Set<[QueryValue]>()
        var outKeys = [ObjectKey](), outRows = [UnsafeRawBufferPointer]()
        for index in keys.indices where !links.contains(where: { $0[index].isNull })
            && seen.insert(columns.map { $0[index] }).inserted
        {
            outKeys.append(keys[index])
            outRows.append(rows[index])
        }
        return (outKeys, outRows)
    }

    /// The links a key path goes through: "a.b.c" → "a", "a.b".
    static func linkPrefixes(_ keyPath: String) -> [String] {
        let components = keyPath.split(separator: ".")
        guard components.count > 1 else { return [] }
        return (1..<components.count).map { components[0..<$0].joined(separator: ".") }
    }

    // MARK: - Indexes

    /// When the chain starts with a filter that pins an indexed property (the primary key or
    /// an `indexed: true` property: `==`, `IN`, and for integers and dates `<`, `>`,
    /// `BETWEEN`; combined with AND, or OR of such), the keys of the objects it can match, in
    /// key order, found through the index instead of a scan. The filter still runs on them.
    /// Nil when a scan is needed.
    func indexedCandidates(_ steps: [ResultsStep]) -> [ObjectKey]? {
        guard case .filter(let predicate)? = steps.first else { return nil }
        guard table.info.primaryKeyField != nil || !table.indexes.isEmpty else { return nil }
        return candidates(predicate)?.sorted()
    }

    private func candidates(_ predicate: QueryPredicate) -> Set<ObjectKey>? {
        switch predicate {
        case .and(let operands):
            // The intersection of the operands an index answers (the others filter afterwards).
            var result: Set<ObjectKey>?
            for operand in operands {
                guard let keys = candidates(operand) else { continue }
                result = result.map { $0.intersection(keys) } ?? keys
            }
            return result
        case .or(let operands):
            var result = Set<ObjectKey>()
            for operand in operands {
                guard let keys = candidates(operand) else { return nil }
                result.formUnion(keys)
            }
            return result
        case .comparison(let c):
            return candidates(c)
        default:
            return nil
        }
    }

    private func candidates(_ c: QueryComparison) -> Set<ObjectKey>? {
        guard c.quantifier == .single, c.options.isEmpty, case .keyPath(let path) = c.lhs, path.variable == nil,
              path.components.count == 1, case .property(let name) = path.components[0],
              let field = table.info.field(named: name)
        else { return nil }
        let isPrimaryKey = field.isPrimaryKey
        let index = table.index(of: field)
        guard isPrimaryKey || index != nil else { return nil }
        let type = field.typeInfo.type
        func payload(_ expression: QueryExpression) -> _StoredValue.Payload? {
            switch expression {
            case .constant(let v), .argument(let v): IndexKeyEncoding.payload(v, for: type)
            default: nil
            }
        }
        func equal(_ value: _StoredValue.Payload) -> [ObjectKey] {
            if isPrimaryKey { return core.lookUpPrimaryKey(table, value).map { [$0] } ?? [] }
            return index.map { core.indexedKeys($0, equalTo: value) } ?? []
        }
        func range(_ lower: _StoredValue.Payload?, _ upper: _StoredValue.Payload?) -> [ObjectKey]? {
            guard type == .int || type == .date else { return nil }
            if isPrimaryKey { return core.primaryKeyRange(table, lower: lower, upper: upper) }
            return index.map { core.indexedKeys($0, from: lower, to: upper) }
        }
        switch c.op {
        case .equal:
            return payload(c.rhs).map { Set(equal($0)) }
        case .in:
            let items: [QueryExpression]
            switch c.rhs {
            case .list(let list): items = list
            case .argument(.list(let values)), .constant(.list(let values)): items = values.map { .argument($0) }
            default: return nil
            }
            var keys = Set<ObjectKey>()
            for item in items {
                guard let value = payload(item) else { return nil }
                keys.formUnion(equal(value))
            }
            return keys
        case .greater, .greaterOrEqual:
            return payload(c.rhs).flatMap { bound in range(bound, nil) }.map(Set.init)
        case .less, .lessOrEqual:
            return payload(c.rhs).flatMap { bound in range(nil, bound) }.map(Set.init)
        case .between:
            guard case .list(let bounds) = c.rhs, bounds.count == 2,
                  let low = payload(bounds[0]), let high = payload(bounds[1])
            else { return nil }
            return range(low, high).map(Set.init)
        default:
            return nil
        }
    }
}

/// A sort order: a key path (a property, possibly through to-one links) and a direction.
public struct SortDescriptor: Equatable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The key path to sort on, such as `"age"` or `"dog.name"`.
    public let keyPath: String
    /// Whether smaller values (and nil) come first.
    public let ascending: Bool

    /// Sorts on `keyPath`, ascending unless told otherwise.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// Sorts on the property a key path names (`\Dog.age`).
    public init<Root: ObjectBase>(keyPath: PartialKeyPath<Root>, ascending: Bool = true) {
        self.init(keyPath: QueryKeyPathNames.name(of: keyPath), ascending: ascending)
    }

    /// An ascending sort on the key path the literal spells.
    public init(stringLiteral keyPath: String) { self.init(keyPath: keyPath) }

    /// The same key path in the other direction.
    public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }

    /// `SortDescriptor(keyPath: age, direction: ascending)`, as Realm prints it.
    public var description: String {
        "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))"
    }
}

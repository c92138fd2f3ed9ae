import Foundation

extension Results {
    // MARK: - Filtering

    /// The objects matching `predicateFormat`, Realm's predicate text with `%@` / `%K`
    /// arguments: `filter("ANY dogs.age > %@", 5)`.
    ///
    /// Invalid text traps, as in Realm, with a message that quotes the text and points at the
    /// problem; use ``filter(validating:_:)`` for text that comes from users.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results {
        filter(trapping: predicateFormat, arguments: args)
    }

    /// `filter(_:_:)` with its arguments as an array: traps on invalid text, as Realm does.
    func filter(trapping text: String, arguments: [Any]) -> Results {
        do {
            return try filter(validating: text, arguments: arguments)
        } catch {
            throwRealmException(error.message)
        }
    }

    /// Like ``filter(_:_:)``, but a predicate that does not parse or does not fit the class
    /// throws a ``Realm/Error`` with code ``Realm/Error/Code/invalidQuery`` instead of trapping.
    public func filter(validating predicateFormat: String, _ args: Any...) throws(Realm.Error) -> Results {
        try filter(validating: predicateFormat, arguments: args)
    }

    func filter(validating text: String, arguments: [Any]) throws(Realm.Error) -> Results {
        let predicate: QueryPredicate
        do {
            predicate = try QueryParser.parse(text, arguments: arguments.map(QueryArguments.value))
        } catch {
            throw Realm.Error(.invalidQuery, QueryParser.message(for: error, in: text))
        }
        return try filter(checked: predicate, text: text)
    }

    /// Adds a filter after checking it against the class (unknown properties, wrong types).
    func filter(checked predicate: QueryPredicate, text: String? = nil) throws(Realm.Error) -> Results {
        validateRead()
        if isValues {
            try checkValuePredicate(predicate, text: text)
            return adding(.filter(predicate))
        }
        do {
            _ = try QueryCompiler.compile(predicate, for: objectInfo, in: core)
        } catch {
            throw Realm.Error(.invalidQuery, "Invalid predicate '\(text ?? predicate.description)': \(error.message)")
        }
        return adding(.filter(predicate))
    }

    /// The objects for which the typed query is true: `where { $0.dogs.age > 5 }`.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results {
        let predicate = isIncluded(Query<Element>()).predicate
        do {
            return try filter(checked: predicate)
        } catch {
            throwRealmException(error.message)
        }
    }

    /// The position of the first object matching the predicate text, or nil.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        index(matching: predicateFormat, arguments: args)
    }

    func index(matching text: String, arguments: [Any]) -> Int? {
        firstPosition(of: filter(trapping: text, arguments: arguments))
    }

    /// The position of the first object for which the typed query is true, or nil.
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        firstPosition(of: self.where(isIncluded))
    }

    private func firstPosition(of matching: Results) -> Int? {
        if isValues {
            guard case .filter(let predicate)? = matching.steps.last else { return nil }
            return evaluatedValues().firstIndex { ValuePredicate.matches(predicate, QueryArguments.value($0)) }
        }
        guard let first = matching.keys().first else { return nil }
        return keys().firstIndex(of: first)
    }

    /// The elements at `indexes`, in order; traps with Realm's message for an index out of bounds.
    public func objects(at indexes: IndexSet) -> [Element] {
        let count = self.count
        if let last = indexes.last, last >= count {
            throwRealmException("Indexes for collection are out of bounds.")
        }
        return indexes.map { self[$0] }
    }

    // MARK: - Sorting and distinct

    /// The objects sorted on a property or a key path through to-one links (`"dog.age"`); for
    /// values, `"self"`.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The values sorted (results of values only; for objects name a key path).
    public func sorted(ascending: Bool = true) -> Results {
        guard isValues else {
            throwRealmException("Cannot sort on key path 'self': sorting by the objects themselves is not "
                + "supported; sort by one of their properties.")
        }
        return adding(.sort([SortDescriptor(keyPath: "self", ascending: ascending)]))
    }

    /// The objects sorted by several key paths, the first deciding first.
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results where S.Element == SortDescriptor {
        let descriptors = Array(sortDescriptors)
        for descriptor in descriptors { checkSingleValued(descriptor.keyPath, "sort") }
        return adding(.sort(descriptors))
    }

    /// The first object of each distinct combination of values of `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results where S.Element == String {
        let paths = Array(keyPaths)
        for path in paths { checkSingleValued(path, "distinct") }
        return adding(.distinct(paths))
    }

    /// The distinct values, in first-seen order (results of values only).
    public func distinct() -> Results {
        guard isValues else { return distinct(by: ["self"]) }
        return adding(.distinct(["self"]))
    }

    /// The class and name of the first name of a dotted key path that is not a property of the
    /// class it is looked up in (following to-one links); nil when every name is one.
    private static func missingProperty(_ keyPath: String, from root: ClassInfo) -> (String, String)? {
        var info = root
        for name in keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            guard let field = info.field(named: name) else { return (info.className, name) }
            guard field.isLink, let target = field.typeInfo.objectType else { return nil }
            info = ClassInfo.unbound(for: target)
        }
        return nil
    }

    private func checkSingleValued(_ keyPath: String, _ what: String) {
        core.verifyThread()
        if isValues {
            if keyPath == "self" { return }
            throwRealmException("Cannot \(what) on key path '\(keyPath)': a collection of values has no properties; "
                + "use 'self'.")
        }
        if let (className, name) = Self.missingProperty(keyPath, from: objectInfo) {
            // realm-core's words for a name that is not a property on the way.
            throwRealmException("Cannot \(what) on key path '\(keyPath)': property '\(className).\(name)' does not exist")
        }
        do {
            _ = try ResultsPipeline.singleValueReader(keyPath, info: objectInfo, core: core)
        } catch {
            throwRealmException("Cannot \(what) on key path '\(keyPath)': \(error.message)")
        }
    }

    // MARK: - Aggregates

    /// The smallest value of a property among the objects, or nil when there are none.
    public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        aggregate(.min, property)
    }

    /// The largest value of a property among the objects, or nil when there are none.
    public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        aggregate(.max, property)
    }

    /// The sum of a numeric property over the objects (zero when there are none).
    public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
        if let sum: T = aggregate(.sum, property) { return sum }
        if let zero = AggregateConversion.convert(.int(0), to: T.self, core: core) { return zero }
        throwRealmException("Cannot sum '\(property)' as \(T.self).")
    }

    /// The average of a numeric property over the objects, or nil when there are none.
    public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
        aggregate(.avg, property)
    }
}

extension Results where Element: ObjectBase {
    /// The objects sorted on a property.
    public func sorted<V>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results {
        sorted(by: [SortDescriptor(keyPath: QueryKeyPathNames.name(of: keyPath), ascending: ascending)])
    }
}

extension Results {
    func aggregate<T>(_ op: QueryCollectionOperation, _ property: String) -> T? {
        validateRead()
        if isValues {
            guard property == "self" else {
                throwRealmException("Invalid property name '\(property)': a collection of values has no properties; "
                    + "use min(), max(), sum() and average().")
            }
            return aggregateValues(op)
        }
        let info = objectInfo
        guard let field = info.field(named: property) else {
            var message = "No property '\(property)' on '\(info.className)'."
            if let nearest = QueryCompiler.nearest(to: property, among: info.fields.map(\.name)) {
                message += " Did you mean '\(nearest)'?"
            }
            throwRealmException(message)
        }
        let type = field.typeInfo.type
        let allowed: [PropertyType] = op == .min || op == .max ? [.int, .float, .double, .decimal128, .date]
            : [.int, .float, .double, .decimal128]
        guard field.typeInfo.collection == .none, allowed.contains(type) else {
            throwRealmException("Invalid property name '\(property)' for \(op.rawValue.dropFirst()): "
                + "'\(info.className).\(property)' is of unsupported type '\(type)'.")
        }
        guard let table else { return nil }
        if let value = columnAggregate(op, field, table) {
            return AggregateConversion.convert(value, to: T.self, core: core)
        }
        let (keys, rows) = evaluatedRows()
        let values = keys.indices.map { index in
            QueryColumnReader.value(RowView(bytes: rows[index]), field.rowColumn, type, linkTable: table.tableId)
        }
        return AggregateConversion.convert(QueryAggregate.apply(op, values), to: T.self, core: core)
    }
}

/// Turns a query value into a Swift value of a persistable type (for aggregates).
enum QueryValueConversion {
    static func convert<T: _Persistable>(_ value: QueryValue, to type: T.Type, core: RealmCore) -> T? {
        let stored = T._trellisTypeInfo.type
        let payload: _StoredValue.Payload
        switch (stored, value) {
        case (_, .null): return nil
        case (.int, .int(let i)): payload = .int(i)
        // An average of integers is a Double; as an Int it is cut toward zero, within Int64.
        case (.int, .double(let d)):
            if d.isNaN { return nil }
            payload = .int(d >= 0x1p63 ? .max : d < -0x1p63 ? .min : Int64(d))
        case (.double, .int(let i)): payload = .double(Double(i))
        case (.double, .double(let d)): payload = .double(d)
        case (.float, .int(let i)): payload = .float(Float(i))
        case (.float, .double(let d)): payload = .float(Float(d))
        case (.decimal128, .decimal(let d)): payload = .decimal(d)
        case (.decimal128, .int(let i)): payload = .decimal(Decimal128(Decimal(i)))
        case (.decimal128, .double(let d)): payload = .decimal(Decimal128(Decimal(d)))
        case (.date, .date(let d)): payload = .date(d)
        case (.any, .int(let i)): payload = .mixed(.int(i))
        case (.any, .double(let d)): payload = .mixed(.double(d))
        case (.any, .decimal(let d)): payload = .mixed(.decimal(d))
        case (.any, .date(let d)): payload = .mixed(.date(d))
        default: return nil
        }
        let bytes = RowWriter.encode(single: payload)
        return bytes.withUnsafeBytes { raw in
            T._trellisRead(_RowReader(row: RowView(bytes: raw), core: core), 0)
        }
    }
}

extension Results {
    /// The aggregate read from the class's column copy, for results over a whole class (all of
    /// it, or what its filters and sorts kept); nil when the rows must be read instead.
    private func columnAggregate(_ op: QueryCollectionOperation, _ field: FieldInfo, _ table: Table) -> QueryValue? {
        guard source.isWholeClass, ColumnAggregate.supports(field.typeInfo.type),
              let storage = core.readableColumns(of: table)
        else { return nil }
        let keys: [ObjectKey]? = steps.isEmpty ? nil : self.keys()
        return ColumnAggregate.apply(op, type: field.typeInfo.type, column: field.rowColumn, storage: storage,
                                     txn: core.transaction, keys: keys)
    }
}

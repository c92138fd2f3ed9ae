import Foundation

/// Results of values: what `filter`, `sorted(ascending:)` and `distinct()` return for a
/// `List`, `MutableSet` or `Map` of values (`scores.filter("self > 3")`). Like results of
/// objects they are live: every read reflects the Realm's current snapshot.
///
/// The collection's values are read and the steps applied once per snapshot change; a
/// predicate compares `self` (the value) as Realm's does.
extension Results {
    /// The values of the source collection after every step, in the current snapshot
    /// (`validating`: see ``validateRead()``).
    func evaluatedValues(validating: Bool = true) -> [Element] {
        if validating { validateRead() } else { core.verifyThread() }
        if ObservationGate.mayTrack { observeRead() }
        if let valueCache, valueCache.stamp == core.changeStamp { return valueCache.values }
        var values = sourceValues()
        for step in steps { values = Self.apply(step, to: values) }
        valueCache?.values = values
        valueCache?.stamp = core.changeStamp
        return values
    }

    /// The collection's values in its order (a map's in key order); empty once its owner is gone.
    private func sourceValues() -> [Element] {
        if case .nestedValues(let nested) = source {
            let binding = NestedCollectionBinding(core: core, root: nested.root, path: nested.path)
            guard binding.isValid else { return [] }
            let values = binding.storedValue().map { value -> [AnyRealmValue] in
                if case .dictionary = value { return binding.dictionaryEntries().map(\.value) }
                return binding.listElements()
            } ?? []
            return values as? [Element] ?? []
        }
        guard case .values(let location) = source, core.rowView(location.table, location.key) != nil else { return [] }
        let stored: [UnsafeRawBufferPointer]
        switch location.field.typeInfo.collection {
        case .set: stored = core.setElements(location)
        case .map: stored = core.mapEntries(location).map(\.value)
        default: stored = core.listElements(location)
        }
        let reader = { (bytes: UnsafeRawBufferPointer) in
            Element._trellisRead(_RowReader(row: RowView(bytes: bytes), core: core), 0)
        }
        return stored.map(reader)
    }

    private static func apply(_ step: ResultsStep, to values: [Element]) -> [Element] {
        switch step {
        case .filter(let predicate):
            return values.filter { ValuePredicate.matches(predicate, QueryArguments.value($0)) }
        case .sort(let descriptors):
            let ascending = descriptors.first?.ascending ?? true
            let keyed = values.map { (value: $0, key: QueryArguments.value($0)) }
            return keyed.sorted { lhs, rhs in
                let order = ValuePredicate.order(lhs.key, rhs.key)
                return ascending ? order < 0 : order > 0
            }.map(\.value)
        case .distinct:
            var seen = Set<Element>()
            return values.filter { seen.insert($0).inserted }
        }
    }

    /// Checks a predicate for results of values: only `self` may be named.
    func checkValuePredicate(_ predicate: QueryPredicate, text: String?) throws(Realm.Error) {
        if let name = ValuePredicate.firstPropertyName(in: predicate) {
            throw Realm.Error(.invalidQuery, "Invalid predicate '\(text ?? predicate.description)': a collection of "
                + "values has no property '\(name)'; compare the values themselves with 'self'.")
        }
    }
}

extension Results {
    /// The class of the elements when they are objects (`Dog`) or optional objects (`Dog?`,
    /// the values of a `Map` of objects); nil for values.
    static var elementObjectType: ObjectBase.Type? {
        if let type = Element.self as? ObjectBase.Type { return type }
        guard let optional = Element.self as? any _QueryOptionalObject.Type else { return nil }
        return wrappedObjectType(optional)
    }

    private static func wrappedObjectType<O: _QueryOptionalObject>(_: O.Type) -> ObjectBase.Type { O._QueryWrapped.self }
}

/// Evaluates a predicate over one value, the `self` of a collection of values.
enum ValuePredicate {
    /// Whether `value` satisfies `predicate`.
    static func matches(_ predicate: QueryPredicate, _ value: QueryValue) -> Bool {
        predicate.holds { compare($0, value) }
    }

    private static func compare(_ comparison: QueryComparison, _ value: QueryValue) -> Bool {
        guard let lhs = operand(comparison.lhs, value), let rhs = operand(comparison.rhs, value) else { return false }
        switch comparison.op {
        case .in:
            guard case .list(let candidates) = rhs else { return QueryValueComparison.equal(lhs, rhs, comparison.options) }
            return candidates.contains { QueryValueComparison.equal(lhs, $0, comparison.options) }
        case .between:
            guard case .list(let bounds) = rhs, bounds.count == 2 else { return false }
            return QueryValueComparison.matches(lhs, .greaterOrEqual, bounds[0], comparison.options)
                && QueryValueComparison.matches(lhs, .lessOrEqual, bounds[1], comparison.options)
        default:
            return QueryValueComparison.matches(lhs, comparison.op, rhs, comparison.options)
        }
    }

    /// The value of one side: `self` (or an empty key path) is the element.
    private static func operand(_ expression: QueryExpression, _ value: QueryValue) -> QueryValue? {
        switch expression {
        case .keyPath: value
        case .constant(let constant), .argument(let constant): constant
        case .list(let items): .list(items.compactMap { operand($0, value) })
        case .subqueryCount: nil
        }
    }

    /// The first key path naming a property (anything but `self`), for the error message.
    static func firstPropertyName(in predicate: QueryPredicate) -> String? {
        switch predicate {
        case .constant: return nil
        case .not(let inner): return firstPropertyName(in: inner)
        case .and(let operands), .or(let operands):
            return operands.lazy.compactMap(firstPropertyName(in:)).first
        case .comparison(let comparison):
            for side in [comparison.lhs, comparison.rhs] {
                if case .keyPath(let path) = side, let name = propertyName(path) { return name }
                if case .subqueryCount = side { return "SUBQUERY" }
            }
            return nil
        }
    }

    /// The property a key path names, nil for `self` (or no component).
    private static func propertyName(_ path: QueryKeyPath) -> String? {
        guard let first = path.components.first else { return nil }
        if case .property(let name) = first, name == "self" || name == "SELF" { return path.components.count > 1 ? name : nil }
        if case .property(let name) = first { return name }
        return "\(first)"
    }

    /// Total order for sorting values: Realm's sort order, as for object properties.
    static func order(_ lhs: QueryValue, _ rhs: QueryValue) -> Int { ResultsPipeline.sortOrder(lhs, rhs) }
}

extension Results {
    /// An aggregate over the values themselves, converted to `T`.
    func aggregateValues<T>(_ op: QueryCollectionOperation) -> T? {
        let type = Element._trellisTypeInfo.type
        let allowed: [PropertyType] = op == .min || op == .max ? [.int, .float, .double, .decimal128, .date, .any]
            : [.int, .float, .double, .decimal128, .any]
        guard allowed.contains(type) else {
            throwRealmException("Invalid property name 'self' for \(op.rawValue.dropFirst()): values of type '\(type)' "
                + "cannot be aggregated.")
        }
        let elements = evaluatedValues()
        let values = elements.map { QueryArguments.value($0) }
        if type == .any, let element: T = QueryAggregate.extremeElement(op, of: elements, values) { return element }
        if type == .any, op == .sum { return AggregateConversion.convert(QueryAggregate.mixedSum(values), to: T.self, core: core) }
        return AggregateConversion.convert(QueryAggregate.apply(op, values), to: T.self, core: core)
    }
}

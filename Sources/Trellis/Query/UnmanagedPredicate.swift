import Foundation

/// Evaluates a predicate over the elements of an unmanaged `List` or `MutableSet`, in memory:
/// what Realm's `index(matching:)` does on a collection no Realm manages (RLMArray evaluates
/// the `NSPredicate` on each element, reading properties by key-value coding).
///
/// Key paths read the element's properties by name, through to-one links and across
/// collections (a comparison across a collection holds when it holds for any value, or as its
/// `ANY`/`ALL`/`NONE` says); `@count`/`@size` count a collection, `@min`/`@max`/`@sum`/`@avg`
/// aggregate it. What the text can say beyond that (`SUBQUERY`, `@links`, map keys) traps with
/// a message naming it, as an unknown property does.
enum UnmanagedPredicate {
    /// The predicate text with its arguments; traps with the parser's message when it does not parse.
    static func parse(_ text: String, _ arguments: [Any]) -> QueryPredicate {
        do {
            return try QueryParser.parse(text, arguments: arguments.map(QueryArguments.value))
        } catch {
            throwRealmException(QueryParser.message(for: error, in: text))
        }
    }

    /// The position of the first element satisfying `predicate`, or nil.
    static func firstIndex<Element>(in elements: [Element], matching predicate: QueryPredicate) -> Int? {
        elements.firstIndex { matches(predicate, $0) }
    }

    static func matches(_ predicate: QueryPredicate, _ element: Any) -> Bool {
        predicate.holds { compare($0, element) }
    }

    private static func compare(_ comparison: QueryComparison, _ element: Any) -> Bool {
        let lhs = operand(comparison.lhs, element)
        let rhs = operand(comparison.rhs, element)
        let holds = { (left: QueryValue, right: QueryValue) -> Bool in
            QueryValueComparison.matches(left, comparison.op, right, comparison.options)
        }
        switch (lhs, rhs) {
        case (.one(let left), .one(let right)):
            return holds(left, right)
        case (.many(let values), .one(let right)):
            return quantified(comparison.quantifier, values) { holds($0, right) }
        case (.one(let left), .many(let values)):
            return quantified(comparison.quantifier, values) { holds(left, $0) }
        case (.many(let lefts), .many(let rights)):
            return quantified(comparison.quantifier, lefts) { left in rights.contains { holds(left, $0) } }
        }
    }

    private static func quantified(_ quantifier: QueryQuantifier, _ values: [QueryValue],
                                   _ test: (QueryValue) -> Bool) -> Bool
    {
        switch quantifier {
        case .single, .any: values.contains(where: test)
        case .all: values.allSatisfy(test)
        case .none: !values.contains(where: test)
        }
    }

    /// One side's value: one value, or the values a key path reaches across a collection.
    private enum Operand {
        case one(QueryValue)
        case many([QueryValue])
    }

    private static func operand(_ expression: QueryExpression, _ element: Any) -> Operand {
        switch expression {
        case .constant(let value), .argument(let value):
            return .one(value)
        case .list(let items):
            return .one(.list(items.map { item in
                switch operand(item, element) {
                case .one(let value): value
                case .many(let values): .list(values)
                }
            }))
        case .keyPath(let path):
            return read(path, from: element)
        case .subqueryCount:
            throwRealmException("SUBQUERY is not supported when matching the elements of an unmanaged collection.")
        }
    }

    /// Follows a key path from an element: `self` is the element.
    private static func read(_ path: QueryKeyPath, from element: Any) -> Operand {
        var current: [Any?] = [element]
        var crossed = false
        for component in path.components {
            switch component {
            case .property(let name) where name == "self" || name == "SELF":
                continue
            case .property(let name):
                var next: [Any?] = []
                for item in current {
                    guard let item else {
                        next.append(nil)  // through a nil link: nil
                        continue
                    }
                    guard let object = item as? ObjectBase else {
                        throwRealmException("Invalid property name '\(name)': \(type(of: item)) has no properties.")
                    }
                    // As stored (an `Int8` as `Int8`, an `AnyRealmValue` as itself); an
                    // unknown name traps with Realm's message.
                    let value = object.storedValue(forKey: name)
                    if let collection = value as? any _KeyValueCollection {
                        crossed = true
                        next += collection._elementsForKeyValueCoding.map { Optional($0) }
                    } else {
                        next.append(value)
                    }
                }
                current = next
            case .operation(let operation) where operation == .count || operation == .size:
                return .one(.int(Int64(crossed ? current.count : current.compactMap { $0 }.count)))
            case .operation(let operation) where operation.isAggregate:
                // `toys.@max.size`: the property after the operator, of each element.
                let rest = QueryKeyPath(Array(path.components.drop { !isOperation($0, operation) }.dropFirst()))
                let values = current.flatMap { element -> [QueryValue] in
                    guard let element else { return [] }
                    switch read(rest, from: element) {
                    case .one(let value): return [value]
                    case .many(let values): return values
                    }
                }
                return .one(QueryAggregate.apply(operation, values))
            default:
                throwRealmException("'\(path.description)' is not supported when matching the elements of an unmanaged "
                    + "collection: only properties, links, collections and @count, @size, @min, @max, @sum, @avg are.")
            }
        }
        let values = current.map { QueryArguments.value($0) }
        if crossed { return .many(values) }
        return .one(values.first ?? .null)
    }

    private static func isOperation(_ component: QueryKeyPathComponent, _ operation: QueryCollectionOperation) -> Bool {
        if case .operation(let other) = component { return other == operation }
        return false
    }
}

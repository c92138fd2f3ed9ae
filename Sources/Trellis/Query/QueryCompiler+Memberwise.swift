import Foundation

/// Realm's memberwise equality: a custom persistable value whose persisted type is an embedded
/// object (`$0.point == CGPoint(x: 1, y: 2)`, `filter("point == %@", point)`) equals a stored
/// object whose properties each equal the value's persisted object's, as Realm's query builder
/// (`add_memberwise_equality_constraint`) makes it:
/// - through a to-one link, `point == p` is `(point.x == p.x && point.y == p.y)` and `point != p`
///   its negation (a nil link has nil members, so it differs from every value);
/// - on a collection of such objects, `ANY line == p` is
///   `SUBQUERY(line, $m, $m.x == p.x && $m.y == p.y).@count > 0`, and `ANY line != p` is
///   `line.@count > 0 && SUBQUERY(…).@count == 0` (a match on every property by one element).
///
/// A persisted type with a collection or a link property cannot be compared this way: the query
/// is refused with Realm's message, naming the property.
extension QueryCompiler {
    /// The test for `c`, a key path to objects `==` or `!=` the persisted `object`.
    func memberwise(_ c: QueryComparison, _ object: ObjectBase) throws(QueryError) -> (QueryScope) -> Bool {
        guard case .keyPath(let path) = c.lhs, c.op == .equal || c.op == .notEqual else {
            throw QueryError(message: "Operator '\(c.op.rawValue)' not supported for type 'object'", offset: nil)
        }
        let members = try memberValues(object)
        let variable = "memberwise"
        func equalities(_ start: QueryKeyPath, _ quantifier: QueryQuantifier) -> QueryPredicate {
            .and(members.map { name, value in
                var member = start
                member.components.append(.property(name))
                return .comparison(QueryComparison(quantifier: quantifier, lhs: .keyPath(member), op: .equal,
                                                   options: [], rhs: .argument(value)))
            })
        }
        guard let collection = try endingCollection(path) else {
            let group = equalities(path, c.quantifier)
            return try predicate(c.op == .equal ? group : .not(group))
        }
        let matches = QueryExpression.subqueryCount(collection: collection, variable: variable,
                                                    predicate: equalities(QueryKeyPath(variable: variable, []), .single))
        func count(_ expression: QueryExpression, _ op: QueryOperator) -> QueryPredicate {
            .comparison(QueryComparison(quantifier: .single, lhs: expression, op: op, options: [],
                                        rhs: .constant(.int(0))))
        }
        if c.op == .equal { return try predicate(count(matches, .greater)) }
        var size = collection
        size.components.append(.operation(.count))
        return try predicate(.and([count(.keyPath(size), .greater), count(matches, .equal)]))
    }

    /// The persisted object's property names and values, in the schema's order.
    private func memberValues(_ object: ObjectBase) throws(QueryError) -> [(String, QueryValue)] {
        let schema = object.objectSchema
        var members: [(String, QueryValue)] = []
        for property in schema.properties {
            if property.collection != .none || property.type == .linkingObjects {
                throw QueryError(message: "Unsupported property '\(schema.className).\(property.name)' for memberwise "
                    + "equality query: equality on collections is not implemented.", offset: nil)
            }
            if property.type == .object {
                throw QueryError(message: "Unsupported property '\(schema.className).\(property.name)' for memberwise "
                    + "equality query: object links are not implemented.", offset: nil)
            }
            members.append((property.name, QueryArguments.value(object.storedValue(forKey: property.name))))
        }
        return members
    }

    /// The key path of the collection of objects `path` ends with (`line`; `map` for
    /// `map.@allValues`), or nil when it ends with a to-one link (`point`, `shapes.point`).
    private func endingCollection(_ path: QueryKeyPath) throws(QueryError) -> QueryKeyPath? {
        var info = try origin(path).info
        var last: FieldInfo?
        for component in path.components {
            switch component {
            case .property(let name):
                let field = try self.field(name, in: info, path)
                last = field
                if let target = resolver.targetClass(field) { info = target }
            case .operation(.allValues):
                continue
            default:
                return nil
            }
        }
        guard let last, last.typeInfo.collection != .none else { return nil }
        var collection = path
        if case .operation(.allValues)? = collection.components.last { collection.components.removeLast() }
        return collection
    }
}

import Foundation

// The text of a typed query as Realm renders it (RealmSwift's `buildPredicate`), with the values
// its `%@` placeholders take, in order: ``Query/description`` and Realm's testing hooks
// `_constructForTesting()` / `_constructPredicate()`.

extension Query {
    /// For testing purposes only (Realm's name): the query of a whole object of `T`, to build a
    /// condition from without a Realm (`query(Query<Person>._constructForTesting())`).
    public static func _constructForTesting() -> Query<T> { Query<T>() }

    /// The predicate text this query stands for, with `%@` for each value, and those values in
    /// the order their placeholders appear (Realm's `_constructPredicate()`; for testing).
    ///
    /// As Realm's: a `Bool` property used as a condition reads `flag == true` (`!flag`:
    /// `flag == false`), `&&`/`||` keep the grouping they were written with, `!` of a group is
    /// `NOT (…)`. Values are given in their stored form: integers as `Int`, floats as `Double`,
    /// an enum or a custom persistable value as its persisted value, `nil` as `NSNull`, a list of
    /// values (`IN %@`) as an array.
    public func _constructPredicate() -> (String, [Any]) {
        var text = TypedQueryText()
        switch node {
        case .path(let path, _) where T.self == Bool.self: text.implicitBool(path, true)
        case .path(let path, _): text.keyPath(path)
        case .expression(let expression): text.expression(expression)
        case .predicate(let predicate, _): text.condition(predicate, asOperand: true)
        }
        return (text.text, text.arguments)
    }
}

/// Renders typed queries' trees. Only the typed builder's trees are rendered here: there a
/// constant `true` compared with a key path can only be a `Bool` property used as a condition
/// (typed comparisons pass their values as arguments).
struct TypedQueryText {
    private(set) var text = ""
    private(set) var arguments: [Any] = []
    /// SUBQUERYs written so far: Realm numbers their variables in the order it writes them
    /// (`$col1`, `$col2`, an inner one after its outer one).
    private var subqueries = 0
    /// The name each subquery variable of the tree is written with, while it is in scope.
    private var variableNames: [String: String] = [:]

    /// `asOperand`: the condition is the whole query or an operand of `&&`/`||`, where Realm
    /// writes a `Bool` property without parentheses.
    mutating func condition(_ predicate: QueryPredicate, asOperand: Bool) {
        switch predicate {
        case .constant(let value): text += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let operands): chain(operands, "&&")
        case .or(let operands): chain(operands, "||")
        case .comparison(let comparison):
            if let path = Self.implicitBoolPath(comparison) { return implicitBool(path, true) }
            text += "("
            comparisonBody(comparison)
            text += ")"
        case .not(let inner):
            switch inner {
            case .comparison(let comparison):
                if let path = Self.implicitBoolPath(comparison) { return implicitBool(path, false) }
                text += "(NOT "
                comparisonBody(comparison)
                text += ")"
            default:
                text += "NOT "
                condition(inner, asOperand: false)
            }
        }
    }

    /// `((a && b) && c)`: a chain as the pairs it was written as.
    private mutating func chain(_ operands: [QueryPredicate], _ symbol: String) {
        guard let first = operands.first else { return }
        text += String(repeating: "(", count: operands.count - 1)
        condition(first, asOperand: true)
        for operand in operands.dropFirst() {
            text += " \(symbol) "
            condition(operand, asOperand: true)
            text += ")"
        }
    }

    private mutating func comparisonBody(_ comparison: QueryComparison) {
        if comparison.quantifier != .single { text += comparison.quantifier.rawValue + " " }
        expression(comparison.lhs)
        text += " \(comparison.op.rawValue)\(comparison.options.suffix) "
        expression(comparison.rhs)
    }

    mutating func implicitBool(_ path: QueryKeyPath, _ value: Bool) {
        keyPath(path)
        text += value ? " == true" : " == false"
    }

    mutating func expression(_ expression: QueryExpression) {
        switch expression {
        case .keyPath(let path): keyPath(path)
        case .constant(let value): text += value.literal
        case .argument(let value):
            text += "%@"
            arguments.append(value.argumentValue)
        case .list(let items):
            text += "{"
            for (index, item) in items.enumerated() {
                if index > 0 { text += ", " }
                self.expression(item)
            }
            text += "}"
        case .subqueryCount(let collection, let variable, let predicate):
            text += "SUBQUERY("
            keyPath(collection)
            subqueries += 1
            let name = "col\(subqueries)", enclosing = variableNames[variable]
            variableNames[variable] = name
            text += ", $\(name), "
            condition(predicate, asOperand: false)
            variableNames[variable] = enclosing
            text += ").@count"
        }
    }

    /// The key path's text, as QueryDescription.swift writes it; a map key (`map[%@]`) takes
    /// its value from the arguments.
    mutating func keyPath(_ path: QueryKeyPath) {
        var written = path.variable.map { "$" + (variableNames[$0] ?? $0) } ?? ""
        for component in path.components {
            let piece: String
            if case .mapKey(let key) = component {
                var inner = TypedQueryText()
                inner.variableNames = variableNames
                inner.expression(key)
                arguments += inner.arguments
                piece = "[\(inner.text)]"
            } else {
                piece = QueryKeyPath([component]).description
            }
            written += written.isEmpty || piece.hasPrefix("[") ? piece : "." + piece
        }
        text += written
    }

    /// The key path of `path == true` written by the builder for a `Bool` property used as a
    /// condition (a constant, which typed comparisons never write).
    private static func implicitBoolPath(_ comparison: QueryComparison) -> QueryKeyPath? {
        guard comparison.op == .equal, case .keyPath(let path) = comparison.lhs,
              case .constant(.bool(true)) = comparison.rhs else { return nil }
        return path
    }
}

extension QueryValue {
    /// The value as a Swift value, for ``Query/_constructPredicate()``.
    fileprivate var argumentValue: Any {
        switch self {
        case .null, .nestedCollection: NSNull()
        case .bool(let b): b
        case .int(let i): Int(truncatingIfNeeded: i)
        case .double(let d): d
        case .string(let s): s
        case .data(let d): d
        case .date(let d): d
        case .objectId(let id): id
        case .uuid(let uuid): uuid
        case .decimal(let d): d
        case .object(let object), .memberwise(let object): object
        case .link(let tableId, let key): (tableId, key)
        case .list(let items): items.map(\.argumentValue)
        case .geo(let shape): shape
        }
    }
}

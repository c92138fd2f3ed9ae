import Foundation

/// The one tree both query front ends produce: the predicate-text parser (``QueryParser``) and
/// the typed builder (``Query``). ``QueryBinder`` checks it against a class's schema and
/// ``QueryEvaluator`` runs the bound form over rows.
package indirect enum QueryPredicate {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// Every operand holds (two or more, flattened: a chain of thousands of `AND`s is one
    /// node, so no pass over it recurses that deep).
    case and([QueryPredicate])
    /// Some operand holds (two or more, flattened like `and`).
    case or([QueryPredicate])
    case not(QueryPredicate)
    case comparison(QueryComparison)
}

/// `[quantifier] lhs op[options] rhs`.
extension QueryPredicate {
    /// `lhs AND rhs`, appended to an existing chain rather than nested in it. With
    /// `keepingRightGroup` (the typed builder), a chain on the right stays one operand, so
    /// `a && (b && c)` renders as written, as Realm renders it.
    static func conjunction(_ lhs: QueryPredicate, _ rhs: QueryPredicate,
                            keepingRightGroup: Bool = false) -> QueryPredicate {
        var operands: [QueryPredicate] = if case .and(let existing) = lhs { existing } else { [lhs] }
        if !keepingRightGroup, case .and(let more) = rhs { operands += more } else { operands.append(rhs) }
        return .and(operands)
    }

    /// `lhs OR rhs`, appended to an existing chain rather than nested in it (`keepingRightGroup`:
    /// as in ``conjunction(_:_:keepingRightGroup:)``).
    static func disjunction(_ lhs: QueryPredicate, _ rhs: QueryPredicate,
                            keepingRightGroup: Bool = false) -> QueryPredicate {
        var operands: [QueryPredicate] = if case .or(let existing) = lhs { existing } else { [lhs] }
        if !keepingRightGroup, case .or(let more) = rhs { operands += more } else { operands.append(rhs) }
        return .or(operands)
    }

    /// Whether the predicate holds, given whether each of its comparisons holds: the one walk of
    /// `TRUEPREDICATE`, `NOT`, `AND` and `OR` that every in-memory evaluator shares (unmanaged
    /// collections, collections of values, sync subscriptions' documents). It recurses only as
    /// deep as the text nests (chains are flat), which the parser bounds.
    package func holds(where comparisonHolds: (QueryComparison) -> Bool) -> Bool {
        switch self {
        case .constant(let result): result
        case .comparison(let comparison): comparisonHolds(comparison)
        case .not(let inner): !inner.holds(where: comparisonHolds)
        case .and(let operands): operands.allSatisfy { $0.holds(where: comparisonHolds) }
        case .or(let operands): operands.contains { $0.holds(where: comparisonHolds) }
        }
    }
}

package struct QueryComparison {
    package var quantifier: QueryQuantifier
    package var lhs: QueryExpression
    package var op: QueryOperator
    package var options: QueryStringOptions
    package var rhs: QueryExpression
}

/// How a comparison treats a key path that crosses a collection.
package enum QueryQuantifier: String {
    /// No quantifier: the key path must give a single value.
    case single = ""
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

package enum QueryOperator: String, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case `in` = "IN"
    case between = "BETWEEN"

    var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like: true
        default: false
        }
    }

    /// The operator that gives the same answer with its operands swapped (`5 < age` is `age > 5`).
    var mirrored: QueryOperator {
        switch self {
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: self
        }
    }
}

/// `[c]`, `[d]`, `[cd]`.
package struct QueryStringOptions: OptionSet, Hashable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    package static let caseInsensitive = QueryStringOptions(rawValue: 1)
    package static let diacriticInsensitive = QueryStringOptions(rawValue: 2)

    var suffix: String {
        switch (contains(.caseInsensitive), contains(.diacriticInsensitive)) {
        case (true, true): "[cd]"
        case (true, false): "[c]"
        case (false, true): "[d]"
        case (false, false): ""
        }
    }
}

package indirect enum QueryExpression {
    case keyPath(QueryKeyPath)
    /// A literal written in the text (`5`, `'Rex'`, `nil`, `oid(...)`).
    case constant(QueryValue)
    /// A value passed as an argument (`%@`, `$0`, or by the typed builder); renders as `%@`.
    case argument(QueryValue)
    /// `{a, b, c}`.
    case list([QueryExpression])
    /// `SUBQUERY(collection, $variable, predicate).@count`.
    case subqueryCount(collection: QueryKeyPath, variable: String, predicate: QueryPredicate)
}

/// A dotted key path, optionally starting at a subquery variable (`$x.age`).
package struct QueryKeyPath {
    package var variable: String?
    package var components: [QueryKeyPathComponent]

    init(variable: String? = nil, _ components: [QueryKeyPathComponent]) {
        self.variable = variable
        self.components = components
    }
}

package enum QueryKeyPathComponent {
    case property(String)
    /// `map['key']` (also `map[%@]`).
    case mapKey(QueryExpression)
    /// `@count`, `@size`, `@min`, `@max`, `@sum`, `@avg`, `@allKeys`, `@allValues`.
    case operation(QueryCollectionOperation)
    /// `@links.Class.property`.
    case links(className: String, property: String)
    /// `@links.@count`: every incoming link, duplicates included.
    case linksCount
    /// `[*]`: every element (or value) of a collection nested in an `AnyRealmValue`.
    case allElements
}

package enum QueryCollectionOperation: String {
    case count = "@count"
    case size = "@size"
    case min = "@min"
    case max = "@max"
    case sum = "@sum"
    case avg = "@avg"
    case allKeys = "@allKeys"
    case allValues = "@allValues"

    var isAggregate: Bool { self == .min || self == .max || self == .sum || self == .avg }
}

/// A value in a query: a literal, an argument, or (during evaluation) a value read from a row.
package enum QueryValue {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case objectId(ObjectId)
    case uuid(UUID)
    case decimal(Decimal128)
    /// An object passed as an argument (compared by identity).
    case object(ObjectBase)
    /// A custom persistable value passed as an argument whose persisted type is an (embedded)
    /// object: `==` and `!=` compare a stored object with it property by property, as in Realm
    /// (see QueryCompiler+Memberwise.swift).
    case memberwise(ObjectBase)
    /// An object read from a row: its table and key.
    case link(tableId: UInt32, key: ObjectKey)
    /// An array or set passed as an argument (`IN %@`, `BETWEEN %@`).
    case list([QueryValue])
    /// A list or dictionary nested in an `AnyRealmValue` (its elements are reached with
    /// `[index]`, `['key']` or `[*]`), or passed as one (`anyCol == %@` with
    /// `AnyRealmValue.list(…)`). As realm-core's Mixed, it is not nil and equals (and orders
    /// equal to) every collection of its kind, whatever they hold, and nothing else.
    case nestedCollection(NestedCollectionKind)
    /// A ``GeoBox``, ``GeoPolygon`` or ``GeoCircle`` (`location IN %@`, `geoWithin`).
    case geo(GeoShape)

    var isNull: Bool { if case .null = self { true } else { false } }
}

/// What a ``QueryValue/nestedCollection(_:)`` is.
package enum NestedCollectionKind: Hashable {
    case list
    case dictionary
}

import Foundation

// Comparisons of one property with another of the same object (`$0.priority < $0.limit`,
// `$0.name.contains($0.nickname)`), as Realm's typed queries allow.

extension Query {
    /// This query as the right-hand side of a comparison: its key path or expression.
    var operand: QueryExpression {
        switch node {
        case .path(let path, _): return .keyPath(path)
        case .expression(let expression): return expression
        case .predicate:
            throwRealmException("Cannot compare with a condition ('\(self)'); compare with a property or its .count.")
        }
    }

    /// Equal to another property.
    public static func == (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.equal, rhs.operand) }
    /// Not equal to another property.
    public static func != (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.notEqual, rhs.operand) }
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryComparable {
    /// Greater than another property.
    public static func > (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greater, rhs.operand) }
    /// Greater than or equal to another property.
    public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greaterOrEqual, rhs.operand) }
    /// Less than another property.
    public static func < (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.less, rhs.operand) }
    /// Less than or equal to another property.
    public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.lessOrEqual, rhs.operand) }
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryBinary {
    /// Contains the value of another string or binary property (`CONTAINS`).
    public func contains<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool>
        where U: _Persistable, U.PersistedType: _QueryBinary
    {
        compare(.contains, column.operand, options: options.queryOptions)
    }

    /// Starts with the value of another string or binary property (`BEGINSWITH`).
    public func starts<U>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.beginsWith, column.operand, options: options.queryOptions)
    }

    /// Ends with the value of another string or binary property (`ENDSWITH`).
    public func ends<U>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.endsWith, column.operand, options: options.queryOptions)
    }

    /// Equals the value of another string or binary property with the options (`==[c]`).
    public func equals<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.equal, column.operand, options: options.queryOptions)
    }

    /// Differs from the value of another string or binary property with the options (`!=[c]`).
    public func notEquals<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.notEqual, column.operand, options: options.queryOptions)
    }
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryString {
    /// Matches the pattern held by another string property (`LIKE`).
    public func like<U>(_ column: Query<U>, caseInsensitive: Bool = false) -> Query<Bool> {
        compare(.like, column.operand, options: caseInsensitive ? .caseInsensitive : [])
    }
}

import Foundation

/// Checks a query tree against a class's schema and turns it into a test over rows.
///
/// Compiled once per evaluation (the tables it looks up belong to the current snapshot); the
/// test reads only the columns the predicate names, straight from the row bytes, and follows a
/// link with one lookup, never a join.
final class QueryCompiler {
    unowned let core: RealmCore
    let rootInfo: ClassInfo
    /// Where link targets, origins and tables come from.
    let resolver: QueryClassResolver
    /// Subquery variables in scope: their depth in ``QueryScope`` and their class.
    var variables: [String: (depth: Int, info: ClassInfo)] = [:]
    /// The element of the innermost SUBQUERY being compiled: where a key path without a
    /// variable starts inside it, as in realm-core (and NSPredicate), which evaluates a
    /// SUBQUERY's predicate on each element (`SUBQUERY(kids, $k, $k.age > age)` compares two
    /// ages of the element; an inner `SUBQUERY(kids, …)` counts the element's kids). Nil outside
    /// any SUBQUERY: the object being tested.
    var innermostElement: (depth: Int, info: ClassInfo)?
    private var depth = 0
    private(set) var maximumDepth = 0

    init(core: RealmCore, rootInfo: ClassInfo, resolver: QueryClassResolver? = nil) {
        self.core = core
        self.rootInfo = rootInfo
        self.resolver = resolver ?? .models(core)
    }

    /// A compiled predicate and the scope depth it needs.
    struct Compiled {
        let test: (QueryScope) -> Bool
        let depth: Int

        func makeScope() -> QueryScope { QueryScope(depth: depth) }
    }

    static func compile(_ predicate: QueryPredicate, for info: ClassInfo, in core: RealmCore,
                        resolver: QueryClassResolver? = nil) throws(QueryError) -> Compiled
    {
        let compiler = QueryCompiler(core: core, rootInfo: info, resolver: resolver)
        let test = try compiler.predicate(predicate)
        return Compiled(test: test, depth: compiler.maximumDepth)
    }

    func predicate(_ predicate: QueryPredicate) throws(QueryError) -> (QueryScope) -> Bool {
        switch predicate {
        case .constant(let value):
            return { _ in value }
        case .and(let operands):
            var tests: [(QueryScope) -> Bool] = []
            tests.reserveCapacity(operands.count)
            for operand in operands { tests.append(try self.predicate(operand)) }
            return { scope in tests.allSatisfy { $0(scope) } }
        case .or(let operands):
            var tests: [(QueryScope) -> Bool] = []
            tests.reserveCapacity(operands.count)
            for operand in operands { tests.append(try self.predicate(operand)) }
            return { scope in tests.contains { $0(scope) } }
        case .not(let inner):
            let a = try self.predicate(inner)
            return { !a($0) }
        case .comparison(let comparison):
            return try self.comparison(comparison)
        }
    }

    // MARK: - Comparisons

    private func comparison(_ original: QueryComparison) throws(QueryError) -> (QueryScope) -> Bool {
        var c = original
        if !isPath(c.lhs), isPath(c.rhs) {
            if c.op == .in {
                // `%@ IN list` means `ANY list == %@`.
                c = QueryComparison(quantifier: .any, lhs: c.rhs, op: .equal, options: c.options, rhs: c.lhs)
            } else {
                c = QueryComparison(quantifier: c.quantifier, lhs: c.rhs, op: c.op.mirrored, options: c.options,
                                    rhs: c.lhs)
            }
        }
        guard isPath(c.lhs) else {
            let a = try constant(c.lhs), b = try constant(c.rhs)
            let result = QueryValueComparison.matches(a, c.op, b, c.options)
            return { _ in result }
        }
        let lhs = try operand(c.lhs)
        if case .argument(.geo(let shape)) = c.rhs { return try geoWithin(lhs, shape, c) }
        if case .constant(.geo(let shape)) = c.rhs { return try geoWithin(lhs, shape, c) }
        if lhs.impliesAny, c.quantifier == .single {
            // `anyCol[*] == 1` compares every element reached, as `ANY` does.
            c = QueryComparison(quantifier: .any, lhs: c.lhs, op: c.op, options: c.options, rhs: c.rhs)
        }
        if lhs.values.isMany, c.quantifier == .single {
            throw QueryError(message: "Key paths that include a collection property must use aggregate operations "
                + "(ANY, ALL, NONE, @count, …): '\(c.lhs)'", offset: nil)
        }
        if isPath(c.rhs) {
            let rhs = try operand(c.rhs)
            if rhs.values.isMany {
                throw QueryError(message: "Comparing two collection columns is not permitted.", offset: nil)
            }
            try check(c.op, c.options, for: lhs)
            guard case .single(let right) = rhs.values else { return { _ in false } }
            return quantified(c.quantifier, lhs.values, c.op, c.options) { right($0) }
        }
        let value = try constant(c.rhs)
        if case .memberwise(let object) = value, lhs.type == .object {
            return try memberwise(c, object)
        }
        try check(c.op, c.options, for: lhs)
        try check(value, c.op, against: lhs)
        if let direct = lhs.directColumn, lhs.type == .int, c.quantifier == .single, c.options.isEmpty,
           case .int(let bound) = value, let test = Self.directIntegerTest(c.op, bound, direct.depth, direct.column)
        {
            // The scan's fastest path: one closure from the row bytes to the answer.
            return test
        }
        if case .single(let left) = lhs.values, lhs.type == .int, c.quantifier == .single, c.options.isEmpty,
           case .int(let bound) = value, let test = Self.integerTest(c.op, bound)
        {
            // The scan's fast path: an integer column against an integer constant.
            return { scope in
                if case .int(let a) = left(scope) { return test(a) }
                return false
            }
        }
        // realm-core orders a String or Data property of the row itself against a constant as
        // its StringData and BinaryData do: nil before every value.
        let nullsFirst = lhs.directColumn != nil && (lhs.type == .string || lhs.type == .data)
        return quantified(c.quantifier, lhs.values, c.op, c.options, nullsFirst: nullsFirst) { _ in value }
    }

    /// An integer column of the row at `depth` against a constant (nil never matches). Spells
    /// out each operator rather than wrapping `integerTest`: the extra closure call costs 6%
    /// of a full scan (callgrind, 281 vs 298 instructions per row).
    private static func directIntegerTest(_ op: QueryOperator, _ b: Int64, _ depth: Int, _ column: Int)
        -> ((QueryScope) -> Bool)?
    {
        @inline(__always) func value(_ scope: QueryScope) -> Int64? {
            guard let row = scope[depth], !row.row.isNull(column) else { return nil }
            return row.row.int(column)
        }
        switch op {
        case .equal: return { scope in value(scope).map { $0 == b } ?? false }
        case .less: return { scope in value(scope).map { $0 < b } ?? false }
        case .lessOrEqual: return { scope in value(scope).map { $0 <= b } ?? false }
        case .greater: return { scope in value(scope).map { $0 > b } ?? false }
        case .greaterOrEqual: return { scope in value(scope).map { $0 >= b } ?? false }
        default: return nil
        }
    }

    private static func integerTest(_ op: QueryOperator, _ b: Int64) -> ((Int64) -> Bool)? {
        switch op {
        case .equal: { $0 == b }
        case .less: { $0 < b }
        case .lessOrEqual: { $0 <= b }
        case .greater: { $0 > b }
        case .greaterOrEqual: { $0 >= b }
        default: nil
        }
    }

    private func quantified(_ quantifier: QueryQuantifier, _ lhs: QueryValueSource, _ op: QueryOperator,
                            _ options: QueryStringOptions, nullsFirst: Bool = false,
                            rhs: @escaping (QueryScope) -> QueryValue) -> (QueryScope) -> Bool
    {
        switch lhs {
        case .single(let left):
            let test = { (scope: QueryScope) in
                QueryValueComparison.matches(left(scope), op, rhs(scope), options, nullsFirst: nullsFirst)
            }
            return quantifier == .none ? { !test($0) } : test
        case .many(let visit):
            switch quantifier {
            case .all:
                return { scope in
                    let right = rhs(scope)
                    return !visit(scope) { !QueryValueComparison.matches($0, op, right, options) }
                }
            case .none:
                return { scope in
                    let right = rhs(scope)
                    return !visit(scope) { QueryValueComparison.matches($0, op, right, options) }
                }
            case .any, .single:
                return { scope in
                    let right = rhs(scope)
                    return visit(scope) { QueryValueComparison.matches($0, op, right, options) }
                }
            }
        }
    }

    private func isPath(_ expression: QueryExpression) -> Bool {
        switch expression {
        case .keyPath, .subqueryCount: true
        default: false
        }
    }

    private func operand(_ expression: QueryExpression) throws(QueryError) -> QueryOperand {
        switch expression {
        case .keyPath(let path):
            return try operand(path)
        case .subqueryCount(let collection, let variable, let predicate):
            return try subqueryCount(collection, variable, predicate)
        default:
            throw QueryError(message: "expected a key path", offset: nil)
        }
    }

    private func constant(_ expression: QueryExpression) throws(QueryError) -> QueryValue {
        switch expression {
        case .constant(let value), .argument(let value): return value
        case .list(let items):
            var values = [QueryValue]()
            for item in items { values.append(try constant(item)) }
            return .list(values)
        case .keyPath, .subqueryCount:
            throw QueryError(message: "expected a value", offset: nil)
        }
    }

    // MARK: - Subqueries

    private func subqueryCount(_ collection: QueryKeyPath, _ variable: String, _ predicate: QueryPredicate)
        throws(QueryError) -> QueryOperand
    {
        let (rows, element) = try objectRows(collection)
        depth += 1
        let level = depth
        maximumDepth = max(maximumDepth, level)
        let shadowed = variables[variable], enclosing = innermostElement
        variables[variable] = (level, element)
        innermostElement = (level, element)
        defer {
            variables[variable] = shadowed
            innermostElement = enclosing
            depth -= 1
        }
        let test = try self.predicate(predicate)
        let count: QueryValueSource = .single { scope in
            var matches = 0
            _ = rows.visit(scope) { row in
                scope[level] = row
                if test(scope) { matches += 1 }
                return false
            }
            return .int(Int64(matches))
        }
        return QueryOperand(values: count, type: .int, className: element.className, propertyName: "SUBQUERY",
                            objectClassName: nil)
    }

    // MARK: - Type checks

    private func check(_ op: QueryOperator, _ options: QueryStringOptions, for operand: QueryOperand)
        throws(QueryError)
    {
        let type = operand.type
        let typeName = type == .object ? "object" : type.description
        if type == .object, ![.equal, .notEqual, .in].contains(op) {
            throw QueryError(message: "Operator '\(op.rawValue)' not supported for type 'object'", offset: nil)
        }
        if op.isStringOperator, ![.string, .data, .any].contains(type) {
            throw QueryError(message: "Operator '\(op.rawValue)' not supported for type '\(typeName)'", offset: nil)
        }
        if type == .bool, ![.equal, .notEqual, .in].contains(op) {
            throw QueryError(message: "Operator '\(op.rawValue)' not supported for type 'bool'", offset: nil)
        }
        if op == .like, options.contains(.diacriticInsensitive) {
            throw QueryError(message: "Operator 'LIKE' not supported with diacritic-insensitive modifier.", offset: nil)
        }
        if !options.isEmpty, ![.string, .any].contains(type) {
            throw QueryError(message: "String options [c] and [d] apply only to strings, not to '\(typeName)' "
                + "property '\(operand.className).\(operand.propertyName)'", offset: nil)
        }
    }

    private func check(_ value: QueryValue, _ op: QueryOperator, against operand: QueryOperand) throws(QueryError) {
        switch op {
        case .between:
            guard case .list(let bounds) = value, bounds.count == 2 else {
                throw QueryError(message: "Predicate with BETWEEN operator must compare a KeyPath with an aggregate "
                    + "with two values", offset: nil)
            }
            for bound in bounds { try checkType(bound, operand) }
        case .in:
            guard case .list(let items) = value else {
                throw QueryError(message: "IN needs a list of values ('{1, 2}' or an array argument) on its right, "
                    + "for '\(operand.className).\(operand.propertyName)'", offset: nil)
            }
            for item in items { try checkType(item, operand) }
        default:
            try checkType(value, operand)
        }
    }

    private func checkType(_ value: QueryValue, _ operand: QueryOperand) throws(QueryError) {
        let fits: Bool
        switch (operand.type, value) {
        case (_, .null), (.any, _): fits = true
        case (.int, .int), (.int, .double), (.int, .decimal),
             (.float, .int), (.float, .double), (.float, .decimal),
             (.double, .int), (.double, .double), (.double, .decimal),
             (.decimal128, .int), (.decimal128, .double), (.decimal128, .decimal):
            fits = true
        case (.bool, .bool), (.bool, .int): fits = true
        case (.string, .string), (.data, .data), (.data, .string), (.date, .date), (.objectId, .objectId),
             (.UUID, .uuid):
            fits = true
        case (.object, .object(let object)):
            if let managed = object._managed, managed.core.file !== core.file {
                throw QueryError(message: "Object must be from the Realm being queried", offset: nil)
            }
            fits = object.objectSchema.className == operand.objectClassName || object._managed == nil
        case (.object, .link): fits = true
        default: fits = false
        }
        if !fits {
            throw QueryError(message: "Expected object of type \(operand.type == .object ? operand.objectClassName ?? "object" : operand.type.description) "
                + "for property '\(operand.propertyName)' on object of type '\(operand.className)', but received: "
                + "\(value.literal)", offset: nil)
        }
    }
}

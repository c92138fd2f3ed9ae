import Foundation
import Trellis

/// A value bound to a placeholder (`$1`, `$2`, …) of a condition made by
/// ``SyncQuery/sqlCondition(document:parameters:)``: literals and property names travel as
/// parameters, never inside the SQL text.
enum SyncSQLParameter: Sendable, Equatable {
    case text(String)
    case int(Int64)
    case double(Double)
}

extension SyncQuery {
    /// The query as a PostgreSQL condition over a `jsonb` document column, for the server's
    /// bootstraps: TRUE for a document the query selects, FALSE for one it does not, and NULL
    /// where SQL cannot decide exactly as ``matches(_:)`` does (a comparison it does not
    /// translate, or a stored value of a shape it does not read). Select with
    /// `WHERE (condition) IS NOT FALSE` and check the rows with ``matches(_:)``: SQL's
    /// three-valued logic keeps every undecided row, so nothing the query selects is lost.
    ///
    /// Translated: comparisons of a property (top-level, or inside embedded objects) with a literal (`==`, `!=`, `<`, `<=`,
    /// `>`, `>=`, `IN`, `BETWEEN`; `BEGINSWITH`, `ENDSWITH`, `LIKE`; `CONTAINS` and `[c]`/`[d]`
    /// on printable ASCII) for nil, bools, integers, finite doubles, strings and ObjectIds,
    /// under `AND`, `OR`, `NOT` and `ANY`/`ALL`/`NONE`. Numbers compare across kinds as in
    /// Realm (exactly between integers, as doubles otherwise); strings in Unicode scalar
    /// order of their NFC form (Swift's `String` order) with `COLLATE "C"`.
    ///
    /// - Parameters:
    ///   - column: the SQL expression of the document (`doc`); trusted text.
    ///   - parameters: the values bound so far; the condition's are appended and its
    ///     placeholders numbered after them.
    func sqlCondition(document column: String, parameters: inout [SyncSQLParameter]) -> String {
        var translator = SyncSQLTranslator(column: column, parameters: parameters)
        let condition = translator.condition(predicate)
        parameters = translator.parameters
        return condition
    }

    /// Whether ``sqlCondition(document:parameters:)`` translates every comparison of the
    /// query (it still leaves to Swift the documents whose values have shapes it does not read).
    var isTranslatedToSQL: Bool {
        var translator = SyncSQLTranslator(column: "doc", parameters: [])
        _ = translator.condition(predicate)
        return translator.translatedEverything
    }
}

/// Builds the SQL of ``SyncQuery/sqlCondition(document:parameters:)``, mirroring
/// ``SyncQuery``'s evaluator and ``QueryValueComparison`` case by case. Server code: it reads
/// the core's query tree (`package` level), and the core library holds none of it.
struct SyncSQLTranslator {
    let column: String
    var parameters: [SyncSQLParameter]
    var translatedEverything = true

    /// SQL for "cannot decide here".
    private static let unknown = "NULL::boolean"
    /// The keys of the Extended JSON wrappers of a value (a JSON object that is a value, not an
    /// embedded object).
    private static let wrappers = "array['$numberLong','$numberInt','$numberDouble','$oid','$numberDecimal','$date','$binary']"

    mutating func condition(_ predicate: QueryPredicate) -> String {
        switch predicate {
        case .constant(let value): return value ? "TRUE" : "FALSE"
        case .and(let operands): return "(" + operands.map { condition($0) }.joined(separator: " AND ") + ")"
        case .or(let operands): return "(" + operands.map { condition($0) }.joined(separator: " OR ") + ")"
        case .not(let inner): return "(NOT " + condition(inner) + ")"
        case .comparison(let comparison):
            let bound = parameters.count
            if let sql = translate(comparison) { return sql }
            parameters.removeLast(parameters.count - bound)
            translatedEverything = false
            return Self.unknown
        }
    }

    mutating func bind(_ parameter: SyncSQLParameter) -> String {
        parameters.append(parameter)
        return "$\(parameters.count)"
    }

    // MARK: - Comparisons

    /// `property op literal`, or nil when it is not translated.
    private mutating func translate(_ comparison: QueryComparison) -> String? {
        guard case .keyPath(let path) = comparison.lhs, path.variable == nil, !path.components.isEmpty else { return nil }
        var names = [String]()
        for component in path.components {
            guard case .property(let name) = component else { return nil }
            names.append(name)
        }
        // Through embedded objects (`address.city`): the objects on the way, outermost first.
        var value = column
        var steps = [String]()
        for (index, name) in names.enumerated() {
            value = "(\(value) -> \(bind(.text(name)))::text)"
            if index < names.count - 1 { steps.append(value) }
        }
        let test: String
        switch comparison.op {
        case .in:
            guard let items = Self.literals(comparison.rhs) else {
                guard let literal = Self.literal(comparison.rhs) else { return nil }
                guard let sql = compare(value, .equal, literal, comparison.options) else { return nil }
                test = sql
                break
            }
            var tests = [String]()
            for item in items {
                guard let sql = compare(value, .equal, item, comparison.options) else { return nil }
                tests.append(sql)
            }
            test = tests.isEmpty ? "FALSE" : "(" + tests.joined(separator: " OR ") + ")"
        case .between:
            guard let bounds = Self.literals(comparison.rhs) else {
                // BETWEEN without two bounds selects nothing.
                guard Self.literal(comparison.rhs) != nil else { return nil }
                test = "FALSE"
                break
            }
            guard bounds.count == 2 else { test = "FALSE"; break }
            guard let low = compare(value, .greaterOrEqual, bounds[0], comparison.options),
                  let high = compare(value, .lessOrEqual, bounds[1], comparison.options) else { return nil }
            test = "(\(low) AND \(high))"
        default:
            guard let literal = Self.literal(comparison.rhs),
                  let sql = compare(value, comparison.op, literal, comparison.options) else { return nil }
            test = sql
        }
        // A collection's elements are each compared in Swift (ANY/ALL/NONE over them).
        var perValue = "CASE WHEN jsonb_typeof(\(value)) = 'array' THEN NULL ELSE \(test) END"
        // A step that is missing, null or a scalar gives no value at all, as in the evaluator:
        // ANY finds nothing (FALSE), ALL holds (TRUE), NONE holds (NOT FALSE). A plain object
        // goes on; anything else (an array of embedded objects, a value in an Extended JSON
        // wrapper such as a link's primary key) is left to Swift.
        let noValue = comparison.quantifier == .all ? "TRUE" : "FALSE"
        for step in steps.reversed() {
            perValue = "CASE WHEN \(step) IS NULL OR jsonb_typeof(\(step)) IN ('null', 'string', 'number', 'boolean') "
                + "THEN \(noValue) WHEN jsonb_typeof(\(step)) = 'object' AND NOT (\(step) ?| \(Self.wrappers)) "
                + "THEN (\(perValue)) ELSE NULL END"
        }
        return comparison.quantifier == .none ? "(NOT (\(perValue)))" : "(\(perValue))"
    }

    /// A scalar literal on the right-hand side.
    private static func literal(_ expression: QueryExpression) -> QueryValue? {
        switch expression {
        case .constant(let value), .argument(let value):
            if case .list = value { return nil }
            return value
        default: return nil
        }
    }

    /// The literals of `{a, b}` or of an array argument.
    private static func literals(_ expression: QueryExpression) -> [QueryValue]? {
        switch expression {
        case .list(let items):
            var values = [QueryValue]()
            for item in items {
                guard let value = literal(item) else { return nil }
                values.append(value)
            }
            return values
        case .constant(.list(let values)), .argument(.list(let values)):
            return values.contains { if case .list = $0 { true } else { false } } ? nil : values
        default: return nil
        }
    }

    /// What Swift's `QueryValueComparison.matches(stored, op, literal, options)` gives, by the
    /// kind of the stored value (a CASE over `jsonb_typeof` and the Extended JSON wrappers, in
    /// the evaluator's order); nil when the literal's kind or the operator is not translated.
    private mutating func compare(_ value: String, _ op: QueryOperator, _ literal: QueryValue,
                                  _ options: QueryStringOptions) -> String? {
        let kinds: [StoredKind] = [.null, .string, .bool, .plainNumber, .int("$numberLong"), .int("$numberInt"),
                                   .double, .objectId]
        var results = [StoredKind: String]()
        for kind in kinds {
            guard let result = result(kind, value, op, literal, options) else { return nil }
            results[kind] = result
        }
        func r(_ kind: StoredKind) -> String { results[kind] ?? Self.unknown }
        let wrappers = Self.wrappers
        return """
            (CASE WHEN \(value) IS NULL OR jsonb_typeof(\(value)) = 'null' THEN \(r(.null)) \
            WHEN jsonb_typeof(\(value)) = 'string' THEN \(r(.string)) \
            WHEN jsonb_typeof(\(value)) = 'boolean' THEN \(r(.bool)) \
            WHEN jsonb_typeof(\(value)) = 'number' THEN \(r(.plainNumber)) \
            WHEN jsonb_typeof(\(value)) <> 'object' THEN NULL \
            WHEN jsonb_typeof(\(value) -> '$numberLong') = 'string' AND \(value) ->> '$numberLong' ~ '^-?[0-9]{1,18}$' \
            THEN \(r(.int("$numberLong"))) \
            WHEN \(value) ? '$numberLong' THEN NULL \
            WHEN jsonb_typeof(\(value) -> '$numberInt') = 'string' AND \(value) ->> '$numberInt' ~ '^-?[0-9]{1,18}$' \
            THEN \(r(.int("$numberInt"))) \
            WHEN \(value) ? '$numberInt' THEN NULL \
            WHEN jsonb_typeof(\(value) -> '$numberDouble') = 'string' \
            AND \(value) ->> '$numberDouble' ~ '^-?[0-9]{1,20}(\\.[0-9]{1,20})?([eE][-+]?[0-9]{1,2})?$' THEN \(r(.double)) \
            WHEN \(value) ? '$numberDouble' THEN NULL \
            WHEN jsonb_typeof(\(value) -> '$oid') = 'string' AND \(value) ->> '$oid' ~ '^[0-9a-f]{24}$' \
            THEN \(r(.objectId)) \
            WHEN \(value) ?| \(wrappers) THEN NULL \
            ELSE \(r(.null)) END)
            """
    }
}

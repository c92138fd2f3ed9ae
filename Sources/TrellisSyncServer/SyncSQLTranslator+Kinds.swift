import Foundation
import Trellis

/// The kinds of stored value the SQL of a subscription reads, as the evaluator classifies a
/// document's value (``SyncQuery/queryValue(_:)``).
enum StoredKind: Hashable {
    /// Missing, JSON null, or an object that is no Extended JSON wrapper.
    case null
    case string
    case bool
    /// A plain JSON number (a row written with SQL): an integer when its text is one that
    /// fits Int64, else a double.
    case plainNumber
    /// `{"$numberLong": "…"}` or `{"$numberInt": "…"}` (the key) with 1 to 18 digits.
    case int(String)
    /// `{"$numberDouble": "…"}` with a plain decimal text.
    case double
    /// `{"$oid": "…"}` with 24 lowercase hexadecimal digits.
    case objectId
}

extension SyncSQLTranslator {
    /// Swift's `matches(stored, op, literal, options)` for a stored value of `kind`, in SQL;
    /// nil when not translated.
    mutating func result(_ kind: StoredKind, _ value: String, _ op: QueryOperator, _ literal: QueryValue,
                         _ options: QueryStringOptions) -> String? {
        switch op {
        case .equal: return equality(kind, value, literal, options)
        case .notEqual: return equality(kind, value, literal, options).map { "(NOT \($0))" }
        case .less, .lessOrEqual, .greater, .greaterOrEqual: return ordering(kind, value, op, literal, options)
        case .beginsWith, .endsWith, .contains, .like: return stringOperator(kind, value, op, literal, options)
        case .in, .between: return nil
        }
    }

    // MARK: - Stored values as SQL

    private func text(_ value: String) -> String { "(\(value) #>> '{}')" }
    private func exactInteger(_ key: String, _ value: String) -> String { "((\(value) ->> '\(key)')::numeric)" }
    private func extendedDouble(_ value: String) -> String { "((\(value) ->> '$numberDouble')::float8)" }
    private func objectIdText(_ value: String) -> String { "(\(value) ->> '$oid')" }

    /// A `numeric` that converts to `float8` without overflow or underflow (PostgreSQL raises
    /// an error for those).
    private static func fitsDouble(_ number: String) -> String {
        "(\(number) = 0 OR abs(\(number)) BETWEEN 1e-300 AND 1e300)"
    }

    /// The largest integer every double holds exactly, so a comparison as doubles is exact.
    private static let exactDoubleLimit: UInt64 = 1 << 53

    // MARK: - Equality and order

    private mutating func equality(_ kind: StoredKind, _ value: String, _ literal: QueryValue,
                                   _ options: QueryStringOptions) -> String? {
        switch literal {
        case .null: return kind == .null ? "TRUE" : "FALSE"
        case .bool(let b): return kind == .bool ? "(\(value) = '\(b)'::jsonb)" : "FALSE"
        case .int, .double, .string, .objectId: return ordering(kind, value, nil, literal, options)
        default: return nil
        }
    }

    /// `op` nil: equality (for literals whose equality is "orders as equal").
    private mutating func ordering(_ kind: StoredKind, _ value: String, _ op: QueryOperator?, _ literal: QueryValue,
                                   _ options: QueryStringOptions) -> String? {
        let sqlOp: String
        switch op {
        case nil: sqlOp = "="
        case .less?: sqlOp = "<"
        case .lessOrEqual?: sqlOp = "<="
        case .greater?: sqlOp = ">"
        case .greaterOrEqual?: sqlOp = ">="
        default: return nil
        }
        switch literal {
        case .null:
            // As realm-core's Mixed order (QueryValueComparison): nil orders with nothing, but two
            // nils are `<=` and `>=` each other.
            guard kind == .null, op == .lessOrEqual || op == .greaterOrEqual else { return "FALSE" }
            return "TRUE"
        case .bool(let b):
            // Bools are equal or unordered.
            guard kind == .bool, op == .lessOrEqual || op == .greaterOrEqual else { return "FALSE" }
            return "(\(value) = '\(b)'::jsonb)"
        case .int(let j):
            switch kind {
            case .plainNumber:
                let number = "(\(value))::numeric"
                // As doubles: exact when the literal is a double exactly, or when the stored
                // number is below 2^53 (the rounded literal is then still beyond it).
                let doubles = "\(number)::float8 \(sqlOp) \(bind(.int(j)))::bigint::float8"
                let asDoubles = j.magnitude <= Self.exactDoubleLimit ? doubles
                    : "CASE WHEN abs(\(number)) < \(Self.exactDoubleLimit) THEN \(doubles) ELSE NULL END"
                return """
                    (CASE WHEN (\(value))::text ~ '^-?[0-9]+$' AND \(number) BETWEEN -9223372036854775808 \
                    AND 9223372036854775807 THEN \(number) \(sqlOp) \(bind(.int(j)))::bigint \
                    WHEN \(Self.fitsDouble(number)) THEN \(asDoubles) ELSE NULL END)
                    """
            case .int(let key): return "(\(exactInteger(key, value)) \(sqlOp) \(bind(.int(j)))::bigint)"
            case .double: return "(\(extendedDouble(value)) \(sqlOp) \(bind(.int(j)))::bigint::float8)"
            default: return "FALSE"
            }
        case .double(let b):
            guard b.isFinite else { return nil }
            switch kind {
            case .plainNumber:
                let number = "(\(value))::numeric"
                return "(CASE WHEN \(Self.fitsDouble(number)) THEN \(number)::float8 \(sqlOp) \(bind(.double(b)))::float8 "
                    + "ELSE NULL END)"
            case .int(let key): return "(\(exactInteger(key, value))::float8 \(sqlOp) \(bind(.double(b)))::float8)"
            case .double: return "(\(extendedDouble(value)) \(sqlOp) \(bind(.double(b)))::float8)"
            default: return "FALSE"
            }
        case .string(let s):
            guard kind == .string else { return "FALSE" }
            if options.isEmpty {
                // Swift compares strings by their NFC form's Unicode scalars: byte order of NFC UTF-8.
                let stored = text(value)
                let normalized = s.precomposedStringWithCanonicalMapping
                return "(CASE WHEN \(stored) IS NFC NORMALIZED THEN \(stored) COLLATE \"C\" \(sqlOp) "
                    + "\(bind(.text(normalized)))::text ELSE NULL END)"
            }
            guard let folding = asciiFolded(value, s, options) else { return nil }
            return "(CASE WHEN \(text(value)) ~ '^[ -~]*$' THEN \(folding.stored) \(sqlOp) "
                + "\(bind(.text(folding.literal)))::text ELSE NULL END)"
        case .objectId(let id):
            guard kind == .objectId else { return "FALSE" }
            return "(\(objectIdText(value)) COLLATE \"C\" \(sqlOp) \(bind(.text(id.stringValue)))::text)"
        default:
            return nil
        }
    }

    /// For `[c]`/`[d]` on printable ASCII, where Swift's folding is ASCII lowercasing: the
    /// stored text lowercased in SQL and the folded literal; nil when the literal is not
    /// printable ASCII.
    private func asciiFolded(_ value: String, _ literal: String, _ options: QueryStringOptions) -> (stored: String, literal: String)? {
        let folded = QueryValueComparison.fold(literal, options)
        let lowercased = String(decoding: literal.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
        guard Self.isPrintableASCII(literal),
              folded == (options.contains(.caseInsensitive) ? lowercased : literal) else { return nil }
        let stored = options.contains(.caseInsensitive) ? "lower(\(text(value)) COLLATE \"C\")" : "(\(text(value)) COLLATE \"C\")"
        return (stored, folded)
    }

    static func isPrintableASCII(_ text: String) -> Bool { text.utf8.allSatisfy { (32...126).contains($0) } }

    // MARK: - String operators

    private mutating func stringOperator(_ kind: StoredKind, _ value: String, _ op: QueryOperator, _ literal: QueryValue,
                                         _ options: QueryStringOptions) -> String? {
        guard case .string(let pattern) = literal else { return nil }
        guard kind == .string else { return "FALSE" }
        let stored: String, operand: String, guardASCII: Bool
        if options.isEmpty {
            stored = "(\(text(value)) COLLATE \"C\")"
            operand = pattern
            // Swift's `contains` compares Characters (grapheme clusters): the same as bytes on
            // printable ASCII only.
            guardASCII = op == .contains
            if op == .contains, !Self.isPrintableASCII(pattern) { return nil }
        } else {
            guard let folding = asciiFolded(value, pattern, options) else { return nil }
            stored = folding.stored
            operand = folding.literal
            guardASCII = true
        }
        let test: String
        switch op {
        case .beginsWith: test = "starts_with(\(stored), \(bind(.text(operand)))::text)"
        case .endsWith:
            let p = bind(.text(operand))
            test = "(right(\(stored), char_length(\(p)::text)) = \(p)::text)"
        case .contains: test = operand.isEmpty ? "TRUE" : "(strpos(\(stored), \(bind(.text(operand)))::text) > 0)"
        case .like: test = "(\(stored) LIKE \(bind(.text(Self.likePattern(operand))))::text)"
        default: return nil
        }
        return guardASCII ? "(CASE WHEN \(text(value)) ~ '^[ -~]*$' THEN \(test) ELSE NULL END)" : test
    }

    /// Realm's `LIKE` pattern (`*`, `?`) as PostgreSQL's (`%`, `_`, escaped with `\`).
    static func likePattern(_ pattern: String) -> String {
        var out = ""
        for scalar in pattern.unicodeScalars {
            switch scalar {
            case "*": out += "%"
            case "?": out += "_"
            case "%", "_", "\\": out += "\\" + String(scalar)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

import Foundation
import TrellisSyncProtocol

/// An App Services rule expression (an `apply_when` or a `document_filters` entry): a MongoDB
/// query document whose values may be expansions (`%%user.id`, `%%user.custom_data.team`,
/// `%%user.data.email`, `%%values.admins`, `%%environment.values.x`, `%%true`, `%%false`;
/// ``RuleExpansions`` refuses the others), or the booleans `true`/`false`. Device Sync's subset: field equality,
/// `$eq $ne $gt $gte $lt $lte $in $nin $exists`, and `$and $or $nor`. Keys may be expansions
/// too (`{"%%user.custom_data.isAdmin": true}`): they compare the user's value, not a field.
indirect enum RuleExpression: Sendable, Equatable {
    case constant(Bool)
    case all([RuleExpression])
    case any([RuleExpression])
    case none([RuleExpression])
    /// A field of the document (dotted path) or an expansion key, and a condition on its value.
    case field(String, FieldCondition)

    enum FieldCondition: Sendable, Equatable {
        case equals(JSONValue)
        case compare(String, JSONValue)
        case exists(Bool)
    }

    /// Reads an expression; ``RulesError`` says what is not understood and where.
    init(_ json: JSONValue, at place: String) throws(RulesError) {
        switch json {
        case .bool(let value): self = .constant(value)
        case .string("%%true"): self = .constant(true)
        case .string("%%false"): self = .constant(false)
        case .object(let object):
            var parts = [RuleExpression]()
            for key in object.keys.sorted() {
                guard let value = object[key] else { continue }
                parts.append(try Self.part(key, value, at: place))
            }
            self = parts.count == 1 ? parts[0] : .all(parts)
        default:
            throw RulesError("\(place): \(json.jsonText) is not a rule expression (a query document such as "
                + "{\"owner_id\": \"%%user.id\"}, true/false or \"%%true\"/\"%%false\").")
        }
    }

    private static func part(_ key: String, _ value: JSONValue, at place: String) throws(RulesError) -> RuleExpression {
        switch key {
        case "$and", "$or", "$nor":
            guard let items = value.arrayValue else { throw RulesError("\(place): \(key) needs an array of expressions.") }
            var parts = [RuleExpression]()
            for item in items { parts.append(try RuleExpression(item, at: place)) }
            return key == "$and" ? .all(parts) : key == "$or" ? .any(parts) : .none(parts)
        case let other where RuleExpansions.problem(with: other) != nil:
            throw RulesError("\(place): \(RuleExpansions.problem(with: other) ?? other).")
        case let other where other.hasPrefix("$"):
            throw RulesError("\(place): the operator \(other) is not supported in Device Sync rules (supported: "
                + "$and, $or, $nor, and per field $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists).")
        default:
            try RuleExpansions.check(value, at: "\(place), '\(key)'")
            guard case .object(let operators) = value, let first = operators.keys.first, first.hasPrefix("$") else {
                return .field(key, .equals(value))
            }
            var parts = [RuleExpression]()
            for (op, operand) in operators.sorted(by: { $0.key < $1.key }) {
                switch op {
                case "$eq": parts.append(.field(key, .equals(operand)))
                case "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin": parts.append(.field(key, .compare(op, operand)))
                case "$exists":
                    guard case .bool(let flag) = operand else { throw RulesError("\(place): $exists needs true or false.") }
                    parts.append(.field(key, .exists(flag)))
                default:
                    throw RulesError("\(place): the operator \(op) on '\(key)' is not supported in Device Sync rules "
                        + "(supported: $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists).")
                }
            }
            return parts.count == 1 ? parts[0] : .all(parts)
        }
    }

    /// Whether the expression names fields of a document (an `apply_when` may not: Device Sync
    /// assigns roles when a session starts, before any document is read).
    var readsDocument: Bool {
        switch self {
        case .constant: false
        case .all(let parts), .any(let parts), .none(let parts): parts.contains(where: \.readsDocument)
        case .field(let key, _): !key.hasPrefix("%%")
        }
    }

    /// The expansions the expression uses (`%%user.id`, `%%values.admins`…), as keys or operands.
    var expansions: [String] {
        switch self {
        case .constant: return []
        case .all(let parts), .any(let parts), .none(let parts): return parts.flatMap(\.expansions)
        case .field(let key, let condition):
            let operand: JSONValue? = switch condition {
            case .equals(let value), .compare(_, let value): value
            case .exists: nil
            }
            return (key.hasPrefix("%%") ? [key] : []) + (operand.map(Self.expansions(in:)) ?? [])
        }
    }

    private static func expansions(in value: JSONValue) -> [String] {
        switch value {
        case .string(let text) where text.hasPrefix("%%"): [text]
        case .array(let items): items.flatMap(expansions(in:))
        case .object(let object): object.values.flatMap(expansions(in:))
        default: []
        }
    }

    /// The expression's value for `document` (nil: none, as for an `apply_when`) and the user.
    func matches(_ document: [String: JSONValue]?, user: RuleUser) -> Bool {
        switch self {
        case .constant(let value): return value
        case .all(let parts): return parts.allSatisfy { $0.matches(document, user: user) }
        case .any(let parts): return parts.contains { $0.matches(document, user: user) }
        case .none(let parts): return !parts.contains { $0.matches(document, user: user) }
        case .field(let key, let condition):
            let value = key.hasPrefix("%%") ? user.expand(key) : document.flatMap { Self.value(at: key, in: $0) }
            return condition.holds(for: value, user: user)
        }
    }

    /// The value at a dotted path (`address.city`); nil when absent.
    static func value(at path: String, in document: [String: JSONValue]) -> JSONValue? {
        var current = JSONValue.object(document)
        for part in path.split(separator: ".") {
            guard let next = current[String(part)] else { return nil }
            current = next
        }
        return current
    }
}

extension RuleExpression.FieldCondition {
    func holds(for value: JSONValue?, user: RuleUser) -> Bool {
        switch self {
        case .exists(let flag): return (value != nil) == flag
        case .equals(let operand):
            return RuleValue.equal(value ?? .null, user.resolve(operand))
        case .compare(let op, let operand):
            let resolved = user.resolve(operand)
            let actual = value ?? .null
            switch op {
            case "$ne": return !RuleValue.equal(actual, resolved)
            case "$in", "$nin":
                let items = resolved.arrayValue ?? [resolved]
                let found = items.contains { RuleValue.equal(actual, $0) }
                return op == "$in" ? found : !found
            default:
                guard let order = RuleValue.compare(actual, resolved) else { return false }
                switch op {
                case "$gt": return order > 0
                case "$gte": return order >= 0
                case "$lt": return order < 0
                default: return order <= 0
                }
            }
        }
    }
}

/// The user a session's rules are evaluated for: `%%user.id`, `%%user.custom_data.*` (the
/// user's custom data document) and `%%user.data.*` (the login token's metadata).
struct RuleUser: Sendable, Equatable {
    var id: String
    var customData: [String: JSONValue] = [:]
    var data: [String: JSONValue] = [:]
    /// The app's `%%values` and `%%environment` (set from the rules by ``SessionPermissions``).
    var app = AppValues()

    /// The value of an expansion (`%%user.id`), nil when it names nothing.
    func expand(_ expansion: String) -> JSONValue? {
        switch expansion {
        case "%%true": return .bool(true)
        case "%%false": return .bool(false)
        case "%%user.id": return .string(id)
        case "%%user": return .object(["id": .string(id), "custom_data": .object(customData), "data": .object(data)])
        case "%%user.custom_data": return .object(customData)
        case "%%user.data": return .object(data)
        default: break
        }
        if let value = app.expand(expansion) { return value }
        for (prefix, document) in [("%%user.custom_data.", customData), ("%%user.data.", data)]
        where expansion.hasPrefix(prefix) {
            return RuleExpression.value(at: String(expansion.dropFirst(prefix.count)), in: document)
        }
        return nil
    }

    /// A rule operand with its expansions replaced (inside arrays too).
    func resolve(_ operand: JSONValue) -> JSONValue {
        switch operand {
        case .string(let text) where text.hasPrefix("%%"): return expand(text) ?? .null
        case .array(let items): return .array(items.map(resolve))
        default: return operand
        }
    }
}

/// Comparisons of Extended JSON values as MongoDB makes them: numbers by value whatever their
/// representation (`5`, `5.0`, `{"$numberLong": "5"}`), ObjectIds and strings as text.
enum RuleValue {
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if let x = number(a), let y = number(b) { return x == y }
        if let x = text(a), let y = text(b) { return x == y }
        if case .array(let items) = a, b.arrayValue == nil { return items.contains { equal($0, b) } }
        return a == b
    }

    static func compare(_ a: JSONValue, _ b: JSONValue) -> Int? {
        if let x = number(a), let y = number(b) { return x < y ? -1 : x > y ? 1 : 0 }
        if let x = text(a), let y = text(b) { return x < y ? -1 : x > y ? 1 : 0 }
        return nil
    }

    static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let number): return Double(number)
        case .double(let number): return number
        case .object(let object):
            for key in ["$numberLong", "$numberInt", "$numberDouble", "$numberDecimal"] {
                if let text = object[key]?.stringValue { return Double(text) }
            }
            return nil
        default: return nil
        }
    }

    static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): return text
        case .object(let object): return object["$oid"]?.stringValue ?? object["$uuid"]?.stringValue
        default: return nil
        }
    }
}

/// A rules file or folder that cannot be used: what is wrong, where, and how to fix it.
struct RulesError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

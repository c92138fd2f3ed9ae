import Foundation
import TrellisSyncProtocol

/// A cheap necessary condition of what a session's user may read of one collection, used to
/// fan a change out only to the sessions that may read it (docs/SYNC.md, "Change
/// notification"), as ``SubscriptionPrefilter`` does for subscriptions: an owner-only role
/// (`{"owner_id": "%%user.id"}`) reads only documents whose `owner_id` is the user's id, so
/// the server indexes the session under that one value instead of looking at it for every
/// change of the collection. Made from the role assigned when the session started, with the
/// user's expansions resolved. Equality here is the rules' (``RuleValue/equal(_:_:)``):
/// numbers by value whatever their form, strings by canonical equivalence, ObjectIds and
/// UUIDs as their text, an array holding the value. The role's filters still decide for each
/// session woken.
enum PermissionPrefilter: Hashable, Sendable {
    /// No cheap condition: any document may be readable.
    case anything
    /// The user reads no document of the collection.
    case nothing
    /// Only documents whose value at `path` (dotted) has one of `keys` may be readable.
    case keys(path: String, Set<String>)

    /// What `permissions` let the user read of `collection`.
    init(_ permissions: SessionPermissions, collection: String) {
        if permissions.allowsEverything {
            self = .anything
            return
        }
        guard let role = permissions.role(of: collection), role.readsAnything else {
            self = .nothing
            return
        }
        // A document is readable when either filter holds (``SessionPermissions/readable(_:_:)``).
        self = Self.either(Self(role.readFilter, user: permissions.user), Self(role.writeFilter, user: permissions.user))
    }

    /// A necessary condition of `expression` for documents, the user's expansions resolved.
    init(_ expression: RuleExpression, user: RuleUser) {
        switch expression {
        case .constant(let value): self = value ? .anything : .nothing
        case .all(let parts): self = parts.map { Self($0, user: user) }.reduce(.anything, Self.both)
        case .any(let parts): self = parts.map { Self($0, user: user) }.reduce(.nothing, Self.either)
        case .none: self = .anything
        case .field(let key, let condition) where key.hasPrefix("%%"):
            // A condition on the user alone: fixed for the session.
            self = condition.holds(for: user.expand(key), user: user) ? .anything : .nothing
        case .field(let path, .equals(let operand)):
            self = Self.operandKey(user.resolve(operand)).map { .keys(path: path, [$0]) } ?? .anything
        case .field(let path, .compare("$in", let operand)):
            let resolved = user.resolve(operand)
            var keys = Set<String>()
            for item in resolved.arrayValue ?? [resolved] {
                guard let key = Self.operandKey(item) else {
                    self = .anything
                    return
                }
                keys.insert(key)
            }
            self = keys.isEmpty ? .nothing : .keys(path: path, keys)
        case .field: self = .anything
        }
    }

    /// Both conditions hold: the narrower one is kept (one condition is enough to index on).
    static func both(_ a: Self, _ b: Self) -> Self {
        switch (a, b) {
        case (.nothing, _), (_, .nothing): .nothing
        case (.anything, let other), (let other, .anything): other
        case (.keys(_, let first), .keys(_, let second)): first.count <= second.count ? a : b
        }
    }

    /// One of the conditions holds: the union of keys on one path, or no condition.
    static func either(_ a: Self, _ b: Self) -> Self {
        switch (a, b) {
        case (.anything, _), (_, .anything): .anything
        case (.nothing, let other), (let other, .nothing): other
        case (.keys(let path, let first), .keys(let other, let second)):
            path == other ? .keys(path: path, first.union(second)) : .anything
        }
    }

    /// Whether `document` may be readable (false only when it surely is not).
    func admits(_ document: JSONValue?) -> Bool {
        switch self {
        case .anything: return true
        case .nothing: return false
        case .keys(let path, let keys):
            guard case .object(let fields)? = document else { return false }
            guard let found = Self.documentKeys(RuleExpression.value(at: path, in: fields) ?? .null) else { return true }
            return !found.isDisjoint(with: keys)
        }
    }

    /// The key of a rule operand (an expansion resolved) that ``RuleValue/equal(_:_:)`` compares
    /// values to, or nil when it has none (an array, a document, NaN): then no prefilter.
    static func operandKey(_ value: JSONValue) -> String? {
        if case .array = value { return nil }
        guard let keys = documentKeys(value), keys.count == 1 else { return nil }
        return keys.first
    }

    /// The keys of a document's value: ``RuleValue/equal(_:_:)`` finds it equal to an operand
    /// only when they share one (an array: any of its elements'); nil when the value has no
    /// exact key (then every session filtered on the path may read it).
    static func documentKeys(_ value: JSONValue) -> Set<String>? {
        switch value {
        case .null: return ["null"]
        case .bool(let flag): return [flag ? "b:1" : "b:0"]
        case .array(let items):
            var keys = Set<String>()
            for item in items {
                guard let found = documentKeys(item) else { return nil }
                keys.formUnion(found)
            }
            return keys
        default:
            var keys = Set<String>()
            if let number = RuleValue.number(value) {
                // NaN equals nothing: no key (an operand NaN has none either).
                if !number.isNaN { keys.insert("n:" + String((number == 0 ? 0 : number).bitPattern)) }
            }
            if let text = RuleValue.text(value) { keys.insert("t:" + text.precomposedStringWithCanonicalMapping) }
            if keys.isEmpty, RuleValue.number(value) == nil { return nil }
            return keys
        }
    }
}

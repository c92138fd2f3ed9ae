import Foundation
import Trellis
import TrellisSyncProtocol

/// A cheap necessary condition of a subscription's query, used to fan a change out only to
/// the sessions that can want it (docs/SYNC.md, "Change notification"): "the document's
/// top-level `property` equals one of `keys`". A query has one when every document it selects
/// satisfies it: `round == 3`, `status IN {'a', 'b'}`, `owner == 'x' AND …`, or an `OR` of
/// such conditions on one property. Equality here is the query evaluator's
/// (``QueryValueComparison``): numbers compare across kinds, strings by canonical equivalence,
/// bools only with bools; values for which a key could be ambiguous (numbers beyond 2^53,
/// decimals, dates, arrays, …) have no key, and a document holding one is a candidate for
/// every session filtered on that property. The full query still decides for each candidate.
struct SubscriptionPrefilter: Hashable, Sendable {
    let property: String
    let keys: Set<String>

    /// The key a document's value has for equality (``DocumentKey/none`` for nil or a missing
    /// property, which equals no key of a prefilter).
    enum DocumentKey: Equatable {
        case key(String)
        case none
        /// A value this index does not key exactly (an array, a decimal, …): any session
        /// filtered on the property may want the document.
        case unknown
    }

    /// The prefilter of a query, or nil when it has none (the session is a candidate for
    /// every change of the class).
    init?(_ query: SyncQuery) {
        guard let found = Self.extract(query.predicate) else { return nil }
        self = found
    }

    private init(property: String, keys: Set<String>) {
        self.property = property
        self.keys = keys
    }

    private static func extract(_ predicate: QueryPredicate) -> SubscriptionPrefilter? {
        switch predicate {
        case .constant(false): return nil  // selects nothing, but gains nothing either
        case .constant: return nil
        case .not: return nil
        case .and(let operands):
            // Any operand's condition is necessary; the narrowest (fewest keys) is kept.
            return operands.compactMap(extract).min { $0.keys.count < $1.keys.count }
        case .or(let operands):
            let parts = operands.map(extract)
            guard !parts.isEmpty, let first = parts.first ?? nil else { return nil }
            var keys = Set<String>()
            for part in parts {
                guard let part, part.property == first.property else { return nil }
                keys.formUnion(part.keys)
            }
            return SubscriptionPrefilter(property: first.property, keys: keys)
        case .comparison(let comparison):
            guard comparison.quantifier == .single || comparison.quantifier == .any, comparison.options.isEmpty
            else { return nil }
            var lhs = comparison.lhs, rhs = comparison.rhs
            if case .keyPath = rhs { swap(&lhs, &rhs) }
            guard case .keyPath(let path) = lhs, path.variable == nil, path.components.count == 1,
                  case .property(let property) = path.components[0] else { return nil }
            switch (comparison.op, rhs) {
            case (.equal, .constant(let value)), (.equal, .argument(let value)):
                return key(of: value).map { SubscriptionPrefilter(property: property, keys: [$0]) }
            case (.in, .list(let items)):
                var keys = Set<String>()
                for item in items {
                    guard case .constant(let value) = item, let key = key(of: value) else { return nil }
                    keys.insert(key)
                }
                return keys.isEmpty ? nil : SubscriptionPrefilter(property: property, keys: keys)
            case (.in, .constant(.list(let values))), (.in, .argument(.list(let values))):
                var keys = Set<String>()
                for value in values {
                    guard let key = key(of: value) else { return nil }
                    keys.insert(key)
                }
                return keys.isEmpty ? nil : SubscriptionPrefilter(property: property, keys: keys)
            default: return nil
            }
        }
    }

    /// Numbers up to 2^53 are exact as doubles, so an integer and a double that the evaluator
    /// finds equal get the same key.
    private static let exactLimit = 9_007_199_254_740_992.0

    private static func numberKey(_ value: Double) -> String? {
        guard value.isFinite, abs(value) <= exactLimit else { return nil }
        if value == value.rounded() { return "n:" + String(Int64(value)) }
        return "d:" + String(value.bitPattern)
    }

    private static func numberKey(_ value: Int64) -> String? {
        value.magnitude <= 1 << 53 ? "n:" + String(value) : nil
    }

    /// The key of a query literal; nil for kinds not keyed (no prefilter then).
    private static func key(of value: QueryValue) -> String? {
        switch value {
        case .bool(let flag): return flag ? "b:1" : "b:0"
        case .int(let number): return numberKey(number)
        case .double(let number): return numberKey(number)
        case .string(let text): return "s:" + text.precomposedStringWithCanonicalMapping
        case .objectId(let id): return "o:" + id.stringValue.lowercased()
        default: return nil
        }
    }

    /// The key of a stored document's property value (Extended JSON, canonical or relaxed).
    static func key(ofDocument document: JSONValue?, property: String) -> DocumentKey {
        guard case .object(let fields)? = document else { return .none }
        switch fields[property] ?? .null {
        case .null: return .none
        case .bool(let flag): return .key(flag ? "b:1" : "b:0")
        case .int(let number): return numberKey(number).map { .key($0) } ?? .unknown
        case .double(let number): return number.isNaN ? .none : numberKey(number).map { .key($0) } ?? .unknown
        case .string(let text): return .key("s:" + text.precomposedStringWithCanonicalMapping)
        case .array: return .unknown
        case .object(let wrapper):
            if wrapper.count == 1, let text = wrapper["$numberLong"]?.stringValue ?? wrapper["$numberInt"]?.stringValue {
                guard let number = Int64(text) else { return .none }
                return numberKey(number).map { .key($0) } ?? .unknown
            }
            if wrapper.count == 1, let text = wrapper["$numberDouble"]?.stringValue {
                guard let number = Double(text), !number.isNaN else { return .none }
                return numberKey(number).map { .key($0) } ?? .unknown
            }
            if wrapper.count == 1, let text = wrapper["$oid"]?.stringValue {
                guard let id = try? ObjectId(string: text) else { return .none }
                return .key("o:" + id.stringValue.lowercased())
            }
            return .unknown
        }
    }
}

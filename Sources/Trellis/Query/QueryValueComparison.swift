import Foundation

/// How two query values compare, with Realm's rules: numbers compare across widths and
/// kinds, nil equals only nil, strings honour `[c]` and `[d]`, objects compare by identity.
///
/// nil in `<`, `<=`, `>`, `>=` follows realm-core (v14): two nils are `<=` and `>=` each other
/// and nil orders with nothing else, except where realm-core compares a String or Data
/// property of the object itself (or of a SUBQUERY's element) with a constant: there nil comes
/// before every string and every Data, as its StringData and BinaryData order
/// (`nullsFirst`; `optString < "a"` matches nil, `optString > nil` every string).
package enum QueryValueComparison {
    static func matches(_ lhs: QueryValue, _ op: QueryOperator, _ rhs: QueryValue,
                        _ options: QueryStringOptions, nullsFirst: Bool = false) -> Bool
    {
        switch op {
        case .equal: return equal(lhs, rhs, options)
        case .notEqual: return !equal(lhs, rhs, options)
        case .less: return ordered(lhs, rhs, options, nullsFirst) { $0 < 0 }
        case .lessOrEqual: return ordered(lhs, rhs, options, nullsFirst) { $0 <= 0 }
        case .greater: return ordered(lhs, rhs, options, nullsFirst) { $0 > 0 }
        case .greaterOrEqual: return ordered(lhs, rhs, options, nullsFirst) { $0 >= 0 }
        case .beginsWith, .endsWith, .contains, .like: return stringMatch(lhs, op, rhs, options)
        case .in:
            guard case .list(let items) = rhs else { return equal(lhs, rhs, options) }
            return items.contains { equal(lhs, $0, options) }
        case .between:
            guard case .list(let bounds) = rhs, bounds.count == 2 else { return false }
            return matches(lhs, .greaterOrEqual, bounds[0], options) && matches(lhs, .lessOrEqual, bounds[1], options)
        }
    }

    /// An ordering operator's answer: `test` of the order, nil handled as realm-core does.
    private static func ordered(_ lhs: QueryValue, _ rhs: QueryValue, _ options: QueryStringOptions,
                                _ nullsFirst: Bool, _ test: (Int) -> Bool) -> Bool
    {
        switch (lhs, rhs) {
        case (.null, .null): return test(0)
        case (.null, _): return nullsFirst && test(-1)
        case (_, .null): return nullsFirst && test(1)
        default: return order(lhs, rhs, options).map(test) ?? false
        }
    }

    static func equal(_ lhs: QueryValue, _ rhs: QueryValue, _ options: QueryStringOptions = []) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let a), .string(let b)):
            return options.isEmpty ? a == b : fold(a, options) == fold(b, options)
        case (.bool(let a), .bool(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.objectId(let a), .objectId(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.link(let t1, let k1), .link(let t2, let k2)): return t1 == t2 && k1 == k2
        case (.link(let tableId, let key), .object(let object)), (.object(let object), .link(let tableId, let key)):
            guard let managed = object._managed, !object.isInvalidated else { return false }
            return managed.table.tableId == tableId && managed.key == key
        case (.object(let a), .object(let b)): return a === b
        default:
            return order(lhs, rhs, options) == 0
        }
    }

    /// -1, 0 or 1, or nil when the two cannot be ordered (nil, or different kinds).
    static func order(_ lhs: QueryValue, _ rhs: QueryValue, _ options: QueryStringOptions = []) -> Int? {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)): return sign(a, b)
        case (.double(let a), .double(let b)): return a.isNaN || b.isNaN ? nil : sign(a, b)
        case (.int(let a), .double(let b)): return b.isNaN ? nil : sign(Double(a), b)
        case (.double(let a), .int(let b)): return a.isNaN ? nil : sign(a, Double(b))
        case (.decimal(let a), .decimal(let b)): return sign(a, b)
        case (.decimal(let a), .int(let b)): return sign(a, Decimal128(Decimal(b)))
        case (.decimal(let a), .double(let b)): return sign(a.doubleValue, b)
        case (.int(let a), .decimal(let b)): return sign(Decimal128(Decimal(a)), b)
        case (.double(let a), .decimal(let b)): return sign(a, b.doubleValue)
        case (.string(let a), .string(let b)):
            return options.isEmpty ? sign(a, b) : sign(fold(a, options), fold(b, options))
        case (.date(let a), .date(let b)): return sign(a, b)
        case (.objectId(let a), .objectId(let b)): return sign(a, b)
        case (.uuid(let a), .uuid(let b)): return sign(a.uuidString, b.uuidString)
        case (.bool(let a), .bool(let b)): return a == b ? 0 : nil
        case (.data(let a), .data(let b)): return a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        case (.nestedCollection(let a), .nestedCollection(let b)): return a == b ? 0 : nil
        default: return nil
        }
    }

    private static func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    package static func fold(_ text: String, _ options: QueryStringOptions) -> String {
        var folding = String.CompareOptions()
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        return text.folding(options: folding, locale: nil)
    }

    private static func stringMatch(_ lhs: QueryValue, _ op: QueryOperator, _ rhs: QueryValue,
                                    _ options: QueryStringOptions) -> Bool
    {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)):
            let text = options.isEmpty ? a : fold(a, options)
            let pattern = options.isEmpty ? b : fold(b, options)
            switch op {
            case .beginsWith: return text.utf8.starts(with: pattern.utf8)
            case .endsWith: return text.utf8.reversed().starts(with: pattern.utf8.reversed())
            case .contains: return pattern.isEmpty || text.contains(pattern)
            default: return like(Array(text.unicodeScalars), Array(pattern.unicodeScalars))
            }
        case (.data(let a), .data(let b)):
            switch op {
            case .beginsWith: return a.starts(with: b)
            case .endsWith: return a.reversed().starts(with: b.reversed())
            case .contains: return b.isEmpty || a.range(of: b) != nil
            default: return false
            }
        default:
            return false
        }
    }

    /// `LIKE`: `*` matches any run of characters, `?` exactly one.
    static func like(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        var t = 0, p = 0
        var starP = -1, starT = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t]) {
                t += 1
                p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                starP = p
                starT = t
                p += 1
            } else if starP >= 0 {
                p = starP + 1
                starT += 1
                t = starT
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}

extension QueryValue: Hashable {
    package static func == (lhs: QueryValue, rhs: QueryValue) -> Bool {
        switch (lhs, rhs) {
        case (.list(let a), .list(let b)): a == b
        case (.object(let a), .object(let b)), (.memberwise(let a), .memberwise(let b)): a === b
        default: QueryValueComparison.equal(lhs, rhs)
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .int(let i): hasher.combine(Double(i))
        case .double(let d): hasher.combine(d)
        case .decimal(let d): hasher.combine(d.doubleValue)
        case .string(let s): hasher.combine(s)
        case .data(let d): hasher.combine(d)
        case .date(let d): hasher.combine(d)
        case .objectId(let o): hasher.combine(o)
        case .uuid(let u): hasher.combine(u)
        case .object(let o), .memberwise(let o): hasher.combine(ObjectIdentifier(o))
        case .link(let t, let k): hasher.combine(t); hasher.combine(k)
        case .list(let items): hasher.combine(items)
        case .nestedCollection(let kind): hasher.combine(kind)
        case .geo(let shape): hasher.combine(shape)
        }
    }
}

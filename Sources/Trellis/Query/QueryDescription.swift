import Foundation

/// Renders a query tree as predicate text, in the form Realm renders typed queries
/// (`(ANY dogs.age > %@)`): arguments as `%@`, literals as they would be written.
extension QueryPredicate: CustomStringConvertible {
    package var description: String {
        switch self {
        case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let operands): Self.render(operands, "&&")
        case .or(let operands): Self.render(operands, "||")
        case .not(let inner):
            if case .comparison(let comparison) = inner { "(NOT \(comparison.body))" } else { "(NOT \(inner))" }
        case .comparison(let comparison): "(\(comparison.body))"
        }
    }
}

extension QueryPredicate {
    /// A chain as nested pairs, `((a && b) && c)`, the way it was written; built in a loop.
    fileprivate static func render(_ operands: [QueryPredicate], _ symbol: String) -> String {
        guard var text = operands.first?.description else { return "" }
        for operand in operands.dropFirst() { text = "(\(text) \(symbol) \(operand))" }
        return text
    }
}

extension QueryComparison {
    /// The comparison without its parentheses.
    var body: String {
        let quantified = quantifier == .single ? "" : quantifier.rawValue + " "
        return "\(quantified)\(lhs) \(op.rawValue)\(options.suffix) \(rhs)"
    }
}

extension QueryExpression: CustomStringConvertible {
    package var description: String {
        switch self {
        case .keyPath(let path): path.description
        case .constant(let value): value.literal
        case .argument: "%@"
        case .list(let items): "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .subqueryCount(let collection, let variable, let predicate):
            "SUBQUERY(\(collection), $\(variable), \(predicate)).@count"
        }
    }
}

extension QueryKeyPath: CustomStringConvertible {
    package var description: String {
        var text = variable.map { "$" + $0 } ?? ""
        for component in components {
            switch component {
            case .property(let name): text += (text.isEmpty ? "" : ".") + name
            case .mapKey(let key): text += "[\(key)]"
            case .operation(let op): text += (text.isEmpty ? "" : ".") + op.rawValue
            case .links(let className, let property): text += (text.isEmpty ? "" : ".") + "@links.\(className).\(property)"
            case .linksCount: text += (text.isEmpty ? "" : ".") + "@links.@count"
            case .allElements: text += "[*]"
            }
        }
        return text
    }
}

extension QueryValue {
    /// The value as a literal of the predicate language.
    var literal: String {
        switch self {
        case .null: "nil"
        case .bool(let b): b ? "true" : "false"
        case .int(let i): "\(i)"
        case .double(let d): "\(d)"
        case .string(let s): "\"" + s.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .data(let d): "<\(d.count) bytes>"
        case .date(let date): Self.timestampLiteral(date)
        case .objectId(let id): "oid(\(id.stringValue))"
        case .uuid(let uuid): "uuid(\(uuid.uuidString))"
        case .decimal(let d): d.stringValue
        case .object, .memberwise, .link, .nestedCollection: "%@"
        case .geo(let shape): shape.description
        case .list(let items): "{" + items.map(\.literal).joined(separator: ", ") + "}"
        }
    }

    /// `T<seconds>:<nanoseconds>` since 1970, Realm's timestamp literal. Any date has one: far
    /// dates saturate at the 64-bit seconds, NaN is `T0:0` (what realm-core stores for it).
    static func timestampLiteral(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        if interval.isNaN { return "T0:0" }
        if interval >= 0x1p63 { return "T\(Int64.max):999999999" }
        if interval < -0x1p63 { return "T\(Int64.min):-999999999" }
        let seconds = interval.rounded(.down)
        return "T\(Int64(seconds)):\(Int64(((interval - seconds) * 1e9).rounded()))"
    }
}

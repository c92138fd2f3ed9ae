import Foundation
import Trellis
import TrellisSyncProtocol

/// Whether the server can run a subscription's query on its schema, with Device Sync's
/// wording for what it refuses (`Invalid query: unsupported query for table "Dog": …`):
/// properties the schema does not have, key paths through links, and what the evaluator
/// cannot run (`@links`, `SUBQUERY`, aggregates other than `@count`/`@size`).
enum SubscriptionCheck {
    /// Why the query cannot be served, or nil when it can.
    static func problem(_ query: SyncQuery, text: String, in shape: SchemaShape) -> String? {
        if let reason = query.unsupportedReason {
            return "Invalid query: unsupported query for table \"\(shape.className)\": \(reason) ('\(text)')"
        }
        for path in query.keyPaths {
            if let reason = problem(path, in: shape) {
                return "Invalid query: unsupported query for table \"\(shape.className)\": \(reason) ('\(text)')"
            }
        }
        return nil
    }

    /// Why one key path does not name a queryable value of the schema.
    private static func problem(_ steps: [SyncQuery.KeyPathStep], in shape: SchemaShape) -> String? {
        var key = ""
        var written = ""
        for step in steps {
            if shape.types[key] == "mixed" { return nil }   // a mixed value may hold anything
            switch step {
            case .count:
                guard let type = shape.types[key], type == "array" || type == "object" else {
                    return "key \"\(written)\" is not a list, set or map, so it has no @count"
                }
                return nil
            case .mapKey:
                guard shape.types[key + ".{}"] != nil else { return "key \"\(written)\" is not a map" }
                key += ".{}"
                written += "[]"
            case .property(let name):
                if !key.isEmpty {
                    switch shape.types[key] {
                    case "object": break
                    case "array" where shape.types[key + ".[]"] == "object": key += ".[]"
                    default:
                        return "key \"\(written).\(name)\" goes through \"\(written)\", a link or a value: Flexible Sync "
                            + "queries cannot follow links (subscribe to the linked class instead)"
                    }
                }
                let next = key.isEmpty ? name : key + "." + name
                written = written.isEmpty ? name : written + "." + name
                guard shape.types[next] != nil else {
                    let known = shape.types.keys.filter { !$0.contains(".") }.sorted().joined(separator: ", ")
                    return "key \"\(written)\" is not a queryable field: '\(shape.className)' has no such property in "
                        + "the server's schema (its properties: \(known))"
                }
                key = next
            }
        }
        return nil
    }
}

import Foundation

extension SyncQuery {
    /// One step of a key path as the server checks it against its schema.
    package enum KeyPathStep: Equatable, Sendable {
        /// A property (stored name), of the object or of an embedded object.
        case property(String)
        /// `map['key']`.
        case mapKey
        /// `@count` / `@size`.
        case count
    }

    /// Every key path the query names, as steps (for the server's schema check). Key paths the
    /// evaluator cannot run (`@links`, `SUBQUERY`, aggregates) are reported by
    /// ``unsupportedReason`` instead and are not listed.
    package var keyPaths: [[KeyPathStep]] {
        var paths = [[KeyPathStep]]()
        Self.collect(predicate, into: &paths)
        return paths
    }

    private static func collect(_ predicate: QueryPredicate, into paths: inout [[KeyPathStep]]) {
        switch predicate {
        case .constant: return
        case .and(let operands), .or(let operands): for operand in operands { collect(operand, into: &paths) }
        case .not(let inner): collect(inner, into: &paths)
        case .comparison(let comparison):
            collect(comparison.lhs, into: &paths)
            collect(comparison.rhs, into: &paths)
        }
    }

    private static func collect(_ expression: QueryExpression, into paths: inout [[KeyPathStep]]) {
        switch expression {
        case .keyPath(let path) where path.variable == nil:
            var steps = [KeyPathStep]()
            for component in path.components {
                switch component {
                case .property(let name): steps.append(.property(name))
                case .mapKey: steps.append(.mapKey)
                case .operation(.count), .operation(.size): steps.append(.count)
                default: return
                }
            }
            paths.append(steps)
        case .list(let items):
            for item in items { collect(item, into: &paths) }
        default:
            return
        }
    }
}

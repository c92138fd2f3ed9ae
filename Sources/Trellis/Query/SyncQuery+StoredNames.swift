import Foundation

extension SyncQuery {
    /// The same query with every property named as it is stored, which is how the documents on
    /// the server name them: with `propertiesMapping()` returning `["owner": "owner_id"]`,
    /// `owner == "me"` travels as `owner_id == "me"`. Realm sends subscriptions with the
    /// persisted names too. Key paths through embedded objects and links are renamed with each
    /// class's own mapping; names the class does not know are left as written (the server
    /// refuses them with its own message).
    package func storedNames(for type: ObjectBase.Type) -> SyncQuery {
        SyncQuery(Self.renamed(predicate, in: ClassInfo.unbound(for: type)))
    }

    private static func renamed(_ predicate: QueryPredicate, in info: ClassInfo) -> QueryPredicate {
        switch predicate {
        case .constant: return predicate
        case .and(let operands): return .and(operands.map { renamed($0, in: info) })
        case .or(let operands): return .or(operands.map { renamed($0, in: info) })
        case .not(let inner): return .not(renamed(inner, in: info))
        case .comparison(var comparison):
            comparison.lhs = renamed(comparison.lhs, in: info)
            comparison.rhs = renamed(comparison.rhs, in: info)
            return .comparison(comparison)
        }
    }

    private static func renamed(_ expression: QueryExpression, in info: ClassInfo) -> QueryExpression {
        switch expression {
        case .keyPath(let path) where path.variable == nil:
            return .keyPath(QueryKeyPath(renamed(path.components, in: info)))
        case .list(let elements):
            return .list(elements.map { renamed($0, in: info) })
        default:
            return expression
        }
    }

    private static func renamed(_ components: [QueryKeyPathComponent], in root: ClassInfo) -> [QueryKeyPathComponent] {
        var current: ClassInfo? = root
        return components.map { component in
            guard case .property(let name) = component, let info = current,
                  let field = info.field(named: name) else {
                current = nil
                return component
            }
            current = field.typeInfo.objectType.map(ClassInfo.unbound(for:))
            return .property(field.columnName)
        }
    }
}

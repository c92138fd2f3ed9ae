import Foundation

/// The sessions of one server indexed by what they subscribe to and what their roles read,
/// so a history entry is matched against the few sessions that can want it instead of every
/// session.
struct FanOutIndex {
    private var routes = [UUID: SessionRoute]()
    /// Per class: sessions that look at every entry of it.
    private var everything = [String: Set<UUID>]()
    /// Per class and property: sessions by prefilter key.
    private var byKey = [String: [String: [String: Set<UUID>]]]()
    /// Per class and property: every session with a prefilter on it.
    private var byProperty = [String: [String: Set<UUID>]]()
    /// Per class and path: sessions by the keys their role may read (``PermissionPrefilter``).
    private var byReadKey = [String: [String: [String: Set<UUID>]]]()
    /// Per class and path: every session whose role reads by a condition on it.
    private var byReadPath = [String: [String: Set<UUID>]]()
    /// Per client file: its sessions.
    private var byClient = [String: Set<UUID>]()

    var count: Int { routes.count }

    /// Where a session is filed for one class.
    private enum Placement {
        case everything
        case queries([SubscriptionPrefilter])
        case readable(path: String, Set<String>)
        /// Only its own writes (the role reads nothing of the class).
        case ownWrites
    }

    /// By what the route is indexed for `className`: its role's condition when it has one
    /// (an owner-only role names one value, fewer sessions than any subscription's), else its
    /// queries' prefilters. Either is a necessary condition of ``SessionRoute/mayWant(_:)``
    /// (besides its own writes, indexed by client).
    private static func placement(_ route: SessionRoute, _ className: String, _ filters: [SubscriptionPrefilter]?)
        -> Placement
    {
        switch route.readable[className] ?? .anything {
        case .nothing: return .ownWrites
        case .keys(let path, let keys): return .readable(path: path, keys)
        case .anything: return filters.map { .queries($0) } ?? .everything
        }
    }

    mutating func set(_ id: UUID, _ route: SessionRoute) {
        remove(id)
        routes[id] = route
        byClient[route.clientId, default: []].insert(id)
        for className in route.watchedClasses { everything[className, default: []].insert(id) }
        for (className, filters) in route.prefilters {
            switch Self.placement(route, className, filters) {
            case .everything: everything[className, default: []].insert(id)
            case .ownWrites: break
            case .queries(let filters):
                for filter in filters {
                    byProperty[className, default: [:]][filter.property, default: []].insert(id)
                    for key in filter.keys { byKey[className, default: [:]][filter.property, default: [:]][key, default: []].insert(id) }
                }
            case .readable(let path, let keys):
                byReadPath[className, default: [:]][path, default: []].insert(id)
                for key in keys { byReadKey[className, default: [:]][path, default: [:]][key, default: []].insert(id) }
            }
        }
    }

    mutating func remove(_ id: UUID) {
        guard let route = routes.removeValue(forKey: id) else { return }
        byClient[route.clientId]?.remove(id)
        if byClient[route.clientId]?.isEmpty == true { byClient[route.clientId] = nil }
        for className in route.watchedClasses { everything[className]?.remove(id) }
        for (className, filters) in route.prefilters {
            switch Self.placement(route, className, filters) {
            case .everything: everything[className]?.remove(id)
            case .ownWrites: break
            case .queries(let filters):
                for filter in filters {
                    byProperty[className]?[filter.property]?.remove(id)
                    for key in filter.keys { byKey[className]?[filter.property]?[key]?.remove(id) }
                }
            case .readable(let path, let keys):
                byReadPath[className]?[path]?.remove(id)
                for key in keys { byReadKey[className]?[path]?[key]?.remove(id) }
            }
        }
    }

    /// The sessions that may have to send something for `entry` (a superset of those whose
    /// ``SessionRoute/mayWant(_:)`` is true).
    func candidates(for entry: HistoryEntry, into result: inout Set<UUID>) {
        let className = entry.change.className
        if let all = everything[className] { result.formUnion(all) }
        if let clientId = entry.clientId, let own = byClient[clientId] {
            result.formUnion(own.filter { routes[$0]?.prefilters[className] != nil })
        }
        if let paths = byReadPath[className] {
            // A session filed by its role needs a document it may read (new or previous).
            for (path, sessions) in paths {
                for document in [entry.change.document, entry.previous] {
                    guard case .object(let fields)? = document else { continue }
                    guard let keys = PermissionPrefilter.documentKeys(RuleExpression.value(at: path, in: fields) ?? .null)
                    else {
                        result.formUnion(sessions)
                        continue
                    }
                    for key in keys {
                        if let found = byReadKey[className]?[path]?[key] { result.formUnion(found) }
                    }
                }
            }
        }
        guard let properties = byProperty[className] else { return }
        if !entry.previousKnown {
            for sessions in properties.values { result.formUnion(sessions) }
            return
        }
        for (property, sessions) in properties {
            for document in [entry.change.document, entry.previous] {
                switch SubscriptionPrefilter.key(ofDocument: document, property: property) {
                case .key(let key): if let found = byKey[className]?[property]?[key] { result.formUnion(found) }
                case .none: break
                case .unknown: result.formUnion(sessions)
                }
            }
        }
    }
}

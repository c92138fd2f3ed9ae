import Foundation

/// The sessions of one server indexed by what they subscribe to, so a history entry is
/// matched against the few sessions that can want it instead of every session.
struct FanOutIndex {
    private var routes = [UUID: SessionRoute]()
    /// Per class: sessions that look at every entry of it.
    private var everything = [String: Set<UUID>]()
    /// Per class and property: sessions by prefilter key.
    private var byKey = [String: [String: [String: Set<UUID>]]]()
    /// Per class and property: every session with a prefilter on it.
    private var byProperty = [String: [String: Set<UUID>]]()
    /// Per client file: its sessions.
    private var byClient = [String: Set<UUID>]()

    var count: Int { routes.count }

    mutating func set(_ id: UUID, _ route: SessionRoute) {
        remove(id)
        routes[id] = route
        byClient[route.clientId, default: []].insert(id)
        for className in route.watchedClasses { everything[className, default: []].insert(id) }
        for (className, filters) in route.prefilters {
            guard let filters else {
                everything[className, default: []].insert(id)
                continue
            }
            for filter in filters {
                byProperty[className, default: [:]][filter.property, default: []].insert(id)
                for key in filter.keys { byKey[className, default: [:]][filter.property, default: [:]][key, default: []].insert(id) }
            }
        }
    }

    mutating func remove(_ id: UUID) {
        guard let route = routes.removeValue(forKey: id) else { return }
        byClient[route.clientId]?.remove(id)
        if byClient[route.clientId]?.isEmpty == true { byClient[route.clientId] = nil }
        for className in route.watchedClasses { everything[className]?.remove(id) }
        for (className, filters) in route.prefilters {
            guard let filters else {
                everything[className]?.remove(id)
                continue
            }
            for filter in filters {
                byProperty[className]?[filter.property]?.remove(id)
                for key in filter.keys { byKey[className]?[filter.property]?[key]?.remove(id) }
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

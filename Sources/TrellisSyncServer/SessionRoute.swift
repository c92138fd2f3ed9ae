import Foundation
import Trellis
import TrellisSyncProtocol

/// What the server's fan-out knows of one session: which history entries it may have to send
/// (docs/SYNC.md, "Change notification"). A necessary condition only: the session still runs
/// its queries and the permissions on each entry it is given.
///
/// A session may need an entry of a class it subscribes to when it wrote the entry itself (a
/// write outside its own subscriptions is removed again on its device), when the new document
/// may be readable and passes one of its queries' prefilters (to send it) or the previous
/// document is unknown (pruned history: to remove it), or when the previous document may be
/// readable and passes a prefilter (its device holds the object and must remove it).
/// "May be readable" is the role's ``PermissionPrefilter``. Entries of the rules' custom user
/// data collection go to every session whose permissions read it.
struct SessionRoute: Sendable {
    let clientId: String
    /// Per subscribed class: the prefilters of its queries, or nil when one query has none.
    let prefilters: [String: [SubscriptionPrefilter]?]
    /// Per subscribed class: what the user's role may read of it (absent: anything).
    let readable: [String: PermissionPrefilter]
    /// Classes whose every entry the session looks at (the custom user data collection).
    let watchedClasses: Set<String>

    init(clientId: String, queries: [String: [SyncQuery]], permissions: SessionPermissions? = nil,
         watchedClasses: Set<String> = []) {
        self.clientId = clientId
        var prefilters = [String: [SubscriptionPrefilter]?]()
        var readable = [String: PermissionPrefilter]()
        for (className, classQueries) in queries {
            let found = classQueries.map(SubscriptionPrefilter.init)
            prefilters[className] = found.contains { $0 == nil } ? .some(nil) : .some(found.compactMap { $0 })
            if let permissions { readable[className] = PermissionPrefilter(permissions, collection: className) }
        }
        self.prefilters = prefilters
        self.readable = readable
        self.watchedClasses = watchedClasses
    }

    /// Whether the session may have to send something for `entry`.
    func mayWant(_ entry: HistoryEntry) -> Bool {
        let className = entry.change.className
        if watchedClasses.contains(className) { return true }
        guard let classFilters = prefilters[className] else { return false }
        if entry.clientId == clientId { return true }
        let readable = readable[className] ?? .anything
        func selected(_ document: JSONValue?) -> Bool {
            guard let filters = classFilters else { return true }
            return filters.contains { filter in
                switch SubscriptionPrefilter.key(ofDocument: document, property: filter.property) {
                case .key(let key): filter.keys.contains(key)
                case .none: false
                case .unknown: true
                }
            }
        }
        let document = entry.change.document
        if readable.admits(document) && (!entry.previousKnown || selected(document)) { return true }
        return readable.admits(entry.previous) && selected(entry.previous)
    }
}

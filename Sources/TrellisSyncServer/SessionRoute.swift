import Foundation
import Trellis
import TrellisSyncProtocol

/// What the server's fan-out knows of one session: which history entries it may have to send
/// (docs/SYNC.md, "Change notification"). A necessary condition only: the session still runs
/// its queries and the permissions on each entry it is given.
///
/// A session may need an entry of a class it subscribes to when the new document or the
/// previous one passes one of its queries' prefilters (the new one: to send it; the previous
/// one: its device holds the object and must remove it), when it wrote the entry itself (a
/// write outside its own subscriptions is removed again on its device), or when the previous
/// document is unknown (pruned history). Entries of the rules' custom user data collection
/// go to every session whose permissions read it.
struct SessionRoute: Sendable {
    let clientId: String
    /// Per subscribed class: the prefilters of its queries, or nil when one query has none.
    let prefilters: [String: [SubscriptionPrefilter]?]
    /// Classes whose every entry the session looks at (the custom user data collection).
    let watchedClasses: Set<String>

    init(clientId: String, queries: [String: [SyncQuery]], watchedClasses: Set<String> = []) {
        self.clientId = clientId
        var prefilters = [String: [SubscriptionPrefilter]?]()
        for (className, classQueries) in queries {
            let found = classQueries.map(SubscriptionPrefilter.init)
            prefilters[className] = found.contains { $0 == nil } ? .some(nil) : .some(found.compactMap { $0 })
        }
        self.prefilters = prefilters
        self.watchedClasses = watchedClasses
    }

    /// Whether the session may have to send something for `entry`.
    func mayWant(_ entry: HistoryEntry) -> Bool {
        let className = entry.change.className
        if watchedClasses.contains(className) { return true }
        guard let classFilters = prefilters[className] else { return false }
        guard let filters = classFilters, entry.previousKnown, entry.clientId != clientId else { return true }
        return filters.contains { filter in
            [entry.change.document, entry.previous].contains { document in
                switch SubscriptionPrefilter.key(ofDocument: document, property: filter.property) {
                case .key(let key): filter.keys.contains(key)
                case .none: false
                case .unknown: true
                }
            }
        }
    }
}

import Foundation
import Synchronization
import Trellis
import TrellisSyncProtocol

/// A flexible-sync subscription: the objects of one class that match a query. Realm's
/// `QuerySubscription`.
///
/// ```swift
/// QuerySubscription<Task>(name: "mine") { $0.owner == "me" }
/// QuerySubscription<Task>(name: "open", query: "done == false")
/// ```
public struct QuerySubscription<T: Object>: Sendable {
    public typealias QueryFunction = (Query<T>) -> Query<Bool>
    public let name: String?
    let query: String

    /// Every object of the class.
    public init(name: String? = nil) {
        self.name = name
        query = SyncQuery.all.text
    }

    /// A typed query.
    public init(name: String? = nil, query: QueryFunction) {
        self.name = name
        self.query = SyncQuery(T.self, query).text
    }

    /// A query in Realm's query language, `%@` / `$0` for the arguments.
    ///
    /// Traps with the parser's message when the text does not parse (as Realm does).
    public init(name: String? = nil, query predicateFormat: String, _ args: Any...) {
        self.name = name
        do {
            query = try SyncQuery.parse(predicateFormat, arguments: args).text
        } catch {
            preconditionFailure("\(error)")
        }
    }
}

/// One subscription of a set: Realm's `SyncSubscription`.
public struct SyncSubscription: Sendable, Equatable {
    public let name: String?
    public let objectClassName: String
    /// The query, arguments written as literals.
    public let queryString: String
}

/// Realm's `SyncSubscriptionState`.
public enum SyncSubscriptionState: Sendable {
    case pending
    case complete
    case error(SyncError)
    case superseded
}

/// The subscriptions of a synced file: Realm's `SyncSubscriptionSet`. Change it in
/// ``update(_:onComplete:)``; the server then sends the objects the new set selects, and
/// objects no subscription selects any more are removed locally.
public final class SyncSubscriptionSet: Sequence, @unchecked Sendable {
    // @unchecked Sendable: the draft is behind a lock.
    let engine: SyncEngine
    private let draft = Mutex<SubscriptionSet?>(nil)

    init(engine: SyncEngine) { self.engine = engine }

    private var stored: SubscriptionSet {
        engine.queue.sync { (try? engine.engineRealm()).map { realm -> SubscriptionSet in
            realm.refresh()
            return engine.storedSubscriptions(realm)
        } ?? SubscriptionSet(version: 0, subscriptions: []) }
    }

    private var current: SubscriptionSet { draft.withLock { $0 } ?? stored }

    public var count: Int { current.subscriptions.count }

    /// Whether the server has sent everything the newest set selects.
    /// `.error` when the server refused the newest set (the file then went back to the set the
    /// server still serves).
    public var state: SyncSubscriptionState {
        let version = stored.version
        let (completed, refused) = engine.queue.sync {
            let realm = try? engine.engineRealm()
            let completed = realm.flatMap { SyncStoreLayout.text($0, SyncStoreLayout.completedSubscriptions) }
                .flatMap(Int64.init) ?? -1
            return (completed, realm.flatMap { SyncStoreLayout.text($0, SyncStoreLayout.refusedSubscriptions) })
        }
        if let refused, let newline = refused.firstIndex(of: "\n"), Int64(refused[..<newline]) == version {
            let message = String(refused[refused.index(after: newline)...])
            return .error(SyncError(code: .invalidFlexibleSyncSubscriptions, message: message,
                                    serverCode: SyncErrorCode.badQuery.rawValue))
        }
        return completed >= version ? .complete : .pending
    }

    public func makeIterator() -> IndexingIterator<[SyncSubscription]> {
        current.subscriptions.map { SyncSubscription(name: $0.name, objectClassName: $0.className, queryString: $0.query) }
            .makeIterator()
    }

    /// The subscription named `name`.
    public func first(named name: String) -> SyncSubscription? { first { $0.name == name } }

    // MARK: - Changing

    /// Changes the set in `block` (which calls ``append(_:)`` and the `remove` methods) and
    /// calls `onComplete` once the server has sent what the new set selects.
    public func update(_ block: () -> Void, onComplete: (@Sendable (Error?) -> Void)? = nil) {
        let version: Int64
        do {
            version = try commit(block)
        } catch {
            onComplete?(error)
            return
        }
        guard let onComplete else { return }
        Task {
            do { try await engine.waitForSubscriptions(version: version); onComplete(nil) } catch { onComplete(error) }
        }
    }

    /// ``update(_:onComplete:)`` with the set passed to the block (`{ $0.append(…) }`).
    public func update(_ block: (SyncSubscriptionSet) -> Void, onComplete: (@Sendable (Error?) -> Void)? = nil) {
        update({ block(self) }, onComplete: onComplete)
    }

    /// Changes the set and waits until the server has sent what it selects.
    ///
    /// - Throws: `Realm.Error` with code `.invalidQuery` when a query does not fit this file's
    ///   models (nothing is stored), or with code `.subscriptionFailed` (as Realm) when the server refuses
    ///   a subscription: an unknown class or property, a query through a link, `@links`,
    ///   `SUBQUERY` (docs/SYNC.md, "What subscription queries support"). The file then keeps
    ///   the set the server still serves, and ``state`` is `.error`.
    public func update(_ block: () -> Void) async throws {
        let version = try commit(block)
        try await engine.waitForSubscriptions(version: version)
    }

    /// The async ``update(_:)`` with the set passed to the block.
    public func update(_ block: (SyncSubscriptionSet) -> Void) async throws {
        try await update({ block(self) })
    }

    private func commit(_ block: () -> Void) throws -> Int64 {
        try withoutActuallyEscaping(block) { block in
            let commit = { () throws -> Int64 in
                guard let realm = try? self.engine.engineRealm() else { return Int64(0) }
                return try self.write(on: realm, block)
            }
            if DispatchQueue.getSpecific(key: SyncEngine.queueKey) == ObjectIdentifier(engine) { return try commit() }
            return try engine.queue.sync(execute: commit)
        }
    }

    /// Runs `block` on a draft and stores the result (a new version if it changed), on the
    /// engine's queue. Returns the version.
    @discardableResult
    func write(on realm: Realm, _ block: () -> Void) throws -> Int64 {
        realm.refresh()
        let before = engine.storedSubscriptions(realm)
        draft.withLock { $0 = before }
        block()
        guard var after = draft.withLock({ state -> SubscriptionSet? in defer { state = nil }; return state }) else {
            return before.version
        }
        if after.subscriptions == before.subscriptions { return before.version }
        for subscription in after.subscriptions where !before.subscriptions.contains(subscription) {
            try engine.checkAgainstModels(subscription, realm)
        }
        after.version = before.version + 1
        try realm.write {
            realm.isApplyingSyncDownload = true
            try SyncStoreLayout.putJSON(realm, SyncStoreLayout.subscriptions, after)
        }
        realm.isApplyingSyncDownload = false
        engine.post(.subscriptionsChanged)
        return after.version
    }

    private func change(_ body: (inout SubscriptionSet) -> Void) {
        draft.withLock { state in
            guard var set = state else {
                preconditionFailure("Cannot modify subscriptions outside of a write transaction.")
            }
            body(&set)
            state = set
        }
    }

    /// Adds subscriptions (inside an update block). A subscription with the name of an
    /// existing one replaces its query.
    public func append<T: Object>(_ subscriptions: QuerySubscription<T>...) {
        change { set in
            for subscription in subscriptions {
                let entry = SubscriptionSet.Subscription(name: subscription.name, className: T.className(),
                                                         query: subscription.query)
                if let name = subscription.name, let index = set.subscriptions.firstIndex(where: { $0.name == name }) {
                    set.subscriptions[index] = entry
                } else if !set.subscriptions.contains(entry) {
                    set.subscriptions.append(entry)
                }
            }
        }
    }

    /// Removes the subscription named `name`.
    public func remove(named name: String) { change { $0.subscriptions.removeAll { $0.name == name } } }

    /// Removes every subscription.
    public func removeAll() { change { $0.subscriptions.removeAll() } }

    /// Removes every subscription of a class.
    public func removeAll<T: Object>(ofType type: T.Type) {
        change { $0.subscriptions.removeAll { $0.className == T.className() } }
    }
}

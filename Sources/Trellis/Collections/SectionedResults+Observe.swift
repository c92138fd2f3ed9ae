import Dispatch
import Foundation

/// What ``SectionedResults`` and ``ResultsSection`` have in common, as in Realm: a live,
/// thread-confined collection that can be frozen, thawed and observed.
public protocol RealmSectionedResult: RandomAccessCollection, Equatable, ThreadConfined {
    /// The Realm of the elements.
    var realm: Realm? { get }
    /// Whether the collection can no longer be used (as for ``Results``: never).
    var isInvalidated: Bool { get }
    /// The number of elements (of sections, for ``SectionedResults``).
    var count: Int { get }
    /// Whether the elements belong to a frozen Realm.
    var isFrozen: Bool { get }
    /// The collection frozen at the Realm's current version.
    func freeze() -> Self
    /// The live collection in a Realm on the calling thread.
    func thaw() -> Self?
    /// Calls `block` with the collection, then after every commit that changed it (see
    /// ``SectionedResultsChange``). `keyPaths` limits which property changes count.
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken
}

/// Realm's former name of ``SectionedResultsChange``.
@available(*, deprecated, renamed: "SectionedResultsChange")
public typealias RealmSectionedResultsChange = SectionedResultsChange

extension RealmSectionedResult {
    /// ``observe(keyPaths:on:_:)`` with every property and the Realm's own thread.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken
    {
        observe(keyPaths: keyPaths, on: queue, block)
    }

    /// Like ``observe(keyPaths:on:_:)``, but `block` runs isolated to `actor`, with the
    /// collection read from the actor's Realm.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, SectionedResultsChange<Self>) -> Void)
        async -> NotificationToken
    {
        guard let realm else { throwRealmException("Change notifications are only supported on managed collections.") }
        realm.core.verifyCanObserve()
        let description = SectionedDescription(resolver: _trellisResolver(), configuration: realm.core.configuration)
        return await description.observe(Self.self, keyPaths: keyPaths, on: actor, block)
    }
}

extension RealmSectionedResult where Element: ObjectBase {
    /// ``observe(keyPaths:on:_:)`` with typed key paths of a section's objects.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken
    {
        observe(keyPaths: keyPaths.map(QueryKeyPathNames.name(of:)), on: queue, block)
    }

    /// The actor form with typed key paths.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, SectionedResultsChange<Self>) -> Void)
        async -> NotificationToken
    {
        await observe(keyPaths: keyPaths.map(QueryKeyPathNames.name(of:)), on: actor, block)
    }
}

extension RealmSectionedResult where Element: RealmSectionedResult, Element.Element: ObjectBase {
    /// ``observe(keyPaths:on:_:)`` with typed key paths of the sections' objects.
    public func observe(keyPaths: [PartialKeyPath<Element.Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken
    {
        observe(keyPaths: keyPaths.map(QueryKeyPathNames.name(of:)), on: queue, block)
    }

    /// The actor form with typed key paths.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element.Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, SectionedResultsChange<Self>) -> Void)
        async -> NotificationToken
    {
        await observe(keyPaths: keyPaths.map(QueryKeyPathNames.name(of:)), on: actor, block)
    }
}

// MARK: - SectionedResults and ResultsSection

extension SectionedResults {
    /// Calls `block` with the initial sections, then after every commit that changed them:
    /// rows deleted (old index paths), inserted and modified (new index paths), and the
    /// sections inserted and deleted.
    public func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                        _ block: @escaping (SectionedResultsChange<SectionedResults>) -> Void) -> NotificationToken
    {
        let tracker = SectionTracker(keyBlock: keyBlock)
        return results.observe(keyPaths: keyPaths, on: queue) { change in
            guard let (sectioned, grouped) = tracker.track(change, only: nil) else { return }
            guard let grouped else { return block(.initial(sectioned)) }
            block(grouped.change(of: sectioned))
        }
    }

    public func _trellisResolver() -> _ThreadSafeResolver {
        let inner = results._trellisResolver(), keyBlock = self.keyBlock
        return _ThreadSafeResolver { core in
            (inner.resolve(core) as? Results<SectionElement>).map { SectionedResults(results: $0, keyBlock: keyBlock) }
        }
    }
}

extension ResultsSection {
    /// Calls `block` with the section, then after every commit that changed it, as Realm does:
    /// its rows deleted (index paths in the section's old position; none when the section
    /// itself goes), inserted (in its new position) and modified, and the section itself
    /// inserted or deleted. Commits that leave the section as it was are not reported.
    public func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                        _ block: @escaping (SectionedResultsChange<ResultsSection>) -> Void) -> NotificationToken
    {
        let tracker = SectionTracker(keyBlock: parent.keyBlock)
        let key = self.key
        return parent.results.observe(keyPaths: keyPaths, on: queue) { change in
            guard let (sectioned, grouped) = tracker.track(change, only: key) else { return }
            let section = ResultsSection(parent: sectioned, key: key)
            guard let grouped else { return block(.initial(section)) }
            if !grouped.isEmpty { block(grouped.change(of: section)) }
        }
    }

    public func _trellisResolver() -> _ThreadSafeResolver {
        let inner = parent._trellisResolver(), key = self.key
        return _ThreadSafeResolver { core in
            (inner.resolve(core) as? SectionedResults<Key, Element>).map { ResultsSection(parent: $0, key: key) }
        }
    }
}

/// How to find sectioned results again in an actor's Realm, and observe them there.
// @unchecked Sendable: the resolver captures only immutable descriptions (a table, query
// steps, the key block of the sections), never a Realm or an accessor.
private struct SectionedDescription: @unchecked Sendable {
    let resolver: _ThreadSafeResolver
    let configuration: Realm.Configuration

    func observe<A: Actor, Collection: RealmSectionedResult>(
        _ type: Collection.Type, keyPaths: [String]?, on actor: isolated A,
        _ block: @Sendable @escaping (isolated A, SectionedResultsChange<Collection>) -> Void
    ) -> NotificationToken {
        let target: RealmCore
        do {
            target = try RealmOpener.open(configuration, confinement: .actor(actor))
        } catch {
            throwRealmException("Could not open '\(configuration.path)' for the actor: \(error)")
        }
        guard let resolved = resolver.resolve(target) as? Collection else {
            throwRealmException("The sectioned results could not be found in the actor's Realm.")
        }
        return resolved.observe(keyPaths: keyPaths, on: nil) { change in
            let handed = HandedSectionChange(value: change)
            actor.assumeIsolated { block($0, handed.value) }
        }
    }
}

/// A change handed to the block of an actor observation.
// @unchecked Sendable: it holds values of the actor's own Realm, made while the actor's
// executor runs, and used only by the block isolated to that same actor.
private struct HandedSectionChange<Value>: @unchecked Sendable {
    let value: Value
}

import Synchronization

/// Something that lives in one Realm and can be frozen, or handed to another thread through a
/// ``ThreadSafeReference``: objects, results and collections.
public protocol ThreadConfined {
    /// The Realm it belongs to, or nil when unmanaged.
    var realm: Realm? { get }
    /// Whether it was deleted (or its owner was), or its Realm invalidated.
    var isInvalidated: Bool { get }
    /// Whether it belongs to a frozen Realm.
    var isFrozen: Bool { get }
    /// A frozen copy, readable from any thread.
    func freeze() -> Self
    /// The live value in a Realm on the calling thread.
    func thaw() -> Self?
    /// How to find the same value in another Realm of the file. Not API.
    func _trellisResolver() -> _ThreadSafeResolver
}

/// Finds a thread-confined value in another Realm. Not API.
public struct _ThreadSafeResolver {
    let resolve: (RealmCore) -> Any?
}

/// A reference to a live object or collection that another thread resolves in its own Realm:
/// the way to hand live data across threads (a frozen value can be shared as it is).
///
/// As in Realm, the reference keeps the version it was made at: a Realm older than that moves
/// to it, and a Realm in no read transaction yet (just opened, or invalidated) begins one at
/// that version, so the value is seen as it was. Until it is resolved (once) or released, the
/// reference pins that version of the file: prefer short-lived references.
///
/// ```swift
/// let reference = ThreadSafeReference(to: person)
/// DispatchQueue.global().async {
///     let realm = try! Realm(configuration: configuration)
///     guard let person = realm.resolve(reference) else { return }  // nil if deleted
/// }
/// ```
public final class ThreadSafeReference<Confined: ThreadConfined>: Sendable {
    private let payload: ReferencePayload

    /// A reference to `threadConfined`, which must be managed by a Realm.
    public init(to threadConfined: Confined) {
        // Realm's checks, in Realm's order (RLMThreadSafeReference).
        if threadConfined.isInvalidated { throwRealmException("Cannot construct reference to invalidated object") }
        guard let realm = threadConfined.realm else {
            throwRealmException("Cannot construct reference to unmanaged object, which can be passed across threads "
                + "directly")
        }
        payload = ReferencePayload(resolver: threadConfined._trellisResolver(), source: realm.core)
    }

    /// Whether the reference can no longer be resolved: it was resolved already (a reference
    /// resolves once), as in Realm.
    public var isInvalidated: Bool { payload.wasResolved }

    func resolve(in core: RealmCore) -> Confined? {
        payload.resolve(in: core) as? Confined
    }
}

/// What a ``ThreadSafeReference`` (or an observation registered on a queue) hands to another
/// thread: how to find the value again, and the version it was taken at, as realm-core's
/// reference keeps it.
///
/// The Realm that resolves it moves to that version when it is older, and a Realm in no read
/// transaction yet (just opened on its thread, or invalidated) begins one at that very version
/// (the payload holds a snapshot of it), so the value is seen as it was: an object deleted since
/// is still found, results count what they counted. A reference made in a write transaction
/// names objects of a version that does not exist yet: it resolves at the newest.
final class ReferencePayload: Sendable {
    // @unchecked Sendable: the resolver captures only immutable descriptions (a table, an
    // object key, query steps), never a Realm or an accessor; the snapshot is taken out once,
    // under the lock, by the thread that resolves.
    private struct State: @unchecked Sendable {
        let resolver: _ThreadSafeResolver
        let path: String
        let version: Int
        let madeInWrite: Bool
        var snapshot: Transaction?
        var resolved = false
    }
    private let state: Mutex<State>

    init(resolver: _ThreadSafeResolver, source: RealmCore) {
        let madeInWrite = source.isInWriteTransaction
        let version = source.transaction.version
        let snapshot = madeInWrite || source.isFrozen ? nil : source.transaction.duplicate()
        state = Mutex(State(resolver: resolver, path: source.environmentPath, version: version,
                            madeInWrite: madeInWrite, snapshot: snapshot))
    }

    var wasResolved: Bool { state.withLock { $0.resolved } }

    func resolve(in core: RealmCore) -> Any? {
        let taken = state.withLock { state -> Taken in
            defer {
                state.resolved = true
                state.snapshot = nil
            }
            return Taken(first: !state.resolved, resolver: state.resolver, path: state.path, version: state.version,
                         madeInWrite: state.madeInWrite, snapshot: state.snapshot)
        }
        if !taken.first { throwRealmException("Can only resolve a thread safe reference once.") }
        // The snapshot is this reference's alone: ended here unless the Realm reads on from it.
        var snapshot = taken.snapshot
        defer { snapshot?.abort() }
        // Realm 10.54 does not check the file (realm-core looks the object up by its keys in
        // the resolving Realm): a reference resolved in another file finds nothing there.
        if core.environmentPath != taken.path { return nil }
        if !core.isFrozen, !core.isInWriteTransaction {
            if !core.hasReadTransaction {
                // realm-core's refresh_target_realm: begin the read at the reference's version
                // (the newest when it was made in a write, or its snapshot is not kept).
                if let kept = snapshot {
                    snapshot = nil
                    core.beginRead(on: kept)
                } else {
                    core.advanceSnapshot()
                }
            } else {
                let current = core.transaction.version
                if current < taken.version || (current == taken.version && taken.madeInWrite) { core.advanceSnapshot() }
            }
        }
        return taken.resolver.resolve(core)
    }

    /// What ``resolve(in:)`` takes out of the state at once.
    // @unchecked Sendable: as ``State``; the snapshot now belongs to the resolving thread.
    private struct Taken: @unchecked Sendable {
        let first: Bool
        let resolver: _ThreadSafeResolver
        let path: String
        let version: Int
        let madeInWrite: Bool
        let snapshot: Transaction?
    }

    deinit {
        state.withLock { $0.snapshot?.abort() }
    }
}

extension Realm {
    /// The value `reference` names, in this Realm; nil if it was deleted (or this Realm is of
    /// another file). A reference can be resolved once.
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        core.verifyThread()
        return reference.resolve(in: core)
    }
}

extension ObjectBase: ThreadConfined {
    public func _trellisResolver() -> _ThreadSafeResolver {
        guard let managed = _managed else { return _ThreadSafeResolver { _ in nil } }
        let key = managed.key
        let type = Swift.type(of: self)
        let dynamicClassName = managed.info.dynamicClassName
        return _ThreadSafeResolver { core in core.sameObject(type, key: key, dynamicClassName: dynamicClassName) }
    }
}

extension Results: ThreadConfined {
    public func _trellisResolver() -> _ThreadSafeResolver {
        let source = self.source, steps = self.steps
        return _ThreadSafeResolver { core in Results(core: core, source: source, steps: steps) }
    }
}

extension LinkingObjects: ThreadConfined {
    public func _trellisResolver() -> _ThreadSafeResolver {
        guard let results else { return _ThreadSafeResolver { _ in nil } }
        let inner = results._trellisResolver()
        return _ThreadSafeResolver { core in
            (inner.resolve(core) as? Results<Element>).map { LinkingObjects(results: $0) }
        }
    }
}

extension _CollectionProperty {
    /// Finds the same stored collection (its owner's row and column) in another Realm.
    func collectionResolver() -> _ThreadSafeResolver {
        guard let location = binding?.location else { return _ThreadSafeResolver { _ in nil } }
        return _ThreadSafeResolver { core in
            let moved = CollectionBinding(core: core, location: location)
            return moved.isValid ? Self(binding: moved) : nil
        }
    }
}

extension List: ThreadConfined {
    public func _trellisResolver() -> _ThreadSafeResolver { collectionResolver() }
}

extension MutableSet: ThreadConfined {
    public func _trellisResolver() -> _ThreadSafeResolver { collectionResolver() }
}

extension Map: ThreadConfined {
    public func _trellisResolver() -> _ThreadSafeResolver { collectionResolver() }
}

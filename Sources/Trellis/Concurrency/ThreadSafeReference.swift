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
/// ```swift
/// let reference = ThreadSafeReference(to: person)
/// DispatchQueue.global().async {
///     let realm = try! Realm(configuration: configuration)
///     guard let person = realm.resolve(reference) else { return }  // nil if deleted
/// }
/// ```
public final class ThreadSafeReference<Confined: ThreadConfined>: Sendable {
    // @unchecked Sendable: the resolver captures only immutable descriptions (a table, an
    // object key, query steps), never a Realm or an accessor.
    private struct Payload: @unchecked Sendable {
        let resolver: _ThreadSafeResolver
        let path: String
        let version: Int
    }
    private let payload: Payload
    private let resolved = Mutex<Bool>(false)

    /// A reference to `threadConfined`, which must be managed by a Realm.
    public init(to threadConfined: Confined) {
        // Realm's checks, in Realm's order (RLMThreadSafeReference).
        if threadConfined.isInvalidated { throwRealmException("Cannot construct reference to invalidated object") }
        guard let realm = threadConfined.realm else {
            throwRealmException("Cannot construct reference to unmanaged object, which can be passed across threads "
                + "directly")
        }
        payload = Payload(resolver: threadConfined._trellisResolver(), path: realm.core.environmentPath,
                          version: realm.core.transaction.version)
    }

    /// Whether the reference can no longer be resolved: it was resolved already (a reference
    /// resolves once), as in Realm.
    public var isInvalidated: Bool { resolved.withLock { $0 } }

    func resolve(in core: RealmCore) -> Confined? {
        let first = resolved.withLock { wasResolved in
            defer { wasResolved = true }
            return !wasResolved
        }
        if !first { throwRealmException("Can only resolve a thread safe reference once.") }
        // Realm 10.54 does not check the file (realm-core looks the object up by its keys in
        // the resolving Realm): a reference resolved in another file finds nothing there.
        if core.environmentPath != payload.path { return nil }
        // The resolving Realm must see at least the version the reference was made at.
        if !core.isFrozen, core.writeTransaction == nil, core.transaction.version < payload.version {
            core.advanceSnapshot()
        }
        return payload.resolver.resolve(core) as? Confined
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

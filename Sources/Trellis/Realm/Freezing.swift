/// Frozen snapshots: immutable views of one version that any thread may read.
extension RealmCore {
    /// The frozen core of this core's current version (the newest committed version during a
    /// write transaction).
    func frozenCore() -> RealmCore {
        verifyThread()
        if isFrozen { return self }
        let snapshot: Transaction
        do {
            snapshot = try file.environment.beginRead()
        } catch {
            throwRealmException("Could not freeze '\(environmentPath)': \(error)")
        }
        // A new snapshot reads the newest version; if this Realm pins an older one, the frozen
        // Realm takes this Realm's snapshot and this Realm pins the new one instead.
        var frozenSnapshot = snapshot
        if writeTransaction == nil, snapshot.version != transaction.version,
           let mine = exchangeSnapshot(for: snapshot)
        {
            frozenSnapshot = mine
        }
        let version = frozenSnapshot.version
        var used = false
        let core = file.frozenCore(version: version) {
            used = true
            return RealmCore(frozenFrom: configuration, file: file, snapshot: frozenSnapshot)
        }
        if !used { frozenSnapshot.abort() }
        return core
    }

    /// The live core of the same file on the calling thread, as it is: Realm's `thaw()` gives
    /// the thread's Realm without refreshing it, so an object or collection thawed there shows
    /// that Realm's version (commits made elsewhere since appear after `refresh()`); a thread
    /// with no open Realm of the file gets a new one, which reads the newest version.
    func thawedCore() -> RealmCore {
        do {
            let core = try RealmOpener.open(configuration)
            return core
        } catch {
            throwRealmException("Could not thaw '\(environmentPath)': \(error)")
        }
    }
}

extension Realm {
    /// Whether this Realm is a frozen snapshot.
    public var isFrozen: Bool { core.isFrozen }

    /// An immutable snapshot of this Realm's current version, readable from any thread. It
    /// never changes, never delivers notifications, and cannot be written.
    public func freeze() -> Realm { Realm(core: core.frozenCore()) }

    /// The live Realm of the same file on the calling thread (at its own version: thawing does
    /// not refresh it).
    public func thaw() -> Realm {
        core.isFrozen ? Realm(opened: core.thawedCore()) : self
    }

    /// `object` frozen at this Realm's version.
    public func freeze<T: ObjectBase>(_ object: T) -> T { object.freeze() }

    /// `object` in a live Realm on the calling thread; nil if it was deleted since.
    public func thaw<T: ObjectBase>(_ object: T) -> T? { object.thaw() }
}

extension _ObjectObservable {
    /// Whether the object belongs to a frozen Realm.
    public var isFrozen: Bool { _managed?.core.isFrozen ?? false }

    /// An immutable copy of the object at its Realm's current version, readable from any
    /// thread. Unmanaged objects cannot be frozen.
    public func freeze() -> Self {
        guard let managed = _managed else { throwRealmException("Unmanaged objects cannot be frozen.") }
        if managed.core.isFrozen { return self }
        if !managed.core.objectExists(managed) { throwRealmException("Object has been deleted or invalidated.") }
        let frozen = managed.core.frozenCore()
        guard let object = frozen.sameObject(Self.self, as: managed) else {
            throwRealmException("Cannot freeze an object in the same write transaction as it was created in.")
        }
        return object
    }

    /// The live object (in a Realm on the calling thread, at the newest version), or nil if
    /// it was deleted.
    public func thaw() -> Self? {
        guard let managed = _managed else { throwRealmException("Unmanaged objects cannot be thawed.") }
        if !managed.core.isFrozen { return self }
        return managed.core.thawedCore().sameObject(Self.self, as: managed)
    }
}

extension Results {
    /// Whether the results belong to a frozen Realm.
    public var isFrozen: Bool { core.isFrozen }

    /// The results frozen at the Realm's current version (evaluated now).
    public func freeze() -> Results {
        if core.isFrozen { return self }
        let frozen = Results(core: core.frozenCore(), source: source, steps: steps)
        _ = frozen.keys()
        return frozen
    }

    /// The live results in a Realm on the calling thread.
    public func thaw() -> Results? {
        core.isFrozen ? Results(core: core.thawedCore(), source: source, steps: steps) : self
    }
}

extension LinkingObjects {
    /// Whether the linking objects belong to a frozen Realm.
    public var isFrozen: Bool { results?.isFrozen ?? false }

    /// The linking objects frozen at the Realm's current version.
    public func freeze() -> LinkingObjects {
        guard let results else { throwRealmException("Unmanaged objects cannot be frozen.") }
        return LinkingObjects(results: results.freeze())
    }

    /// The live linking objects in a Realm on the calling thread.
    public func thaw() -> LinkingObjects? {
        guard let results, let thawed = results.thaw() else { return nil }
        return LinkingObjects(results: thawed)
    }
}

extension _CollectionProperty {
    /// The same collection bound to `core`.
    func rebound(to core: RealmCore) -> Self? {
        guard let binding else { return nil }
        let moved = CollectionBinding(core: core, location: binding.location)
        return moved.isValid ? Self(binding: moved) : nil
    }

    /// `kind`: Realm's class name for the collection, which its message for an unmanaged one
    /// names (RLMArray, RLMSet, RLMDictionary).
    func frozenCollection(_ kind: String) -> Self {
        guard let binding else { unmanagedCollectionTrap(kind) }
        if binding.core.isFrozen { return self }
        guard let frozen = rebound(to: binding.core.frozenCore()) else {
            throwRealmException("Object has been deleted or invalidated.")
        }
        return frozen
    }

    func thawedCollection() -> Self? {
        guard let binding else { return self }
        return binding.core.isFrozen ? rebound(to: binding.core.thawedCore()) : self
    }
}

extension List {
    /// Whether the list belongs to a frozen Realm.
    public var isFrozen: Bool { binding?.core.isFrozen ?? false }
    /// The list frozen at its Realm's current version. Unmanaged lists cannot be frozen.
    public func freeze() -> List { frozenCollection("RLMArray") }
    /// The live list in a Realm on the calling thread; nil if its object was deleted.
    public func thaw() -> List? { thawedCollection() }
}

extension MutableSet {
    /// Whether the set belongs to a frozen Realm.
    public var isFrozen: Bool { binding?.core.isFrozen ?? false }
    /// The set frozen at its Realm's current version. Unmanaged sets cannot be frozen.
    public func freeze() -> MutableSet { frozenCollection("RLMSet") }
    /// The live set in a Realm on the calling thread; nil if its object was deleted.
    public func thaw() -> MutableSet? { thawedCollection() }
}

extension Map {
    /// Whether the map belongs to a frozen Realm.
    public var isFrozen: Bool { binding?.core.isFrozen ?? false }
    /// The map frozen at its Realm's current version. Unmanaged maps cannot be frozen.
    public func freeze() -> Map { frozenCollection("RLMDictionary") }
    /// The live map in a Realm on the calling thread; nil if its object was deleted.
    public func thaw() -> Map? { thawedCollection() }
}

import Dispatch

extension LinkingObjects {
    /// Calls `block` with the initial origins, then after every commit that linked or unlinked
    /// the object, or changed an origin (see `Results.observe`).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<LinkingObjects>) -> Void) -> NotificationToken
    {
        guard let results else {
            throwRealmException("Change notifications are only supported on managed collections.")
        }
        results.core.verifyCanObserve()
        return results.core.observing(on: queue) { target in
            let moved = Results<Element>(core: target, source: results.source, steps: results.steps)
            return CollectionObserver(core: target, collection: LinkingObjects(results: moved),
                                      source: moved.observationSource(keyPaths), block: block)
        }
    }
}

extension List {
    /// Calls `block` with the initial list, then after every commit that changed it: elements
    /// removed (old indices), inserted (new indices), replaced in place or (for objects)
    /// whose properties changed (old indices). Deleting the owner removes every element.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<List>) -> Void) -> NotificationToken
    {
        if case .nested(let nested) = storage {
            return nested.observing("List", on: queue) { moved in
                CollectionObserver(core: moved.core, collection: List(nested: moved), source: .nested(moved), block: block)
            }
        }
        return CollectionBinding.observing(binding, on: queue) { moved in
            CollectionObserver(core: moved.core, collection: List(binding: moved),
                               source: .stored(moved, keyPaths: keyPaths, unique: false), block: block)
        }
    }
}

extension MutableSet {
    /// Calls `block` with the initial set, then after every commit that changed it (indices
    /// in the set's stored order).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<MutableSet>) -> Void) -> NotificationToken
    {
        CollectionBinding.observing(binding, on: queue) { moved in
            CollectionObserver(core: moved.core, collection: MutableSet(binding: moved),
                               source: .stored(moved, keyPaths: keyPaths, unique: true), block: block)
        }
    }
}

extension Map: RealmKeyedCollection where Key == String {
    /// Calls `block` with the initial map, then after every commit that changed it, by key:
    /// keys removed, added, and whose value changed (or whose object's properties changed).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmMapChange<Map>) -> Void) -> NotificationToken
    {
        if case .nested(let nested) = storage {
            return nested.observing("Dictionary", on: queue) { moved in
                MapObserver(core: moved.core, collection: Map(nested: moved), read: {
                    var out = [String: [UInt8]]()
                    for entry in moved.storedEntries() { out[entry.key] = entry.value }
                    return out
                }, target: nil, paths: nil, block: block)
            }
        }
        return CollectionBinding.observing(binding, on: queue) { moved in
            let location = moved.location
            return MapObserver(core: moved.core, collection: Map(binding: moved),
                               read: { MapObserver<Map>.entries(moved.core, location) },
                               target: location.field.isLink ? moved.core.linkedTable(location.field) : nil,
                               paths: CollectionObserver<Map, [UInt8]>.Source.paths(keyPaths, moved), block: block)
        }
    }
}

extension CollectionBinding {
    /// Registers the observer `make` builds for the stored collection of `binding`, bound to
    /// the Realm that delivers (this one, or the one confined to `queue`).
    static func observing(_ binding: CollectionBinding?, on queue: DispatchQueue?,
                          _ make: @escaping (CollectionBinding) -> ChangeObserver) -> NotificationToken
    {
        guard let binding else {
            throwRealmException("Change notifications are only supported on managed collections.")
        }
        binding.verifyReadable()
        binding.core.verifyCanObserve()
        return binding.core.observing(on: queue) { target in
            make(CollectionBinding(core: target, location: binding.location))
        }
    }
}

extension NestedCollectionBinding {
    /// Registers the observer `make` builds for this nested collection, bound to the Realm
    /// that delivers (this one, or the one confined to `queue`).
    func observing(_ kind: String, on queue: DispatchQueue?,
                   _ make: @escaping (NestedCollectionBinding) -> ChangeObserver) -> NotificationToken
    {
        verifyReadable(kind)
        core.verifyCanObserve()
        let root = self.root, path = self.path
        return core.observing(on: queue) { target in make(NestedCollectionBinding(core: target, root: root, path: path)) }
    }

    /// The stored form of each element of a nested list (empty for `.none`).
    func storedElements() -> [[UInt8]] {
        guard case .list(let elements)? = storedValue() else { return [] }
        return elements.map { $0.map(MixedCoding.encode) ?? [] }
    }

    /// The stored form of each entry of a nested dictionary.
    func storedEntries() -> [(key: String, value: [UInt8])] {
        guard case .dictionary(let entries)? = storedValue() else { return [] }
        return entries.map { ($0.key, $0.value.map(MixedCoding.encode) ?? []) }
    }
}

extension CollectionObserver.Source where Element == [UInt8] {
    /// A list nested in an `AnyRealmValue`: its elements' stored bytes; it may change when
    /// the column (or collection) holding it does.
    static func nested(_ binding: NestedCollectionBinding) -> Self {
        let owner = binding.root.ownerColumn
        return Self(
            elements: { binding.storedElements() },
            mayChangeElements: { changes in
                Results<Int>.ownerChanged(changes, owner.table, owner.key, column: owner.column)
            },
            isModified: { _, _ in false },
            elementsAreUnique: false)
    }

    /// A stored list or set: its elements' bytes; for objects, modified when the object is.
    static func stored(_ binding: CollectionBinding, keyPaths: [String]?, unique: Bool) -> Self {
        let core = binding.core
        let location = binding.location
        let paths = Self.paths(keyPaths, binding)
        let target = location.field.isLink ? core.linkedTable(location.field) : nil
        let isSet = location.field.typeInfo.collection == .set
        return Self(
            elements: {
                (isSet ? core.setElements(location) : core.listElements(location)).map { Array($0) }
            },
            mayChangeElements: { changes in
                guard let owner = changes.tables[location.table.tableId] else { return false }
                return owner.deletions.contains(location.key)
                    || owner.modifications[location.key]?.contains(location.field.rowColumn) == true
            },
            isModified: { element, checker in
                guard let target, let key = CollectionElement.linkKey(element) else { return false }
                return checker.isModified(target, key, paths: paths)
            },
            elementsAreUnique: unique)
    }

    /// Key paths resolved from the collection's object class (nil for values or no paths).
    static func paths(_ keyPaths: [String]?, _ binding: CollectionBinding) -> [ObservedKeyPath]? {
        guard let keyPaths, let target = binding.core.linkedTable(binding.location.field) else { return nil }
        return keyPaths.map { ObservedKeyPath.resolve($0, from: target.info, core: binding.core) }
    }
}

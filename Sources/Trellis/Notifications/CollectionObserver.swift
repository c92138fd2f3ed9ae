/// Observes a collection: after each commit that could have changed it, compares its
/// elements with the ones last reported and reports deletions, insertions and modifications.
///
/// The change set decides how much work a commit costs: a commit that touched none of the
/// tables and objects the collection depends on costs a dictionary lookup; one that only
/// modified objects costs a lookup per element and no re-evaluation; only a commit that can
/// change membership or order re-reads the collection.
final class CollectionObserver<Collection, Element: Hashable>: ChangeObserver {
    /// What the observer needs to know about the observed collection.
    struct Source {
        /// The elements in the Realm's current snapshot.
        let elements: () -> [Element]
        /// Whether the elements themselves (membership or order) may differ after `changes`.
        let mayChangeElements: (ChangeSet) -> Bool
        /// Whether an element's object changed (false for plain values).
        let isModified: (Element, ChangeChecker) -> Bool
        /// Whether each element appears at most once (results, sets) rather than possibly
        /// repeatedly (lists, backlinks counted per link).
        let elementsAreUnique: Bool
    }

    private unowned let core: RealmCore
    private let collection: Collection
    private let source: Source
    private let block: (RealmCollectionChange<Collection>) -> Void
    private var elements: [Element]

    init(core: RealmCore, collection: Collection, source: Source,
         block: @escaping (RealmCollectionChange<Collection>) -> Void)
    {
        self.core = core
        self.collection = collection
        self.source = source
        self.block = block
        elements = source.elements()
        super.init(version: core.transaction.version)
    }

    override func deliverInitial() { block(.initial(collection)) }

    override func reloadState() { elements = source.elements() }

    override func advance(_ changes: ChangeSet, notify: Bool) {
        let checker = ChangeChecker(core: core, changes: changes)
        var deletions = [Int](), insertions = [Int](), modifications = [Int]()
        if !changes.isComplete || source.mayChangeElements(changes) {
            let current = source.elements()
            let diff = source.elementsAreUnique
                ? CollectionDiff.ofUniqueElements(old: elements, new: current)
                : CollectionDiff.ofSequences(old: elements, new: current)
            deletions = diff.deletions
            insertions = diff.insertions
            let replaced = Set(diff.replaced)
            modifications = diff.replaced
            for (old, new) in diff.kept where !replaced.contains(old) && source.isModified(current[new], checker) {
                modifications.append(old)
            }
            modifications.sort()
            elements = current
        } else {
            for (index, element) in elements.enumerated() where source.isModified(element, checker) {
                modifications.append(index)
            }
        }
        guard notify, !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return }
        block(.update(collection, deletions: deletions, insertions: insertions, modifications: modifications))
    }
}

/// Observes a `Map`: changes are reported by key.
final class MapObserver<Collection: RealmKeyedCollection>: ChangeObserver where Collection.Key == String {
    private unowned let core: RealmCore
    private let collection: Collection
    /// The entries in the current snapshot, each value in its stored form.
    private let read: () -> [String: [UInt8]]
    /// The class of object values, if the values are links.
    private let target: Table?
    private let paths: [ObservedKeyPath]?
    private let block: (RealmMapChange<Collection>) -> Void
    private var entries: [String: [UInt8]]

    init(core: RealmCore, collection: Collection, read: @escaping () -> [String: [UInt8]], target: Table?,
         paths: [ObservedKeyPath]?, block: @escaping (RealmMapChange<Collection>) -> Void)
    {
        self.core = core
        self.collection = collection
        self.read = read
        self.target = target
        self.paths = paths
        self.block = block
        entries = read()
        super.init(version: core.transaction.version)
    }

    /// A stored map's entries.
    static func entries(_ core: RealmCore, _ location: CollectionLocation) -> [String: [UInt8]] {
        var out = [String: [UInt8]]()
        for entry in core.mapEntries(location) { out[entry.key] = Array(entry.value) }
        return out
    }

    override func deliverInitial() { block(.initial(collection)) }

    override func reloadState() { entries = read() }

    override func advance(_ changes: ChangeSet, notify: Bool) {
        let checker = ChangeChecker(core: core, changes: changes)
        let current = read()
        let deletions = entries.keys.filter { current[$0] == nil }.sorted()
        let insertions = current.keys.filter { entries[$0] == nil }.sorted()
        var modifications = [String]()
        for (key, value) in current {
            guard let old = entries[key] else { continue }
            if old != value {
                modifications.append(key)
            } else if let target, let linked = CollectionElement.linkKey(value),
                      checker.isModified(target, linked, paths: paths)
            {
                modifications.append(key)
            }
        }
        entries = current
        guard notify, !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return }
        block(.update(collection, deletions: deletions, insertions: insertions, modifications: modifications.sorted()))
    }
}

/// Observes the Realm as a whole: `.didChange` after every new version.
final class RealmObserver: ChangeObserver {
    private unowned let core: RealmCore
    private let block: (Realm.Notification, Realm) -> Void

    init(core: RealmCore, block: @escaping (Realm.Notification, Realm) -> Void) {
        self.core = core
        self.block = block
        super.init(version: core.transaction.version)
        initialPending = false
    }

    override func advance(_ changes: ChangeSet, notify: Bool) {
        if notify { block(.didChange, Realm(core: core)) }
    }

    /// A newer version exists and the Realm does not autorefresh.
    func refreshRequired() { block(.refreshRequired, Realm(core: core)) }
}

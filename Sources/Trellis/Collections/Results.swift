/// The objects of a class, of a list or set, or linking to an object, optionally filtered,
/// sorted and made distinct: lazily evaluated and live. Every read reflects the Realm's current
/// snapshot, including the current write transaction's changes.
///
/// `count` of a whole class is O(1). Positional access evaluates the matching keys once per
/// snapshot change; iteration walks the keys evaluated when it began.
public struct Results<Element: ObjectBase>: RandomAccessCollection, CustomStringConvertible {
    enum Source {
        /// Every object of a class.
        case table(Element.Type)
        /// The objects linking to one object through one property (origin class = `Element`).
        case linkingObjects(target: Table, key: ObjectKey, originProperty: String)
        /// The objects of a List or MutableSet of objects, in its order.
        case collection(CollectionLocation)
    }

    let core: RealmCore
    let source: Source
    /// Filters, sorts and distinct steps, applied in the order they were added.
    let steps: [ResultsStep]
    private let cache = KeyCache()

    init(core: RealmCore, source: Source, steps: [ResultsStep] = []) {
        self.core = core
        self.source = source
        self.steps = steps
    }

    /// The same source with one more step.
    func adding(_ step: ResultsStep) -> Results {
        Results(core: core, source: source, steps: steps + [step])
    }

    /// Evaluated keys, kept until the Realm's change stamp moves, with the rows they were read
    /// from (valid under that same stamp), so an accessor made from them needs no lookup.
    private final class KeyCache {
        var stamp: UInt64 = 0
        var keys: [ObjectKey] = []
        var rows: [UnsafeRawBufferPointer] = []
    }

    /// The table the results' objects live in.
    var table: Table? { core.table(for: Element.self, create: false) }

    /// For backlinks: the origin table and column, or nil when nothing can link yet.
    private func backlinkOrigin(_ originProperty: String) -> (table: Table, field: FieldInfo)? {
        guard let origin = table else { return nil }
        guard let field = origin.info.field(named: originProperty), field.isLink else {
            throwRealmException("Property '\(origin.info.className).\(originProperty)' declared as origin of linking "
                + "objects does not exist or is not a link")
        }
        return (origin, field)
    }

    /// The keys of the matching objects in the current snapshot.
    func keys() -> [ObjectKey] {
        evaluate()
        return cache.keys
    }

    /// The keys and rows of the matching objects in the current snapshot.
    func evaluatedRows() -> (keys: [ObjectKey], rows: [UnsafeRawBufferPointer]) {
        evaluate()
        return (cache.keys, cache.rows)
    }

    private func evaluate() {
        core.verifyThread()
        if cache.stamp == core.changeStamp { return }
        var (keys, rows, applied) = baseRows()
        if applied < steps.count, let table {
            (keys, rows) = ResultsPipeline(core: core, table: table).apply(steps[applied...], keys: keys, rows: rows)
        }
        cache.keys = keys
        cache.rows = rows
        cache.stamp = core.changeStamp
    }

    /// The source's objects, and how many of the steps were already applied to them (a
    /// leading filter over a whole class is applied during the scan).
    private func baseRows() -> ([ObjectKey], [UnsafeRawBufferPointer], Int) {
        var keys = [ObjectKey]()
        var rows = [UnsafeRawBufferPointer]()
        guard let table else { return (keys, rows, steps.count) }
        switch source {
        case .linkingObjects(let target, let key, let originProperty):
            if let origin = backlinkOrigin(originProperty) {
                // One entry per link occurrence, as Realm counts them.
                for (entry, count) in core.backlinks(to: target, key: key, from: origin.table, column: origin.field) {
                    guard let row = core.rowView(origin.table, entry.originKey) else { continue }
                    keys += repeatElement(entry.originKey, count: count)
                    rows += repeatElement(row.bytes, count: count)
                }
            }
        case .collection(let location):
            let elements = location.field.typeInfo.collection == .set
                ? core.setElements(location) : core.listElements(location)
            for element in elements {
                guard let key = CollectionElement.linkKey(element), let row = core.rowView(table, key) else { continue }
                keys.append(key)
                rows.append(row.bytes)
            }
        case .table:
            if let candidates = ResultsPipeline(core: core, table: table).indexedCandidates(steps) {
                for key in candidates {
                    guard let row = core.rowView(table, key) else { continue }
                    keys.append(key)
                    rows.append(row.bytes)
                }
            } else if case .filter(let predicate)? = steps.first {
                (keys, rows) = ResultsPipeline(core: core, table: table).scan(predicate)
                return (keys, rows, 1)
            } else if let cursor = core.transaction.existingCursor(table.rows) {
                // A hint only: a damaged file could claim any count (the structure check on
                // open rejects those, unless it is turned off).
                let count = Swift.min(core.transaction.entryCount(table.rows), 1 << 20)
                keys.reserveCapacity(count)
                rows.reserveCapacity(count)
                var entry = cursor.first()
                while let (key, row) = entry {
                    keys.append(Cursor.integerKey(key))
                    rows.append(row)
                    entry = cursor.next()
                }
            }
        }
        return (keys, rows, 0)
    }

    /// The Realm of these results.
    public var realm: Realm? { Realm(core: core) }

    /// Results of a Realm are never invalidated by deletes; always false.
    public var isInvalidated: Bool { false }

    /// The number of objects, in O(1) for a whole class.
    public var count: Int {
        core.verifyThread()
        guard let table else { return 0 }
        if !steps.isEmpty { return keys().count }
        switch source {
        case .collection: return keys().count
        case .table: return core.transaction.entryCount(table.rows)
        case .linkingObjects(let target, let key, let originProperty):
            // The sum of the backlink counts: no origin row is read.
            guard let origin = backlinkOrigin(originProperty) else { return 0 }
            return core.backlinks(to: target, key: key, from: origin.table, column: origin.field)
                .reduce(0) { $0 + $1.count }
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The object at `position`; traps with Realm's message when out of bounds.
    public subscript(position: Int) -> Element {
        evaluate()
        guard position >= 0, position < cache.keys.count else {
            throwRealmException("Index \(position) is out of bounds (must be less than \(cache.keys.count)).")
        }
        return object(at: position)
    }

    /// The accessor of the evaluated object at `position`, its row already at hand.
    private func object(at position: Int) -> Element {
        guard let table else { throwRealmException("Object has been deleted or invalidated.") }
        let object = core.accessor(Element.self, table: table, key: cache.keys[position])
        object._rowCache = RowCache(stamp: cache.stamp, bytes: cache.rows[position])
        return object
    }

    private func object(for key: ObjectKey) -> Element {
        guard let table else { throwRealmException("Object has been deleted or invalidated.") }
        return core.accessor(Element.self, table: table, key: key)
    }

    /// Iterates the objects that matched when iteration began.
    public func makeIterator() -> Iterator {
        evaluate()
        return Iterator(core: core, table: table, keys: cache.keys, rows: cache.rows, stamp: cache.stamp)
    }

    /// An iterator over a snapshot of the matching keys.
    ///
    /// Holds the table and the evaluated rows itself, so each step makes the accessor directly
    /// (no table lookup per object) and hands it its row.
    public struct Iterator: IteratorProtocol {
        let core: RealmCore
        let table: Table?
        let keys: [ObjectKey]
        let rows: [UnsafeRawBufferPointer]
        /// The change stamp the keys were evaluated under.
        let stamp: UInt64
        var position = 0

        public mutating func next() -> Element? {
            guard let table else { return nil }
            while position < keys.count {
                let key = keys[position]
                position += 1
                let object: Element
                if core.changeStamp == stamp {
                    // Nothing changed since evaluation: the evaluated row is still current.
                    object = core.accessor(Element.self, table: table, key: key)
                    object._rowCache = RowCache(stamp: stamp, bytes: rows[position - 1])
                } else if core.rowView(table, key) != nil {
                    object = core.accessor(Element.self, table: table, key: key)
                } else {
                    continue // An object deleted while iterating is skipped, as in Realm.
                }
                return object
            }
            return nil
        }
    }

    /// The first object, or nil.
    public var first: Element? { isEmpty ? nil : self[0] }
    /// The last object, or nil.
    public var last: Element? { isEmpty ? nil : self[count - 1] }
    /// Whether there are no objects.
    public var isEmpty: Bool { count == 0 }

    /// The position of `object`, or nil.
    public func index(of object: Element) -> Int? {
        guard let managed = object._managed, managed.core === core else { return nil }
        return keys().firstIndex(of: managed.key)
    }

    /// `Results<Dog> <3 objects>`.
    public var description: String {
        "Results<\(Element.className())> <\(count) objects>"
    }
}

extension Results: Equatable {
    /// Equal when they are the same results value (Realm compares the underlying collection).
    public static func == (lhs: Results, rhs: Results) -> Bool { lhs.cache === rhs.cache }
}

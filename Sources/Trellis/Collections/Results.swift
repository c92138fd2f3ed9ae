/// The objects of a class, of a list or set, or linking to an object, optionally filtered,
/// sorted and made distinct: lazily evaluated and live. Every read reflects the Realm's current
/// snapshot, including the current write transaction's changes.
///
/// `count` of a whole class is O(1). Positional access evaluates the matching keys once per
/// snapshot change; iteration walks the keys evaluated when it began.
public struct Results<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    enum Source {
        /// Every object of a class.
        case table(ObjectBase.Type)
        /// Every object of a class, as ``DynamicObject``s (`realm.dynamicObjects("Dog")`).
        case dynamicTable(String)
        /// The objects linking to one object through one property (origin class = `Element`).
        case linkingObjects(target: Table, key: ObjectKey, originProperty: String)
        /// The objects of a List or MutableSet of objects, in its order.
        case collection(CollectionLocation)
        /// The values of a List or MutableSet of values, or of a Map (``Results+Values``).
        case values(CollectionLocation)
        /// The values of a list or dictionary nested in an `AnyRealmValue`.
        case nestedValues(NestedCollectionBinding)

        /// Whether the source is every object of a class.
        var isWholeClass: Bool {
            switch self {
            case .table, .dynamicTable: true
            default: false
            }
        }
    }

    let core: RealmCore
    let source: Source
    /// Filters, sorts and distinct steps, applied in the order they were added.
    let steps: [ResultsStep]
    /// The class of the objects; nil for results of values.
    let objectType: ObjectBase.Type?
    /// The stored class of the objects when they are ``DynamicObject``s.
    let dynamicClassName: String?
    /// Whether the elements are projections of the objects (decided once, not per element).
    let projectsObjects: Bool
    private let cache = ResultsKeyCache()
    /// The object that identifies these results (printed as their address in `description`).
    var cacheIdentity: AnyObject { cache }
    /// Only for results of values (``Results+Values``).
    let valueCache: ValueCache?
    /// The Realm's epoch when the results were made (see ``isInvalidated``).
    let epoch: UInt64

    init(core: RealmCore, source: Source, steps: [ResultsStep] = []) {
        let objectType: ObjectBase.Type? = switch source {
        case .table(let type): type
        case .dynamicTable: DynamicObject.self
        case .values, .nestedValues: nil
        case .linkingObjects, .collection: Self.elementObjectType
        }
        self.init(core: core, source: source, steps: steps, objectType: objectType)
    }

    /// Results whose class the caller knows (no cast to find it).
    init(core: RealmCore, source: Source, steps: [ResultsStep] = [], objectType: ObjectBase.Type?) {
        self.core = core
        self.source = source
        self.steps = steps
        self.objectType = objectType
        valueCache = objectType == nil ? ValueCache() : nil
        dynamicClassName = objectType == DynamicObject.self ? Self.dynamicClassName(of: source) : nil
        projectsObjects = objectType != nil && Element.self is any ProjectionObservable.Type
        epoch = core.epoch
    }

    /// The class of a source's objects by name: the class itself, the target of the collection,
    /// or the class of the LinkingObjects property.
    private static func dynamicClassName(of source: Source) -> String? {
        switch source {
        case .dynamicTable(let name): name
        case .collection(let location): location.field.typeInfo.objectClassName
        case .linkingObjects(let target, _, let originProperty):
            target.info.fields.first { $0.isLinkingObjects && $0.originProperty == originProperty }?
                .typeInfo.objectClassName
        case .table, .values, .nestedValues: nil
        }
    }

    /// The same source with one more step.
    func adding(_ step: ResultsStep) -> Results {
        validateRead()
        return Results(core: core, source: source, steps: steps + [step], objectType: objectType)
    }

    /// Whether these are results of values (`list.filter("self > 3")` on a `List<Int>`).
    var isValues: Bool { objectType == nil }

    /// Evaluated values of results of values, kept until the Realm's change stamp moves.
    final class ValueCache {
        var stamp: UInt64 = 0
        var values: [Element] = []
    }

    /// The class information of the objects (results of objects only).
    var objectInfo: ClassInfo {
        if let dynamicClassName { return core.requireDynamicClassInfo(named: dynamicClassName) }
        guard let objectType else { throwRealmException("Trellis internal error: results of values have no class.") }
        return ClassInfo.unbound(for: objectType)
    }

    /// The table the results' objects live in.
    var table: Table? {
        if let dynamicClassName { return core.dynamicTable(named: dynamicClassName, create: false) }
        return objectType.flatMap { core.table(for: $0, create: false) }
    }

    /// For backlinks: the origin table and column, or nil when nothing can link yet.
    private func backlinkOrigin(_ originProperty: String) -> (table: Table, field: FieldInfo)? {
        guard let origin = table else { return nil }
        guard let field = origin.info.field(named: originProperty), field.isLink else {
            throwRealmException("Property '\(origin.info.className).\(originProperty)' declared as origin of linking "
                + "objects does not exist or is not a link")
        }
        return (origin, field)
    }

    /// Traps with realm-core's message (`Results::validate_read`) when these results belong to
    /// a read transaction that ``Realm/invalidate()`` ended (realm-core's results hold the
    /// transaction's table accessor, which dies with it); checks the thread too. Every public
    /// read of results passes here. The reads notifications make for themselves do not
    /// (`validating: false`): an observer outlives the Realm's read transactions, as
    /// realm-core's notifier does.
    @inline(__always)
    func validateRead() {
        core.verifyThread()
        if epoch != core.epoch { throwRealmException("Access to invalidated Results objects") }
    }

    /// The keys of the matching objects in the current snapshot.
    func keys(validating: Bool = true) -> [ObjectKey] {
        evaluate(validating: validating)
        return cache.keys
    }

    /// The keys and rows of the matching objects in the current snapshot.
    func evaluatedRows() -> (keys: [ObjectKey], rows: [UnsafeRawBufferPointer]) {
        evaluate()
        if cache.rows.count != cache.keys.count, let table {
            // A column scan found the keys only.
            (cache.keys, cache.rows) = core.rows(of: table, keys: cache.keys)
        }
        return (cache.keys, cache.rows)
    }

    private func evaluate(validating: Bool = true) {
        if validating { validateRead() } else { core.verifyThread() }
        if ObservationGate.mayTrack { observeRead() }
        if cache.stamp == core.changeStamp { return }
        if isValues {
            cache.keys = []
            cache.rows = []
            cache.stamp = core.changeStamp
            return
        }
        if let table, core.writeTransaction != nil {
            // The rows this write changed go to the column copy now, before any row is read:
            // writing the copy may move the pages of rows read earlier.
            _ = core.readableColumns(of: table)
        }
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
            let elements: [UnsafeRawBufferPointer] = switch location.field.typeInfo.collection {
            case .set: core.setElements(location)
            case .map: core.mapEntries(location).map(\.value)  // key order; nil values are skipped
            default: core.listElements(location)
            }
            for element in elements {
                guard let key = CollectionElement.linkKey(element), let row = core.rowView(table, key) else { continue }
                keys.append(key)
                rows.append(row.bytes)
            }
        case .values, .nestedValues:
            break
        case .table, .dynamicTable:
            if let candidates = ResultsPipeline(core: core, table: table).indexedCandidates(steps) {
                for key in candidates {
                    guard let row = core.rowView(table, key) else { continue }
                    keys.append(key)
                    rows.append(row.bytes)
                }
            } else if case .filter(let predicate)? = steps.first {
                (keys, rows) = ResultsPipeline(core: core, table: table).scan(predicate)
                return (keys, rows, 1)
            } else if case .sort(let descriptors)? = steps.first, ColumnSort.canSort(by: descriptors, table: table),
                      let storage = core.readableColumns(of: table)
            {
                // Sorted from the column copy: the keys come from its presence bitmaps, and no
                // row is read until an object is handed out.
                return (ColumnScan.keys(matching: ConstantTest(true), in: storage, core.transaction), [], 0)
            } else if let cursor = core.transaction.existingCursor(table.rows) {
                // A hint only: a damaged file could claim any count (the structure check on
                // open rejects those, unless it is turned off).
                let count = Swift.min(core.transaction.entryCount(table.rows), 1 << 20)
                keys.reserveCapacity(count)
                rows.reserveCapacity(count)
                cursor.appendAllIntegerKeyed(keys: &keys, values: &rows)
            }
        }
        return (keys, rows, 0)
    }

    /// The Realm of these results.
    public var realm: Realm? { Realm(core: core) }

    /// Whether the Realm was invalidated (``Realm/invalidate()``) since these results were made,
    /// as in Realm, where results belong to the read transaction that ended: reading them then
    /// traps ("Access to invalidated Results objects"). Deletes, commits and refreshes never
    /// invalidate results.
    public var isInvalidated: Bool { epoch != core.epoch }

    /// The number of objects, in O(1) for a whole class.
    public var count: Int {
        validateRead()
        if ObservationGate.mayTrack { observeRead() }
        if isValues { return evaluatedValues().count }
        guard let table else { return 0 }
        if !steps.isEmpty {
            if cache.stamp != core.changeStamp, steps.count == 1, case .filter(let predicate) = steps[0],
               source.isWholeClass, let count = ResultsPipeline(core: core, table: table).columnCount(predicate)
            {
                // A filtered class is counted in the column copy's match bitmaps, keeping no key.
                return count
            }
            return keys().count
        }
        switch source {
        case .values, .nestedValues: return evaluatedValues().count
        case .collection: return keys().count
        case .table, .dynamicTable: return core.transaction.entryCount(table.rows)
        case .linkingObjects(let target, let key, let originProperty):
            // The sum of the backlink counts, read in place: no origin row is read, nothing is
            // allocated.
            guard let origin = backlinkOrigin(originProperty) else { return 0 }
            return core.backlinkCount(to: target, key: key, from: origin.table, column: origin.field.rowColumn)
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The object at `position`; traps with Realm's message when out of bounds.
    public subscript(position: Int) -> Element {
        if isValues {
            let values = evaluatedValues()
            guard position >= 0, position < values.count else {
                throwRealmException("Index \(position) is out of bounds (must be less than \(values.count)).")
            }
            return values[position]
        }
        evaluate()
        guard position >= 0, position < cache.keys.count else {
            throwRealmException("Index \(position) is out of bounds (must be less than \(cache.keys.count)).")
        }
        return object(at: position)
    }

    /// The accessor of the evaluated object at `position`, its row already at hand.
    private func object(at position: Int) -> Element {
        guard let table, let objectType else { throwRealmException("Object has been deleted or invalidated.") }
        let object = core.accessor(objectType, table: table, key: cache.keys[position])
        if position < cache.rows.count { object._rowCache = RowCache(stamp: cache.stamp, bytes: cache.rows[position]) }
        return projectsObjects ? Element._trellisElement(for: object) : unsafeBitCast(object, to: Element.self)
    }

    /// Iterates the objects (or values) that matched when iteration began.
    public func makeIterator() -> Iterator {
        if isValues { return Iterator(values: evaluatedValues()) }
        evaluate()
        return Iterator(core: core, table: table, objectType: objectType, keys: cache.keys, rows: cache.rows,
                        stamp: cache.stamp)
    }

    /// An iterator over a snapshot of the matching keys.
    ///
    /// The walk over the objects is not generic (``_ObjectWalk``); `next()` is inlined into the
    /// caller, so handing out each object costs no generic value-witness call.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var walk: _ObjectWalk?
        /// Whether the elements are projections of the objects.
        @usableFromInline let projectsObjects: Bool
        /// The values of results of values.
        @usableFromInline let values: [Element]
        @usableFromInline var position = 0

        init(core: RealmCore, table: Table?, objectType: ObjectBase.Type?, keys: [ObjectKey],
             rows: [UnsafeRawBufferPointer], stamp: UInt64)
        {
            if let table, let objectType {
                walk = _ObjectWalk(core: core, table: table, objectType: objectType, keys: keys, rows: rows, stamp: stamp)
            }
            projectsObjects = Element.self is any ProjectionObservable.Type
            values = []
        }

        init(values: [Element]) {
            projectsObjects = false
            self.values = values
        }

        @inlinable
        public mutating func next() -> Element? {
            guard walk != nil else {
                guard position < values.count else { return nil }
                position += 1
                return values[position - 1]
            }
            guard let object = walk?.next() else { return nil }
            return projectsObjects ? Element._trellisElement(for: object) : unsafeBitCast(object, to: Element.self)
        }
    }

    /// The first object, or nil.
    public var first: Element? { isEmpty ? nil : self[0] }
    /// The last object, or nil.
    public var last: Element? { isEmpty ? nil : self[count - 1] }
    /// Whether there are no objects.
    public var isEmpty: Bool { count == 0 }

    /// The position of `object` (for objects: the same object of this Realm), or nil.
    public func index(of object: Element) -> Int? {
        if isValues { return evaluatedValues().firstIndex(of: object) }
        let root = object as? ObjectBase ?? (object as? any ProjectionObservable)?.rootObject
        guard let managed = root?._managed, managed.core === core else { return nil }
        return keys().firstIndex(of: managed.key)
    }

    /// `Results<Dog> <0x…> (\n\t[0] Dog {…},\n…\n)`, as Realm prints it (the first 100).
    public var description: String { realmDescription(depth: RealmDescription.maximumDepth) }
}

extension Results: Equatable {
    /// Equal when they are the same results value (Realm compares the underlying collection).
    public static func == (lhs: Results, rhs: Results) -> Bool { lhs.cache === rhs.cache }
}

/// Evaluated keys of a `Results`, kept until the Realm's change stamp moves, with the rows they
/// were read from (valid under that same stamp), so an accessor made from them needs no lookup.
/// Not nested in the generic `Results`: allocating it then needs no generic metadata lookup.
final class ResultsKeyCache {
    var stamp: UInt64 = 0
    var keys: [ObjectKey] = []
    var rows: [UnsafeRawBufferPointer] = []
}

/// The objects of an evaluated `Results`, handed out one by one: each gets its row as it was
/// evaluated. Not generic, so that the generic iterator's inlined `next()` only casts. Not API.
public struct _ObjectWalk {
    let core: RealmCore
    let table: Table
    let objectType: ObjectBase.Type
    let keys: [ObjectKey]
    let rows: [UnsafeRawBufferPointer]
    /// The change stamp the keys were evaluated under.
    let stamp: UInt64
    var position = 0
    /// Whether the accessor handed out last may be reused for the next object (see
    /// ``RealmCore/accessor(reusing:_:table:key:)``).
    let reusesAccessors: Bool
    /// The accessor handed out last, while `reusesAccessors`.
    var handedOut: ObjectBase?

    init(core: RealmCore, table: Table, objectType: ObjectBase.Type, keys: [ObjectKey], rows: [UnsafeRawBufferPointer],
         stamp: UInt64)
    {
        self.core = core
        self.table = table
        self.objectType = objectType
        self.keys = keys
        self.rows = rows
        self.stamp = stamp
        reusesAccessors = core.reusesAccessors(of: table)
    }

    /// The next object; nil at the end. An object deleted since evaluation is skipped, as in Realm.
    @usableFromInline
    mutating func next() -> ObjectBase? {
        while position < keys.count {
            let key = keys[position]
            position += 1
            let object: ObjectBase
            if core.changeStamp == stamp {
                // Nothing changed since evaluation: the evaluated row is still current.
                if reusesAccessors {
                    object = core.accessor(reusing: &handedOut, objectType, table: table, key: key)
                    handedOut = object
                } else {
                    object = core.accessor(objectType, table: table, key: key)
                }
                if position <= rows.count {
                    object._rowCache = RowCache(stamp: stamp, bytes: rows[position - 1])
                } else if let row = core.withTransaction({ $0.get(table.rows, nearIntegerKey: key) }) {
                    // A column scan found the keys only: the row is read as the walk reaches it.
                    object._rowCache = RowCache(stamp: stamp, bytes: row)
                }
            } else if core.rowView(table, key) != nil {
                object = core.accessor(objectType, table: table, key: key)
            } else {
                continue
            }
            return object
        }
        return nil
    }
}

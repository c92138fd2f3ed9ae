/// Making the accessors of a Realm's objects: new ones, and ones nothing else references
/// pointed at another row (enumeration, link hops).
extension RealmCore {
    /// A new accessor for an existing row.
    func accessor<T: ObjectBase>(_ type: T.Type, key: ObjectKey) -> T {
        guard let table = table(for: type, create: false) else {
            throwRealmException("Object has been deleted or invalidated.")
        }
        return accessor(type, table: table, key: key)
    }

    /// The accessor of a link target with its row cached, or nil if the row is missing.
    func linkedAccessor<T: ObjectBase>(_ type: T.Type, key: ObjectKey, from owner: ObjectBase? = nil) -> T? {
        guard let table = table(for: type, create: false) else { return nil }
        return linkedAccessor(type, table: table, key: key, from: owner)
    }

    /// The accessor of an object of `table` with its row cached, or nil if the row is missing.
    /// `nearby`: the key likely follows the one read last (link hops, list elements), so the
    /// reused cursor looks it up (stepping instead of searching when it does); else the tree is
    /// searched in place (``Transaction/get(_:searchingKey:)``). `owner`: the
    /// object whose to-one property is read, when known (see ``linkTarget(_:table:key:reading:)``).
    /// Inlined: a link hop (through the first form) pays no second call.
    @inline(__always)
    func linkedAccessor<T: ObjectBase>(_ type: T.Type, table: Table, key: ObjectKey, nearby: Bool = true,
                                       from owner: ObjectBase? = nil) -> T?
    {
        let row = nearby ? transaction.get(table.rows, nearIntegerKey: key)
            : transaction.get(table.rows, searchingIntegerKey: key)
        guard let bytes = row else { return nil }
        let object: T
        if let owner, let target = linkTarget(type, table: table, key: key, reading: owner) {
            object = target
        } else {
            object = accessor(type, table: table, key: key)
        }
        object._rowCache = RowCache(stamp: changeStamp, bytes: bytes)
        return object
    }

    /// The accessor a to-one read of `owner` hands out, kept by `owner` as its spare: the spare
    /// it kept from its last read pointed at `key` when nothing else references it (the caller
    /// let go of it, as `person.dog?.age` does), else a new one. Saves an allocation, an
    /// initialisation and a deinitialisation per hop. Nil when `owner` keeps no spare: only an
    /// accessor an iteration is handing out keeps one (an object the program keeps, or a spare
    /// itself, keeps none: no extra accessor per kept object, no chains of them); a frozen
    /// Realm's objects are read by several threads; a class whose accessors are not reusable.
    private func linkTarget<T: ObjectBase>(_ type: T.Type, table: Table, key: ObjectKey, reading owner: ObjectBase)
        -> T?
    {
        guard owner._isIterationAccessor, reusesAccessors(of: table) else { return nil }
        if var spare = owner._spareLinkTarget {
            owner._spareLinkTarget = nil
            if Swift.type(of: spare) == type, spare._coreOwner === self, soleReference.holds(&spare) {
                spare._repoint(core: self, table: table, key: key, epoch: epoch)
                owner._spareLinkTarget = spare
                return unsafeDowncast(spare, to: type)
            }
        }
        let object = accessor(type, table: table, key: key)
        owner._spareLinkTarget = object
        return object
    }

    func accessor<T: ObjectBase>(_ type: T.Type, table: Table, key: ObjectKey) -> T {
        let object = type.init()
        object._coreOwner = self
        object._managed = ManagedObject(core: self, table: table, key: key, epoch: epoch)
        object._bindSlots(table.info)
        if table.needsAccessorSetup { setUpAccessor(object, table, isNewAccessor: true) }
        return object
    }

    /// An accessor for `key` of `table`: `previous` (the accessor an iteration handed out last)
    /// pointed at the row when nothing else can see it, else a new accessor. Nothing can see it
    /// when the iteration holds its only strong reference and there is no weak or unowned one;
    /// its class must keep no state of its own (``ClassInfo/accessorsAreReusable``). Saves an
    /// allocation, an initialisation and a deinitialisation per object enumerated.
    func accessor(reusing previous: inout ObjectBase?, _ type: ObjectBase.Type, table: Table, key: ObjectKey)
        -> ObjectBase
    {
        if var candidate = previous {
            previous = nil
            if soleReference.holds(&candidate) {
                candidate._repoint(core: self, table: table, key: key, epoch: epoch)
                return candidate
            }
            // The program kept it: an ordinary object from now on, which keeps no spares.
            candidate._isIterationAccessor = false
            candidate._spareLinkTarget = nil
            candidate._spareLinkingObjectsSource = nil
        }
        let object = accessor(type, table: table, key: key)
        object._isIterationAccessor = true
        return object
    }

    /// Whether accessors of `table` may be pointed at another row: its class keeps no state of its
    /// own in an accessor (``ClassInfo/accessorsAreReusable``) and needs no setup per accessor,
    /// and the Realm is not frozen (other threads read a frozen Realm's objects at the same time).
    func reusesAccessors(of table: Table) -> Bool {
        table.info.accessorsAreReusable && !table.needsAccessorSetup && !isFrozen
    }

    func makeManaged(_ object: ObjectBase, table: Table, key: ObjectKey) {
        object._coreOwner = self
        object._managed = ManagedObject(core: self, table: table, key: key, epoch: epoch)
        object._rowCache = RowCache()
        object._bindSlots(table.info)
        if table.needsAccessorSetup { setUpAccessor(object, table, isNewAccessor: false) }
    }

    /// Makes `LinkingObjects(fromType:property:)` fields live, and marks the properties of an
    /// `Encodable` class managed.
    private func setUpAccessor(_ object: ObjectBase, _ table: Table, isNewAccessor: Bool) {
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for field in table.info.legacyFields {
            (field.witness as? any LegacyFieldWitness.Type)?.install(at: base + field.offset, object: object, info: field,
                                                                      isNewAccessor: isNewAccessor)
        }
        if table.isEncodable {
            for field in table.info.fields where field.typeInfo.collection == .none && !field.isLinkingObjects {
                field.witness.markManaged(at: base + field.offset)
            }
        }
    }
}

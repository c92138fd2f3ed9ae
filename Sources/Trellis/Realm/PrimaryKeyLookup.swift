/// What `Realm.object(ofType:forPrimaryKey:)` found out about the class it looked up last: its
/// table, the trees of its primary-key index and of its rows, its key's type and whether its
/// accessors may be pointed at another row. The next lookup of the class with an integer key of
/// that type goes straight to the two searches realm-core makes too (one in the primary-key
/// index, one in the rows), with nothing retained: no table found again, no key value made,
/// the snapshot and the trees' accesses used in place.
///
/// Valid while the core's change stamp is the one it was found under (the rule of the core's
/// table cache, ``RealmCore/table(for:create:verifiesConfigured:)``: tables change only with
/// writes, migrations and new snapshots, which all move the stamp) and only outside a write
/// (it is made and used only then). ``RealmSpares`` keeps it, and keeps its table alive.
struct PrimaryKeyLookup {
    /// The model class.
    let type: ObjectIdentifier
    /// The type of the key property (`Int` or `Int64`: ``FieldInfo/directKeyType``).
    let keyType: ObjectIdentifier
    /// The core's change stamp the table was found under.
    let stamp: UInt64
    /// The class's table, kept alive by ``RealmSpares/primaryKeyLookupTable``.
    unowned(unsafe) let table: Table
    let index: DatabaseHandle
    let rows: DatabaseHandle
    /// ``RealmCore/reusesAccessors(of:)`` when it was found (false while the table has not
    /// decided what a new accessor needs: new accessors, always right, until the stamp moves).
    let reusesAccessors: Bool

    /// Whether this answers a lookup of `type` with a key of type `Key` in `core` now.
    @inline(__always)
    func answers<Key>(_ type: ObjectBase.Type, _: Key.Type, in core: RealmCore) -> Bool {
        self.type == ObjectIdentifier(type) && keyType == ObjectIdentifier(Key.self) && stamp == core.changeStamp
    }

    /// The integer value of `key`, of this lookup's key type (see ``answers(_:_:in:)``).
    @inline(__always)
    func integer<Key>(_ key: Key) -> Int64? {
        if Key.self == Int.self { return Int64(unsafeBitCast(key, to: Int.self)) }
        if Key.self == Int64.self { return unsafeBitCast(key, to: Int64.self) }
        return nil
    }

    /// What to remember of a lookup of `type`, whose table is `table` (found under `stamp`,
    /// outside a write); nil for a class whose key is not an integer, or without an index.
    static func remembering(_ type: ObjectBase.Type, _ table: Table, stamp: UInt64, core: RealmCore)
        -> PrimaryKeyLookup?
    {
        guard let index = table.primaryKeys, let keyType = table.info.primaryKeyField?.directKeyType,
              keyType == Int.self || keyType == Int64.self
        else { return nil }
        return PrimaryKeyLookup(type: ObjectIdentifier(type), keyType: ObjectIdentifier(keyType),
                                stamp: stamp, table: table, index: index, rows: table.rows,
                                reusesAccessors: core.reusesAccessors(of: table))
    }
}

extension RealmCore {
    /// The object whose integer primary key is `integer`, of the class `lookup` remembers, in
    /// `snapshot` (``liveSnapshot``), or nil: one search of the primary-key index, one of the
    /// rows, then the accessor `spares` keeps pointed at the row (as
    /// ``lookedUpAccessor(_:table:key:spares:)``) or a new one.
    @inline(__always)
    func lookedUpObject<T: ObjectBase>(_ type: T.Type, _ lookup: PrimaryKeyLookup, integer: Int64,
                                       in snapshot: Unmanaged<Transaction>, spares: RealmSpares) -> T?
    {
        let found: (key: ObjectKey, row: UnsafeRawBufferPointer)? = snapshot._withUnsafeGuaranteedRef { transaction in
            let value = PrimaryKeyEncoding.withEncoded(integer: integer) { transaction.get(lookup.index, searchingKey: $0) }
            guard let value else { return nil }
            let key = PrimaryKeyEncoding.objectKey(value)
            guard let row = transaction.get(lookup.rows, searchingIntegerKey: key) else { return nil }
            return (key, row)
        }
        guard let found else { return nil }
        let cache = RowCache(stamp: changeStamp, bytes: found.row)
        guard lookup.reusesAccessors else {
            let object = accessor(type, table: lookup.table, key: found.key)
            object._rowCache = cache
            return object
        }
        // The kept accessor's `_coreOwner` is this core: only this core's lookups keep one here.
        if let previous = spares.reusableAccessor(of: type, &soleReference) {
            previous._withUnsafeGuaranteedRef { object in
                object._repoint(core: self, table: lookup.table, key: found.key, epoch: epoch)
                object._rowCache = cache
            }
            return unsafeDowncast(previous.takeUnretainedValue(), to: type)
        }
        let object = accessor(type, table: lookup.table, key: found.key)
        object._rowCache = cache
        spares.keep(object)
        return object
    }
}

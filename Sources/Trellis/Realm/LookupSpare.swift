/// The accessor `Realm.object(ofType:forPrimaryKey:)` handed out last, kept so that the next
/// lookup may point it at its row instead of making an accessor, when the program let go of it
/// (nothing else references it: see ``SoleReference``). Saves an allocation, an initialisation
/// and a deinitialisation per lookup, most of a lookup's cost after the search.
///
/// The `Realm` values of a core keep it, and it keeps the core; the core points back at it
/// without a strong reference (cleared when it goes). The spare accessor keeps its core alive,
/// as every accessor does, so a spare the core kept would keep the core, and its file open,
/// after the program dropped every `Realm`. Dropping the last `Realm` value drops the spare,
/// and with it the core unless something else holds it. Not for frozen Realms, whose values
/// several threads use at once.
final class LookupSpare {
    /// The core whose lookups this spare serves.
    let core: RealmCore
    /// The accessor handed out last; nil before the first lookup of a reusable class.
    var accessor: ObjectBase?

    private init(core: RealmCore) { self.core = core }

    deinit {
        if core.lookupSpare === self { core.lookupSpare = nil }
    }

    /// The spare the `Realm` values of `core` share, made and registered with it if it has none;
    /// nil for a frozen core.
    static func shared(by core: RealmCore) -> LookupSpare? {
        if core.isFrozen { return nil }
        if let spare = core.lookupSpare { return spare }
        let spare = LookupSpare(core: core)
        core.lookupSpare = spare
        return spare
    }
}

extension RealmCore {
    /// The accessor of the object `key` of `table` found by a primary-key lookup, with its row
    /// cached, or nil if the row is missing: the accessor `spare` keeps pointed at the row when
    /// the program let go of it, else a new one, which `spare` keeps (for classes whose accessors
    /// may be pointed at another row, ``reusesAccessors(of:)``).
    func lookedUpAccessor<T: ObjectBase>(_ type: T.Type, table: Table, key: ObjectKey, spare: LookupSpare?) -> T? {
        guard let spare, reusesAccessors(of: table) else {
            return linkedAccessor(type, table: table, key: key, nearby: false)
        }
        guard let bytes = transaction.get(table.rows, searchingIntegerKey: key) else { return nil }
        let object: T
        if var previous = spare.accessor {
            spare.accessor = nil
            // The spare's `_coreOwner` is this core: only this core's lookups set it.
            if Swift.type(of: previous) == type, soleReference.holds(&previous) {
                previous._repoint(core: self, table: table, key: key, epoch: epoch)
                object = unsafeDowncast(previous, to: type)
            } else {
                object = accessor(type, table: table, key: key)
            }
        } else {
            object = accessor(type, table: table, key: key)
        }
        spare.accessor = object
        object._rowCache = RowCache(stamp: changeStamp, bytes: bytes)
        return object
    }
}

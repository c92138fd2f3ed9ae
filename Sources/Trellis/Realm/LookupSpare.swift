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
    /// The accessor handed out last, retained once; nil before the first lookup of a reusable
    /// class. Unmanaged, so that checking and reusing it costs no retain or release.
    private var kept: Unmanaged<ObjectBase>?

    private init(core: RealmCore) { self.core = core }

    deinit {
        kept?.release()
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

    /// The accessor kept, for tests.
    var accessor: ObjectBase? { kept?.takeUnretainedValue() }

    /// Keeps `object` in place of the accessor kept before.
    func keep(_ object: ObjectBase) {
        let previous = kept
        kept = .passRetained(object)
        previous?.release()
    }

    /// The accessor kept, still kept, if it is of class `type` and the program let go of it.
    @inline(__always)
    func reusableAccessor(of type: ObjectBase.Type, _ soleReference: inout SoleReference) -> Unmanaged<ObjectBase>? {
        guard let kept, kept._withUnsafeGuaranteedRef({ Swift.type(of: $0) == type }),
              soleReference.holds(kept: kept)
        else { return nil }
        return kept
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
        let cache = RowCache(stamp: changeStamp, bytes: bytes)
        // The spare's `_coreOwner` is this core: only this core's lookups keep accessors in it.
        if let previous = spare.reusableAccessor(of: type, &soleReference) {
            previous._withUnsafeGuaranteedRef { object in
                object._repoint(core: self, table: table, key: key, epoch: epoch)
                object._rowCache = cache
            }
            return unsafeDowncast(previous.takeUnretainedValue(), to: type)
        }
        let object = accessor(type, table: table, key: key)
        object._rowCache = cache
        spare.keep(object)
        return object
    }
}

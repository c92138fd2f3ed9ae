/// What the `Realm` values of one core keep for reuse between calls, so that the common calls
/// make nothing they made last time:
/// - the accessor `Realm.object(ofType:forPrimaryKey:)` handed out last, which the next lookup
///   points at its row instead of making an accessor, when the program let go of it (nothing
///   else references it: see ``SoleReference``). Saves an allocation, an initialisation and a
///   deinitialisation per lookup, most of a lookup's cost after the search;
/// - the add session `Realm.add` used last, emptied (``AddSession/reset(policy:)``), with the
///   room its queue grew;
/// - what `Realm.object(ofType:forPrimaryKey:)` found out about the class it looked up last
///   (``PrimaryKeyLookup``), so that the next lookup of that class goes straight to its two
///   searches.
///
/// The `Realm` values of a core keep it, and it keeps the core; the core points back at it
/// without a strong reference (cleared when it goes). The spare accessor and session keep their
/// core alive, so spares the core kept would keep the core, and its file open, after the
/// program dropped every `Realm`. Dropping the last `Realm` value drops the spares, and with
/// them the core unless something else holds it. Not for frozen Realms, whose values several
/// threads use at once.
final class RealmSpares {
    /// The core whose calls these spares serve.
    let core: RealmCore
    /// The accessor handed out last, retained once; nil before the first lookup of a reusable
    /// class. Unmanaged, so that checking and reusing it costs no retain or release.
    private var kept: Unmanaged<ObjectBase>?
    /// The add session used last, while no add uses it.
    private var addSession: AddSession?
    /// The class the last primary-key lookup was of, its table and trees, while the change stamp
    /// it was found under holds (see ``PrimaryKeyLookup``).
    @exclusivity(unchecked) private(set) var primaryKeyLookup: PrimaryKeyLookup?
    /// The table of ``primaryKeyLookup``, kept alive while it is remembered.
    private var primaryKeyLookupTable: Table?

    private init(core: RealmCore) { self.core = core }

    deinit {
        kept?.release()
        if core.spares === self { core.spares = nil }
    }

    /// The spares the `Realm` values of `core` share, made and registered with it if it has
    /// none; nil for a frozen core.
    static func shared(by core: RealmCore) -> RealmSpares? {
        if core.isFrozen { return nil }
        if let spares = core.spares { return spares }
        let spares = RealmSpares(core: core)
        core.spares = spares
        return spares
    }

    /// Runs `body` with an empty add session of `policy`: the spare one (taken while `body`
    /// runs: an add inside it makes its own), else a new one, kept for the next add.
    @inline(__always)
    func withAddSession<R>(policy: Realm.UpdatePolicy, _ body: (AddSession) -> R) -> R {
        let session: AddSession
        if let spare = addSession {
            addSession = nil
            spare.reset(policy: policy)
            session = spare
        } else {
            session = AddSession(core: core, policy: policy)
        }
        defer {
            session.dropTemporaries()
            addSession = session
        }
        return body(session)
    }

    /// Remembers `lookup`, of `table` (kept alive while it is remembered).
    func remember(_ lookup: PrimaryKeyLookup, of table: Table) {
        primaryKeyLookupTable = table
        primaryKeyLookup = lookup
    }

    /// The accessor kept, for tests.
    var lookupAccessor: ObjectBase? { kept?.takeUnretainedValue() }

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
    /// cached, or nil if the row is missing: the accessor `spares` keeps pointed at the row when
    /// the program let go of it, else a new one, which `spares` keeps (for classes whose
    /// accessors may be pointed at another row, ``reusesAccessors(of:)``).
    func lookedUpAccessor<T: ObjectBase>(_ type: T.Type, table: Table, key: ObjectKey, spares: RealmSpares?) -> T? {
        guard let spares, reusesAccessors(of: table) else {
            return linkedAccessor(type, table: table, key: key, nearby: false)
        }
        guard let bytes = transaction.get(table.rows, searchingIntegerKey: key) else { return nil }
        let cache = RowCache(stamp: changeStamp, bytes: bytes)
        // The kept accessor's `_coreOwner` is this core: only this core's lookups keep one here.
        if let previous = spares.reusableAccessor(of: type, &soleReference) {
            previous._withUnsafeGuaranteedRef { object in
                object._repoint(core: self, table: table, key: key, epoch: epoch)
                object._rowCache = cache
            }
            return unsafeDowncast(previous.takeUnretainedValue(), to: type)
        }
        let object = accessor(type, table: table, key: key)
        object._rowCache = cache
        spares.keep(object)
        return object
    }
}

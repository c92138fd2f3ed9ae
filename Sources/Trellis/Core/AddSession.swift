/// One `add`/`create` call walking an unmanaged object graph: each unmanaged object is stored
/// once (cycles included), managed targets are linked in place.
final class AddSession {
    let core: RealmCore
    @exclusivity(unchecked) private(set) var policy: Realm.UpdatePolicy
    // Unchecked: a session runs on its Realm's thread, within one add.
    @exclusivity(unchecked) private var added = AddedObjects()
    /// Unmanaged embedded objects that `update: .modified` writes into an existing embedded row
    /// instead of replacing it (Realm updates embedded objects in place under `.modified`).
    @exclusivity(unchecked) private var inPlace: [ObjectIdentifier: ObjectKey] = [:]
    /// Objects made for this add by a custom type's `persistableValue`, kept alive until it
    /// ends: the session knows the objects it added by identity, and a temporary released
    /// early could give its address to the next one, which would then look added already.
    @exclusivity(unchecked) private var temporaries: [ObjectBase] = []
    /// The trap message for linking an embedded object that already has a parent.
    @exclusivity(unchecked) var embeddedReuseMessage = AddSession.defaultEmbeddedReuseMessage
    private static let defaultEmbeddedReuseMessage = "Can't set link to existing managed embedded object"

    init(core: RealmCore, policy: Realm.UpdatePolicy) {
        self.core = core
        self.policy = policy
    }

    private var context: _EncodingContext { _EncodingContext(session: self) }

    /// Empties the session for another `add` under `policy` (a Realm's spare session, see
    /// ``RealmSpares``), keeping the room its queue grew. Only between adds: the queue is empty.
    func reset(policy: Realm.UpdatePolicy) {
        self.policy = policy
        added.removeAll()
        if !inPlace.isEmpty { inPlace = [:] }
        if !temporaries.isEmpty { temporaries = [] }
        embeddedReuseMessage = Self.defaultEmbeddedReuseMessage
        ownerIsNew = false
    }

    /// Keeps `object` alive until this add ends (see `temporaries`).
    func keepAlive(_ object: ObjectBase) {
        temporaries.append(object)
    }

    /// Lets go of the objects kept by ``keepAlive(_:)`` (a spare session, at the end of an add).
    @inline(__always)
    func dropTemporaries() {
        if !temporaries.isEmpty { temporaries = [] }
    }

    /// The key to store for a to-one link to `object`, adding it if it is unmanaged.
    func linkTarget(_ object: Object) -> ObjectKey {
        existingKey(of: object) ?? add(object)
    }

    /// The keys to store for the links of a list of objects, adding the unmanaged ones in order.
    func linkTargets(_ objects: [Object]) -> [ObjectKey] {
        var keys = [ObjectKey]()
        keys.reserveCapacity(objects.count)
        for object in objects { keys.append(linkTarget(object)) }
        return keys
    }

    /// The key of an object this Realm already manages, nil for an unmanaged one; traps for an
    /// object of another Realm or a deleted one.
    func existingKey(of object: ObjectBase) -> ObjectKey? {
        guard let managed = object._managed else { return nil }
        guard managed.core === core else {
            throwRealmException("Object is already managed by another Realm. Use create instead to copy it into "
                + "this Realm.")
        }
        guard core.objectExists(managed) else {
            throwRealmException("Adding a deleted or invalidated object to a Realm is not permitted")
        }
        return managed.key
    }

    /// The key of a new embedded object for a link; a managed embedded object cannot move.
    func embed(_ object: EmbeddedObject) -> ObjectKey {
        if let key = inPlace.removeValue(forKey: ObjectIdentifier(object)) { return add(object, reusing: key) }
        if object._managed != nil || added.key(of: ObjectIdentifier(object)) != nil {
            throwRealmException(embeddedReuseMessage)
        }
        return add(object)
    }

    /// Whether the object whose collection is being attached was just inserted (it then has
    /// no stored elements to clear). Set before each collection's attach.
    @exclusivity(unchecked) private(set) var ownerIsNew = false

    /// Notes, for sync, that the collection `binding` of an existing object is replaced whole
    /// (`update: .all`): as realm-core's assign under `UpdateAll` clears it first, which drops
    /// its unresolved links too. `.modified` sets it by difference and keeps them.
    func noteReplacement(of binding: CollectionBinding) {
        if !ownerIsNew, policy == .all { core.noteSyncClear(binding.location) }
    }

    /// Whether the collections of an existing object are set by difference, as realm-core's
    /// `Set::assign`/`Dictionary::assign`/`List::assign` do under a diffing policy
    /// (`update: .modified`): a set only inserts the given elements, a map only sets the given
    /// keys (an equal value is left alone, an embedded value is updated in place), the old ones
    /// stay. Not while TrellisSync writes a document, which is the object's whole state
    /// (``RealmCore/assignsCollectionsWhole``).
    var diffsCollections: Bool { !ownerIsNew && policy == .modified && !core.assignsCollectionsWhole }

    /// Objects whose key is reserved and whose row is still to be written, stored in the
    /// order they were reached (so of two objects with one primary key, the later one's values win).
    @exclusivity(unchecked) private var pending: [PendingObject] = []
    private static let initialPendingCapacity = 16
    @exclusivity(unchecked) private var nextPending = 0
    @exclusivity(unchecked) private var isStoring = false

    private struct PendingObject {
        let object: ObjectBase
        let table: Table
        let key: ObjectKey
        let isNew: Bool
    }

    /// Stores an unmanaged object and every unmanaged object it reaches; returns its key.
    ///
    /// Iterative: linking to an unmanaged object only reserves its key and queues it, and the
    /// outermost call stores the queue, so a chain of a million linked objects needs no deeper
    /// stack than one (cycles are found by identity, as before).
    @discardableResult
    func add(_ object: ObjectBase, reusing reusedKey: ObjectKey? = nil) -> ObjectKey {
        if let key = added.key(of: ObjectIdentifier(object)) { return key }
        let key = reserve(object, reusing: reusedKey)
        if isStoring { return key }  // the outermost call stores it
        isStoring = true
        defer {
            isStoring = false
            pending.removeAll(keepingCapacity: true)
            nextPending = 0
        }
        while nextPending < pending.count {
            nextPending += 1
            store(pending[nextPending - 1])
        }
        return key
    }

    /// Gives `object` its key (by primary key, reused, or new) and queues it to be stored.
    private func reserve(_ object: ObjectBase, reusing reusedKey: ObjectKey?) -> ObjectKey {
        let type = Swift.type(of: object)
        guard let table = core.table(for: type, create: true) else {
            throwRealmException("Trellis could not create the table of '\(type.className())'.")
        }
        let info = table.info
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        var key: ObjectKey
        var isNew = true
        if let pkField = info.primaryKeyField {
            let pk = pkField.witness.encodeUnmanaged(at: base + pkField.offset, context).payload
            if policy == .error {
                // One index write that fails on an existing key, instead of a lookup and a write.
                key = core.allocateKey(in: table)
                if !core.insertPrimaryKey(table, pk, key: key) {
                    throwRealmException("Attempting to create an object of type '\(info.className)' with an existing "
                        + "primary key value '\(PrimaryKeyEncoding.describe(pk))'.")
                }
            } else if let existing = core.lookUpPrimaryKey(table, pk) {
                key = existing
                isNew = false
            } else {
                key = core.allocateKey(in: table)
                core.insertPrimaryKey(table, pk, key: key)
            }
        } else if let reusedKey {
            key = reusedKey
            isNew = false
        } else {
            key = core.allocateKey(in: table)
        }
        added.insert(ObjectIdentifier(object), key: key)
        // Room for a few at once: growing one at a time reallocates at 1, 2, 4 and 8 objects.
        if pending.capacity == 0 { pending.reserveCapacity(Self.initialPendingCapacity) }
        pending.append(PendingObject(object: object, table: table, key: key, isNew: isNew))
        return key
    }

    /// Writes a reserved object's row and collections (queuing the unmanaged objects they reach).
    private func store(_ entry: PendingObject) {
        let object = entry.object, table = entry.table, key = entry.key, isNew = entry.isNew
        let info = table.info
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        if !isNew, policy == .modified { planInPlaceUpdates(object, base: base, table: table, key: key) }
        // The values, on the stack (``encodedValue(of:at:_:)``): an array per object would be
        // allocated, and freed through the runtime's generic destruction of its elements.
        let fields = info.storedFields, context = self.context
        withUnsafeTemporaryAllocation(of: _StoredValue.Payload.self, capacity: fields.count) { values in
            for (column, field) in fields.enumerated() {
                values.initializeElement(at: column, to: encodedValue(of: field, at: base, context))
            }
            core.writeRow(table, key: key, values: UnsafeBufferPointer(values), isNew: isNew)
            for column in values.indices { values.deinitializeElement(at: column) }
        }
        core.makeManaged(object, table: table, key: key)
        if !isNew, policy == .all { noteToOneLinksSet(table, key) }
        for field in info.storedFields where field.typeInfo.collection != .none {
            // Never touched while unmanaged and the owner is new: nothing to store; the managed
            // accessor is made on first use.
            if isNew, field.witness.isUntouched(at: base + field.offset) { continue }
            ownerIsNew = isNew
            field.witness.attachCollection(at: base + field.offset,
                                           binding: CollectionBinding(core: core, table: table, key: key, field: field),
                                           session: self)
        }
    }

    /// The value to store for `field` of the object at `base`. A collection's column holds
    /// nothing: its elements are stored when it is attached. Links and mixed values are let go
    /// of once encoded (the object is managed from here on, and its pending entry keeps it
    /// alive): releasing the targets here keeps a long chain of objects from being released
    /// recursively later (one stack frame per link).
    @inline(__always)
    private func encodedValue(of field: FieldInfo, at base: UnsafeMutableRawPointer, _ context: _EncodingContext)
        -> _StoredValue.Payload
    {
        if field.typeInfo.collection != .none { return .none }
        if field.holdsOptionalObject {
            return ObjectLinkField.encodeUnmanagedAndRelease(at: base + field.offset, context).payload
        }
        if field.isLink || field.typeInfo.type == .any {
            return field.witness.encodeUnmanagedAndRelease(at: base + field.offset, context).payload
        }
        return field.witness.encodeUnmanaged(at: base + field.offset, context).payload
    }

    /// Under `.all` realm-core's `Object::create` sets every property of an existing object,
    /// so a nil to-one link replaces one whose target the file does not have, and a new
    /// embedded object holds none of the old one's links: noted for sync, so its upload does
    /// not put the mirror's unresolved links back.
    private func noteToOneLinksSet(_ table: Table, _ key: ObjectKey) {
        guard core.configuration.syncHook != nil else { return }
        for field in table.info.storedFields where field.isLink && field.typeInfo.collection == .none {
            core.noteSyncReplacement(table, key, field)
        }
    }

    /// Marks an unmanaged embedded object to be written into an existing embedded row (for
    /// `.modified` updates of embedded lists, element by element).
    func reuseEmbedded(_ object: EmbeddedObject, key: ObjectKey) {
        if object._managed == nil { inPlace[ObjectIdentifier(object)] = key }
    }

    /// Under `.modified`, each embedded to-one child of the existing row is kept and receives the
    /// values of the new unmanaged child.
    private func planInPlaceUpdates(_ object: ObjectBase, base: UnsafeMutableRawPointer, table: Table, key: ObjectKey) {
        guard let row = core.rowView(table, key) else { return }
        for field in table.info.storedFields where field.isEmbeddedLink && field.typeInfo.collection == .none {
            guard !row.isNull(field.rowColumn),
                  let child = field.witness.unmanagedValue(at: base + field.offset) as? EmbeddedObject,
                  child._managed == nil
            else { continue }
            inPlace[ObjectIdentifier(child)] = row.slot(field.rowColumn)
        }
    }
}

/// The objects an add session has stored, by identity. Most sessions store one or two objects:
/// those are kept inline (no allocation per `add`), the next few in a small array, and a hash
/// table is made only past that.
private struct AddedObjects {
    private static let linearLimit = 16
    /// One stored object (a struct, not a tuple: an array of tuples looks its storage type up
    /// at run time on every allocation).
    private struct Entry {
        let object: ObjectIdentifier
        let key: ObjectKey
    }
    private var first: Entry?
    private var second: Entry?
    private var few: [Entry] = []
    private var many: [ObjectIdentifier: ObjectKey] = [:]

    /// Forgets every object, keeping the room of the few kept in an array (a session is reused
    /// for the next add).
    mutating func removeAll() {
        first = nil
        second = nil
        few.removeAll(keepingCapacity: true)
        if !many.isEmpty { many = [:] }
    }

    func key(of object: ObjectIdentifier) -> ObjectKey? {
        if let first, first.object == object { return first.key }
        if let second, second.object == object { return second.key }
        if many.isEmpty { return few.first { $0.object == object }?.key }
        return many[object]
    }

    mutating func insert(_ object: ObjectIdentifier, key: ObjectKey) {
        let entry = Entry(object: object, key: key)
        if first == nil {
            first = entry
        } else if second == nil {
            second = entry
        } else if many.isEmpty, few.count < Self.linearLimit {
            // Room for all at once: growing one at a time reallocates at 1, 2, 4 and 8 objects.
            if few.capacity == 0 { few.reserveCapacity(Self.linearLimit) }
            few.append(entry)
        } else {
            if many.isEmpty { many = Dictionary(uniqueKeysWithValues: few.map { ($0.object, $0.key) }) }
            many[object] = key
        }
    }
}

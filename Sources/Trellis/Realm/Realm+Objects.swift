import Foundation

extension Realm {
    // MARK: - Adding

    /// Adds an unmanaged object, and every unmanaged object it links to, to the Realm.
    ///
    /// With `update: .modified` or `.all` an existing object with the same primary key is
    /// updated instead (linked objects with a primary key are merged the same way; those
    /// without one are always added). Adding an object already managed by this Realm does
    /// nothing.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        core.verifyInWrite(Realm.addRequiresWriteMessage)
        if update != .error, object.objectSchema.primaryKeyProperty == nil {
            throwRealmException("'\(type(of: object).className())' does not have a primary key and can not be updated")
        }
        withAddSession(policy: update) { session in
            if session.existingKey(of: object) == nil { session.add(object) }
        }
    }

    /// Runs `body` with an empty add session: the spare one the Realm values keep (``RealmSpares``),
    /// else a new one.
    @inline(__always)
    private func withAddSession(policy: UpdatePolicy, _ body: (AddSession) -> Void) {
        guard let spares else { return body(AddSession(core: core, policy: policy)) }
        spares.withAddSession(policy: policy, body)
    }

    /// Adds each object of a sequence (see ``add(_:update:)``).
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Iterator.Element: Object {
        for object in objects { add(object, update: update) }
    }

    /// Creates an object from a dictionary of property values, an array of values in property
    /// order, or another object, and returns it managed.
    ///
    /// With `update: .modified`/`.all` and a dictionary, an existing object with the same primary
    /// key keeps the properties the dictionary does not mention.
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
        core.verifyInWrite(Realm.addRequiresWriteMessage)
        // Realm creates the objects the value holds too: an object given (managed or not) or
        // nested is copied (see CreateValueCopier), never added itself.
        var copier = CreateValueCopier(target: core)
        let copied: Any = if let source = value as? ObjectBase { copier.dictionary(of: source) } else { copier.value(value) }
        return create(type, copiedValue: copied, update: update)
    }

    /// ``create(_:value:update:)`` of a value whose objects are copies already.
    private func create<T: Object>(_ type: T.Type, copiedValue value: Any, update: UpdatePolicy) -> T {
        let info = ClassInfo.unbound(for: type)
        if update != .error, info.primaryKeyField == nil {
            throwRealmException("'\(info.className)' does not have a primary key and can not be updated")
        }
        if update != .error, let dictionary = value as? [String: Any], let pkField = info.primaryKeyField,
           let pk = dictionary[pkField.name], let existing = object(ofType: type, forPrimaryKeyValue: pk)
        {
            // Nested objects with primary keys merge under the same policy.
            core.propertyUpdatePolicy = update
            defer { core.propertyUpdatePolicy = .error }
            for (name, newValue) in dictionary where name != pkField.name {
                guard let field = info.field(named: name) else {
                    throwRealmException("Invalid property name '\(name)' for class '\(info.className)'.")
                }
                field.witness.dynamicSet(existing, field, newValue)
            }
            return existing
        }
        // `type` may be a subclass's metatype held as `Object.Type`: make what it names. Values a
        // failable custom type refuses are stored as given, as in Realm (RefusedPersistedValues).
        return RefusedPersistedValues.collecting(in: core) {
            let object = type.init()
            ObjectInitializer.populate(object, from: value)
            withAddSession(policy: update) { $0.add(object) }
            return object
        }
    }

    // MARK: - Deleting

    /// Deletes an object. Links to it become nil; its embedded objects are deleted with it.
    ///
    /// As in Realm, an object of this Realm that is already gone (deleted through another
    /// accessor, by another thread or process, or with its parent) is left alone; the accessor
    /// used to delete then has no ``ObjectBase/realm``, and deleting through it again traps, as
    /// do unmanaged objects and objects of another Realm.
    public func delete(_ object: ObjectBase) {
        // Realm's order: an object of another Realm (or none) before a missing write.
        core.verifyThread()
        guard let managed = object._managed, managed.core === core, !object._deletedThroughThisAccessor else {
            throwRealmException("Can only delete an object from the Realm it belongs to.")
        }
        core.verifyInWrite(Realm.addRequiresWriteMessage)
        if core.objectExists(managed) { core.deleteObject(managed.table, key: managed.key) }
        object._deletedThroughThisAccessor = true
    }

    /// Deletes every object of a sequence (evaluated once, before deleting).
    ///
    /// An object that an earlier element of the sequence already deleted is skipped, as in
    /// Realm: one that appears twice (a list holding it twice, or two accessors of it), or an
    /// embedded object whose parent came first. An object that was already deleted before the
    /// call is treated as deleting it alone treats it (see ``delete(_:)-(ObjectBase)``).
    public func delete<S: Sequence>(_ objects: S) where S.Iterator.Element: ObjectBase {
        let objects = Array(objects)
        let existed = objects.map { object in
            object._managed.map { $0.core === core && core.objectExists($0) } ?? false
        }
        for (object, existedAtStart) in zip(objects, existed) {
            if existedAtStart, let managed = object._managed, !core.objectExists(managed) { continue }
            delete(object)
        }
    }

    /// Deletes every object of `results` (evaluated once, before deleting).
    public func delete<Element: ObjectBase>(_ results: Results<Element>) {
        delete(Array(results))
    }

    /// Deletes every object in the Realm.
    public func deleteAll() {
        core.verifyInWrite(Realm.addRequiresWriteMessage)
        guard let txn = core.writeTransaction else { return }
        do {
            // Every class of the file, including classes another process added since this one
            // read the catalog, whether or not this program has their model classes.
            for stored in (core.pendingCatalog ?? core.file.catalog(readingNewerFrom: txn)).classes {
                let indexNames = stored.properties.filter(\.indexed).map { SecondaryIndex.name(stored.name, $0.name) }
                let names = [Table.rowsName(stored.name), Table.primaryKeysName(stored.name),
                             ColumnStorage.name(stored.name), ColumnDelta.name(stored.name)] + indexNames
                for name in names {
                    if let dbi = core.file.environment.handles.handle(named: name) { try txn.empty(dbi) }
                }
            }
            // The rows recorded for the column copies are gone with the copies.
            core.columnLog.reset()
            core.columnLog.forgetDeltaStates()
            try txn.empty(core.file.backlinks)
            core.backlinkCountLog.reset()
            if let counts = core.file.backlinkCounts { try txn.empty(counts) }
            try txn.empty(core.file.collections)
        } catch {
            throwRealmException("Trellis could not delete the objects of '\(core.environmentPath)': \(error)")
        }
        core.noteChange()
    }

    // MARK: - Reading

    /// All objects of a class, lazily evaluated and live. `Object` itself is no model class:
    /// asking for it traps with Realm's message.
    public func objects<Element: Object>(_ type: Element.Type) -> Results<Element> {
        core.verifyRealmRead()
        if type == Object.self { core.notManagedByTheRealm(type.className()) }
        core.verifyConfigured(type)
        return Results(core: core, source: .table(type))
    }

    /// The object of `type` whose primary key is `key`, or nil. Pass nil for a nil primary key.
    public func object<Element: Object, KeyType>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
        core.verifyRealmRead()
        // The class looked up last, with an integer key of its key's type, outside a write: its
        // two searches straight away (see PrimaryKeyLookup).
        if let spares, let lookup = spares.primaryKeyLookup, lookup.answers(type, KeyType.self, in: core),
           let snapshot = core.liveSnapshot, let integer = lookup.integer(key)
        {
            return core.lookedUpObject(type, lookup, integer: integer, in: snapshot, spares: spares)
        }
        let stamp = core.changeStamp
        // The common keys (integers, strings) are encoded straight from their type: no
        // reflection and no probe object. Everything else (optionals, conversions, wrong types
        // and their messages) takes the general path.
        if let table = core.table(for: type, create: false, verifiesConfigured: true), let pkField = table.info.primaryKeyField,
           let payload = PrimaryKeyEncoding.payload(ofKey: key, for: pkField)
        {
            if case .int = payload, let spares, !core.isInWriteTransaction,
               let lookup = PrimaryKeyLookup.remembering(type, table, stamp: stamp, core: core)
            {
                spares.remember(lookup, of: table)
            }
            guard let objectKey = core.lookUpPrimaryKey(table, payload) else { return nil }
            return core.lookedUpAccessor(type, table: table, key: objectKey, spares: spares)
        }
        return object(ofType: type, forPrimaryKeyValue: key)
    }

    func object<Element: Object>(ofType type: Element.Type, forPrimaryKeyValue key: Any?) -> Element? {
        core.verifyRealmRead()
        let info = ClassInfo.unbound(for: type)
        guard let pkField = info.primaryKeyField else {
            throwRealmException("'\(info.className)' does not have a primary key defined")
        }
        guard let table = core.table(for: type, create: false, verifiesConfigured: true) else { return nil }
        // The dynamic type: `Element` may be a superclass (`Object`) of the class `type` names,
        // and the key is written at an offset of `type`'s layout.
        let probe = type.init()
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(probe).toOpaque()) + pkField.offset
        guard pkField.witness.setUnmanaged(at: base, unwrapOptional(key)) else {
            throwRealmException("Invalid value '\(key ?? "nil")' of type '\(Swift.type(of: key))' for primary key of "
                + "'\(info.className)'; expected '\(pkField.typeInfo.swiftName)'.")
        }
        let session = AddSession(core: core, policy: .error)
        let pk = pkField.witness.encodeUnmanaged(at: base, _EncodingContext(session: session)).payload
        guard let objectKey = core.lookUpPrimaryKey(table, pk) else { return nil }
        return core.accessor(type, table: table, key: objectKey)
    }

    private func unwrapOptional(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional { return mirror.children.first?.value }
        return value
    }
}

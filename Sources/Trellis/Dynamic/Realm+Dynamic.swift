extension Realm {
    /// Every object of the class named `typeName`, as ``DynamicObject``s: lazily evaluated,
    /// live, and filtered and sorted like any `Results` (`filter("age > 2")`,
    /// `sorted(byKeyPath: "name")`).
    ///
    /// Works without the class's model type: on a Realm opened without `objectTypes`, the class
    /// is the one stored in the file. A class the Realm does not have (one its `objectTypes`
    /// leaves out included, as in Realm) traps with Realm's message; so does an embedded class
    /// (its objects are reached through their parents).
    public func dynamicObjects(_ typeName: String) -> Results<DynamicObject> {
        core.verifyRealmRead()
        let info = core.requireConfiguredClassInfo(named: typeName)
        if info.isEmbedded {
            throwRealmException("'\(typeName)' is an embedded object class: its objects can only be reached through "
                + "their parents.")
        }
        return Results(core: core, source: .dynamicTable(typeName))
    }

    /// The object of class `typeName` whose primary key is `key`, as a ``DynamicObject``, or nil.
    /// Pass `NSNull()` (or nil as `Any`) for a nil primary key.
    ///
    /// Traps with Realm's message when the class has no primary key, and when `key` does not
    /// fit the primary key's type.
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) -> DynamicObject? {
        core.verifyRealmRead()
        let info = core.requireConfiguredClassInfo(named: typeName)
        guard let pkField = info.primaryKeyField else {
            throwRealmException("'\(typeName)' does not have a primary key defined")
        }
        guard let table = core.dynamicTable(named: typeName, create: false) else { return nil }
        let value = DynamicWriter(core: core, policy: .error).payload(key, for: pkField, of: info)
        guard let objectKey = core.lookUpPrimaryKey(table, value), core.rowView(table, objectKey) != nil else {
            return nil
        }
        return core.accessor(DynamicObject.self, table: table, key: objectKey)
    }

    /// Creates an object of the class named `typeName` from a dictionary of property values,
    /// an array of values in property order, or another object, and returns it as a
    /// ``DynamicObject``. Linked objects given as dictionaries or arrays are created too.
    ///
    /// With `update: .modified` or `.all`, an existing object with the same primary key is
    /// updated instead (the properties the value gives are set). Properties the value leaves
    /// out of a new object get their type's default (0, "", nil, a new `ObjectId`…).
    ///
    /// Only inside a write transaction. Traps with Realm's messages for an embedded class, an
    /// update of a class without a primary key, an existing primary key with `.error`, and a
    /// value that does not fit its property.
    @discardableResult
    public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error)
        -> DynamicObject
    {
        core.verifyInWrite(Realm.addRequiresWriteMessage)
        let info = core.requireConfiguredClassInfo(named: typeName)
        if update != .error, info.primaryKeyField == nil {
            throwRealmException("'\(typeName)' does not have a primary key and can not be updated")
        }
        if info.isEmbedded {
            throwRealmException("Embedded objects cannot be created directly")
        }
        core.propertyUpdatePolicy = update
        defer { core.propertyUpdatePolicy = .error }
        let key = DynamicWriter(core: core, policy: update).create(info, value: value)
        guard let object = core.sameObject(DynamicObject.self, key: key, dynamicClassName: typeName) else {
            throwRealmException("Trellis internal error: the new '\(typeName)' could not be read.")
        }
        return object
    }
}

import Foundation

/// Where the outermost value holding a nested collection is stored: an `AnyRealmValue`
/// property of an object, an element of a `List<AnyRealmValue>`, or a value of a
/// `Map<String, AnyRealmValue>`.
enum NestedRoot {
    case property(table: Table, key: ObjectKey, field: FieldInfo)
    case listElement(CollectionLocation, index: Int)
    case mapValue(CollectionLocation, key: String)

    func isSame(as other: NestedRoot) -> Bool {
        switch (self, other) {
        case (.property(let t1, let k1, let f1), .property(let t2, let k2, let f2)):
            t1 === t2 && k1 == k2 && f1 === f2
        case (.listElement(let l1, let i1), .listElement(let l2, let i2)):
            l1.isSame(as: l2) && i1 == i2
        case (.mapValue(let l1, let k1), .mapValue(let l2, let k2)):
            l1.isSame(as: l2) && k1 == k2
        default: false
        }
    }

    /// The table and row of the object that owns the stored value.
    var owner: (table: Table, key: ObjectKey) {
        switch self {
        case .property(let table, let key, _): (table, key)
        case .listElement(let location, _), .mapValue(let location, _): (location.table, location.key)
        }
    }

    /// The owner and the row column whose change may change the nested collection.
    var ownerColumn: (table: Table, key: ObjectKey, column: Int) {
        switch self {
        case .property(let table, let key, let field): (table, key, field.rowColumn)
        case .listElement(let location, _), .mapValue(let location, _):
            (location.table, location.key, location.field.rowColumn)
        }
    }
}

extension CollectionLocation {
    func isSame(as other: CollectionLocation) -> Bool { table === other.table && key == other.key && field === other.field }
}

/// One step from a nested collection to a collection inside it.
enum NestedStep: Equatable {
    case index(Int)
    case key(String)
}

/// The managed side of a `List<AnyRealmValue>` or `Map<String, AnyRealmValue>` held inside an
/// `AnyRealmValue` (Realm 10.51's nested collections): the stored value that holds it and the
/// path from there.
///
/// The whole nested value is stored inline with its root (a row column or a collection
/// element), so every read decodes the root and walks the path, and every mutation rewrites the
/// root in one step: simple, atomic with the write transaction, and observed as a change of
/// the property that holds it, as in Realm.
struct NestedCollectionBinding {
    let core: RealmCore
    let root: NestedRoot
    let path: [NestedStep]
    let epoch: UInt64

    init(core: RealmCore, root: NestedRoot, path: [NestedStep] = []) {
        self.core = core
        self.root = root
        self.path = path
        self.epoch = core.epoch
    }

    /// The binding of the collection one step further in.
    func child(_ step: NestedStep) -> NestedCollectionBinding {
        NestedCollectionBinding(core: core, root: root, path: path + [step])
    }

    func isSame(as other: NestedCollectionBinding) -> Bool {
        core === other.core && root.isSame(as: other.root) && path == other.path
    }

    // MARK: - Reading

    /// The stored value at the root, or nil when it is `.none` or gone.
    private func rootValue() -> MixedValue? {
        switch root {
        case .property(let table, let key, let field):
            return core.rowView(table, key)?.mixed(field.rowColumn)
        case .listElement(let location, let index):
            return core.listElement(location, at: index).flatMap { RowView(bytes: $0).mixed(0) }
        case .mapValue(let location, let key):
            return core.mapValue(location, key).flatMap { RowView(bytes: $0).mixed(0) }
        }
    }

    /// The value at the end of `path`, or nil when the path no longer leads to anything.
    func storedValue() -> MixedValue? {
        var value = rootValue()
        for step in path {
            switch (value, step) {
            case (.list(let elements)?, .index(let index)) where elements.indices.contains(index):
                value = elements[index]
            case (.dictionary(let entries)?, .key(let key)):
                value = entries.first { $0.key == key }?.value ?? nil
            default:
                return nil
            }
        }
        return value
    }

    /// Whether the owner exists and the path still leads to a collection.
    var isValid: Bool {
        guard !core.isClosed, epoch == core.epoch else { return false }
        let owner = root.owner
        guard core.rowView(owner.table, owner.key) != nil else { return false }
        return storedValue()?.isCollection == true
    }

    /// `kind`: "List" or "Dictionary", as realm-core names the collection in its message.
    func verifyReadable(_ kind: String) {
        core.verifyThread()
        if !isValid { trapInvalid(kind) }
    }

    func verifyWritable(_ kind: String) {
        core.verifyThread()
        if !core.isInWriteTransaction { throwRealmException("Cannot modify \(kind) outside of a write transaction.") }
        if !isValid { trapInvalid(kind) }
    }

    /// As ``CollectionBinding``'s: realm-core's message, for a deleted owner or an ended read.
    private func trapInvalid(_ kind: String) -> Never {
        throwRealmException(invalidatedCollectionMessage(kind))
    }

    /// The elements of the nested list (empty when it is not a list any more).
    func listElements() -> [AnyRealmValue] {
        guard case .list(let elements)? = storedValue() else { return [] }
        return elements.enumerated().map { AnyRealmValue(stored: $0.element, core: core, nested: child(.index($0.offset))) }
    }

    /// The entries of the nested dictionary in key order (empty when it is not a dictionary).
    func dictionaryEntries() -> [(key: String, value: AnyRealmValue)] {
        guard case .dictionary(let entries)? = storedValue() else { return [] }
        return entries.map { ($0.key, AnyRealmValue(stored: $0.value, core: core, nested: child(.key($0.key)))) }
    }

    /// The number of elements or entries.
    var count: Int {
        switch storedValue() {
        case .list(let elements)?: elements.count
        case .dictionary(let entries)?: entries.count
        default: 0
        }
    }

    // MARK: - Writing

    /// The stored form of values being put into the collection; unmanaged objects they hold
    /// are added to the Realm.
    func encode(_ values: [AnyRealmValue], kind: String) -> [MixedValue?] {
        let session = AddSession(core: core, policy: core.propertyUpdatePolicy)
        session.embeddedReuseMessage = "Cannot add an existing managed embedded object to a \(kind)."
        let context = _EncodingContext(session: session)
        return values.map { $0.storedTree(context) }
    }

    /// Rewrites the nested list's elements.
    func modifyList(_ body: (inout [MixedValue?]) -> Void) {
        modify { value in
            guard case .list(var elements) = value else { return false }
            body(&elements)
            value = .list(elements)
            return true
        }
    }

    /// Rewrites the nested dictionary's entries (kept in key order afterwards).
    func modifyDictionary(_ body: (inout [(key: String, value: MixedValue?)]) -> Void) {
        modify { value in
            guard case .dictionary(var entries) = value else { return false }
            body(&entries)
            entries.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            value = .dictionary(entries)
            return true
        }
    }

    /// Reads the root, changes the collection at `path` in it, and stores the root again.
    private func modify(_ change: (inout MixedValue) -> Bool) {
        guard var value = rootValue(), Self.update(&value, path[...], change) else {
            throwRealmException("Object has been deleted or invalidated.")
        }
        let encoded = _StoredValue.Payload.mixed(value)
        switch root {
        case .property(let table, let key, let field):
            core.updateColumn(table, key: key, field: field, value: encoded)
        case .listElement(let location, let index):
            core.listSplice(location, index ..< index + 1, with: [RowWriter.encode(single: encoded)])
        case .mapValue(let location, let key):
            core.mapSet(location, key, RowWriter.encode(single: encoded))
        }
    }

    private static func update(_ value: inout MixedValue, _ path: ArraySlice<NestedStep>,
                               _ change: (inout MixedValue) -> Bool) -> Bool
    {
        guard let step = path.first else { return change(&value) }
        switch (value, step) {
        case (.list(var elements), .index(let index)) where elements.indices.contains(index):
            guard var inner = elements[index], update(&inner, path.dropFirst(), change) else { return false }
            elements[index] = inner
            value = .list(elements)
            return true
        case (.dictionary(var entries), .key(let key)):
            guard let position = entries.firstIndex(where: { $0.key == key }), var inner = entries[position].value,
                  update(&inner, path.dropFirst(), change)
            else { return false }
            entries[position].value = inner
            value = .dictionary(entries)
            return true
        default:
            return false
        }
    }
}

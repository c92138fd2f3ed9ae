import Synchronization

/// What Trellis knows about one `@Persisted` property of a model class.
final class FieldInfo: Sendable {
    /// The property name (the Swift name without the wrapper's underscore).
    let name: String
    /// Index among the class's `@Persisted` fields.
    let index: Int
    /// Position in the row, or -1 for LinkingObjects (computed, not stored).
    let rowColumn: Int
    /// Byte offset of the `Persisted` storage inside an instance.
    let offset: Int
    let witness: any PersistedFieldWitness.Type
    // Sendable: immutable after discovery. The metatype inside is an immutable value.
    nonisolated(unsafe) let typeInfo: _PropertyTypeInfo
    let isPrimaryKey: Bool
    let isIndexed: Bool
    let originProperty: String?

    init(name: String, index: Int, rowColumn: Int, offset: Int, witness: any PersistedFieldWitness.Type,
         typeInfo: _PropertyTypeInfo, declaration: PropertyDeclaration)
    {
        self.name = name
        self.index = index
        self.rowColumn = rowColumn
        self.offset = offset
        self.witness = witness
        self.typeInfo = typeInfo
        self.isPrimaryKey = declaration.isPrimaryKey
        self.isIndexed = declaration.isIndexed
        self.originProperty = declaration.originProperty
    }

    var isLinkingObjects: Bool { typeInfo.type == .linkingObjects }
    var isLink: Bool { typeInfo.type == .object }
    var isStored: Bool { rowColumn >= 0 }
    /// Collections and LinkingObjects keep one accessor per object.
    var cachesAccessor: Bool { typeInfo.collection != .none || isLinkingObjects }
    var isEmbeddedLink: Bool { isLink && (typeInfo.objectType?.isEmbedded ?? false) }

    var property: Property {
        Property(name: name, type: typeInfo.type, isOptional: typeInfo.isOptional, collection: typeInfo.collection,
                 isIndexed: isIndexed || isPrimaryKey, isPrimary: isPrimaryKey,
                 objectClassName: typeInfo.objectClassName, linkOriginPropertyName: originProperty)
    }
}

/// What Trellis knows about a model class, discovered once per process from the Swift type.
///
/// Discovery reads the stored fields of the class (``SchemaDiscovery``); nothing here depends
/// on a particular file, so one `ClassInfo` serves every Realm.
final class ClassInfo: Sendable {
    let objectType: ObjectBase.Type
    let className: String
    let isEmbedded: Bool
    /// Every `@Persisted` field, in declaration order (superclass fields first).
    let fields: [FieldInfo]
    /// The stored fields (not LinkingObjects), in row order.
    let storedFields: [FieldInfo]
    let primaryKeyField: FieldInfo?
    let objectSchema: ObjectSchema
    /// Key path identities seen by the property wrapper, one slot per field: lets a property
    /// read find its field by pointer comparison, with no hashing and no lock.
    // Sendable: slots are atomics; the pointer itself never changes after init.
    nonisolated(unsafe) private let keyPathSlots: UnsafeMutablePointer<Atomic<Int>>
    /// Key paths that were not the first instance seen for their field (generic classes).
    private let keyPathAliases = Mutex<[ObjectIdentifier: Int]>([:])

    init(objectType: ObjectBase.Type, fields: [FieldInfo]) {
        self.objectType = objectType
        self.className = objectType.className()
        self.isEmbedded = objectType.isEmbedded
        self.fields = fields
        self.storedFields = fields.filter(\.isStored)
        self.primaryKeyField = fields.first { $0.isPrimaryKey }
        self.objectSchema = ObjectSchema(className: className,
                                         properties: storedFields.map(\.property),
                                         computedProperties: fields.filter(\.isLinkingObjects).map(\.property),
                                         isEmbedded: objectType.isEmbedded)
        keyPathSlots = .allocate(capacity: max(fields.count, 1))
        for i in 0..<max(fields.count, 1) { (keyPathSlots + i).initialize(to: Atomic<Int>(0)) }
    }

    deinit {
        keyPathSlots.deinitialize(count: max(fields.count, 1))
        keyPathSlots.deallocate()
    }

    func field(named name: String) -> FieldInfo? {
        fields.first { $0.name == name }
    }

    /// The field whose `Persisted` storage `keyPath` designates.
    @inline(__always)
    func field(for keyPath: AnyKeyPath) -> FieldInfo {
        let id = Int(bitPattern: ObjectIdentifier(keyPath))
        for i in 0..<fields.count where keyPathSlots[i].load(ordering: .relaxed) == id {
            return fields[i]
        }
        return slowField(for: keyPath, id: id)
    }

    private func slowField(for keyPath: AnyKeyPath, id: Int) -> FieldInfo {
        if let index = keyPathAliases.withLock({ $0[ObjectIdentifier(keyPath)] }) { return fields[index] }
        // "\Dog._name" -> "name": the storage key path names the wrapper's backing field.
        let text = "\(keyPath)"
        let last = text.split(separator: ".").last.map(String.init) ?? text
        let name = last.hasPrefix("_") ? String(last.dropFirst()) : last
        guard let field = field(named: name) else {
            throwRealmException("Trellis could not find the property for key path \(text) on '\(className)'.")
        }
        let (exchanged, _) = keyPathSlots[field.index].compareExchange(expected: 0, desired: id, ordering: .relaxed)
        if !exchanged {
            keyPathAliases.withLock { $0[ObjectIdentifier(keyPath)] = field.index }
        }
        return field
    }
}

extension ClassInfo {
    private static let registry = Mutex<[ObjectIdentifier: ClassInfo]>([:])

    /// The class info of `type`, discovering it on first use.
    static func unbound(for type: ObjectBase.Type) -> ClassInfo {
        if let known = registry.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let info = SchemaDiscovery.discover(type)
        return registry.withLock { registry in
            if let raced = registry[ObjectIdentifier(type)] { return raced }
            registry[ObjectIdentifier(type)] = info
            return info
        }
    }
}

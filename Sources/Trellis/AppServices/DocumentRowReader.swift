import Foundation

/// A JSON value a caller builds (TrellisSync's `JSONValue`), made by ``DocumentRowReader``
/// without Foundation objects in between. Enum cases of those names satisfy it.
package protocol DocumentBuilding {
    static var null: Self { get }
    static func bool(_ value: Bool) -> Self
    static func string(_ value: String) -> Self
    static func array(_ elements: [Self]) -> Self
    static func object(_ members: [String: Self]) -> Self
    /// A value of ``ExtendedJSON``'s Foundation form (`String`, `Bool`, `NSNull`, `[Any]`,
    /// `[String: Any]`), for the properties the reader leaves to that encoder.
    init(extendedJSON value: Any)
}

/// Reads objects' canonical Extended JSON documents straight from their rows: the reverse of
/// ``DocumentRowWriter``, for TrellisSync's record of a local commit.
///
/// ``ExtendedJSON/documentValue(for:)`` reads every property through its wrapper as a Swift
/// value, boxes it as `Any`, makes the linked objects of a list to read their primary keys, and
/// builds `[String: Any]` documents that the caller converts again. Here each class gets a plan
/// once (its row columns, what each holds, its links' target tables), and a document is read
/// column by column from the row: scalars by their type, a link as its target's primary key
/// read from the target's row, an embedded object from its own row, a list of links or
/// embedded objects from its elements' keys. Properties of other kinds (sets, maps, lists of
/// values, `AnyRealmValue`, custom and enum types) are read through ``ExtendedJSON`` as before.
/// The documents are the same either way (`DocumentConversionTests` holds them to it).
///
/// Use it on the Realm's thread, within one read or write transaction.
package final class DocumentRowReader<Node: DocumentBuilding> {
    private let core: RealmCore
    private var plans: [ObjectIdentifier: ClassPlan] = [:]

    package init(realm: Realm) {
        core = realm.core
    }

    /// The document of a managed object of this Realm, keyed by persisted property names.
    ///
    /// - Throws: ``Realm/Error`` (`.invalidValue`) for a link to a class without a primary key
    ///   (Extended JSON stores a link as its target's primary key), as ``ExtendedJSON`` does.
    package func document(of object: ObjectBase) throws -> [String: Node] {
        guard let managed = object._managed, managed.core === core else {
            return try ExtendedJSON.documentValue(for: object).mapValues(Node.init(extendedJSON:))
        }
        return try document(plan(for: managed.table), key: managed.key, accessor: object)
    }

    // MARK: - Plans

    /// What a class's rows hold, column by column.
    private final class ClassPlan {
        let table: Table
        var columns: [ColumnPlan] = []

        init(table: Table) { self.table = table }
    }

    private struct ColumnPlan {
        let field: FieldInfo
        let property: Property
        let kind: Kind
    }

    private enum Kind {
        case scalar(DocumentScalarKind)
        /// A to-one link to a class with a primary key of a scalar kind.
        case link(Table, primaryKey: FieldInfo, DocumentScalarKind)
        case embedded(ClassPlan)
        case linkList(Table, primaryKey: FieldInfo, DocumentScalarKind)
        case embeddedList(ClassPlan)
        /// Read through ``ExtendedJSON`` and the property's wrapper.
        case generic
    }

    private func plan(for table: Table) -> ClassPlan {
        if let known = plans[ObjectIdentifier(table)] { return known }
        let plan = ClassPlan(table: table)
        // Registered before its columns: an embedded class may hold itself.
        plans[ObjectIdentifier(table)] = plan
        plan.columns = table.info.storedFields.map { ColumnPlan(field: $0, property: $0.property, kind: kind(of: $0)) }
        return plan
    }

    private func kind(of field: FieldInfo) -> Kind {
        let type = field.typeInfo
        if field.isLink {
            guard type.collection == .none || type.collection == .list, type.objectType != nil,
                  let target = core.linkedTable(field)
            else { return .generic }
            if field.isEmbeddedLink {
                let child = plan(for: target)
                return type.collection == .list ? .embeddedList(child) : .embedded(child)
            }
            guard let key = target.info.primaryKeyField, key.typeInfo.collection == .none,
                  let keyKind = DocumentScalarKind(key.typeInfo)
            else { return .generic }
            return type.collection == .list ? .linkList(target, primaryKey: key, keyKind)
                : .link(target, primaryKey: key, keyKind)
        }
        guard type.collection == .none, let scalar = DocumentScalarKind(type) else { return .generic }
        return .scalar(scalar)
    }

    // MARK: - Reading

    /// The document of the object `key` of `plan`'s class. `accessor`: the object itself when
    /// the caller has it (made here only for a property read through its wrapper).
    private func document(_ plan: ClassPlan, key: ObjectKey, accessor: ObjectBase?) throws -> [String: Node] {
        guard let row = core.rowView(plan.table, key) else {
            let object = accessor ?? core.accessor(plan.table.info.objectType, table: plan.table, key: key)
            return try ExtendedJSON.documentValue(for: object).mapValues(Node.init(extendedJSON:))
        }
        var members = [String: Node](minimumCapacity: plan.columns.count)
        var object = accessor
        for column in plan.columns {
            let field = column.field, c = field.rowColumn
            let value: Node
            switch column.kind {
            case .scalar(let kind):
                value = row.isNull(c) ? .null : scalar(row, c, kind)
            case .link(let target, let primaryKey, let keyKind):
                value = row.isNull(c) ? .null : try link(row.slot(c), target, primaryKey, keyKind, column.property)
            case .embedded(let child):
                value = row.isNull(c) ? .null : .object(try document(child, key: row.slot(c), accessor: nil))
            case .linkList(let target, let primaryKey, let keyKind):
                let keys = listKeys(plan.table, key, field)
                value = .array(try keys.map { try link($0, target, primaryKey, keyKind, column.property) })
            case .embeddedList(let child):
                let keys = listKeys(plan.table, key, field)
                value = .array(try keys.map { .object(try document(child, key: $0, accessor: nil)) })
            case .generic:
                if object == nil { object = core.accessor(plan.table.info.objectType, table: plan.table, key: key) }
                guard let object else { continue }
                value = Node(extendedJSON: try ExtendedJSON.encodedProperty(of: object, column.property))
            }
            members[field.columnName] = value
        }
        return members
    }

    private func listKeys(_ table: Table, _ key: ObjectKey, _ field: FieldInfo) -> [ObjectKey] {
        core.listElements(CollectionLocation(table: table, key: key, field: field)).compactMap(CollectionElement.linkKey)
    }

    /// A link as its target's primary key.
    private func link(_ key: ObjectKey, _ target: Table, _ primaryKey: FieldInfo, _ kind: DocumentScalarKind,
                      _ property: Property) throws -> Node
    {
        guard let row = core.rowView(target, key) else {
            throw Realm.Error(.invalidValue, "'\(property.name)' links to an object of '\(target.info.className)' "
                + "that is not in the Realm.")
        }
        let c = primaryKey.rowColumn
        return row.isNull(c) ? .null : scalar(row, c, kind)
    }

    private func scalar(_ row: RowView, _ c: Int, _ kind: DocumentScalarKind) -> Node {
        switch kind {
        case .int: return wrapped("$numberLong", String(row.int(c)))
        case .bool: return .bool(row.bool(c))
        case .double: return wrapped("$numberDouble", ExtendedJSON.canonical(row.double(c)))
        case .float: return wrapped("$numberDouble", ExtendedJSON.canonical(Double(row.float(c))))
        case .string: return .string(row.string(c))
        case .objectId: return wrapped("$oid", row.objectId(c).stringValue)
        case .date:
            return .object(["$date": wrapped("$numberLong", String(ExtendedJSONDate.milliseconds(of: row.date(c))))])
        case .decimal: return wrapped("$numberDecimal", row.decimal(c).stringValue)
        case .data: return binary(row.data(c), subType: "00")
        case .uuid: return binary(withUnsafeBytes(of: row.uuid(c).uuid) { Data($0) }, subType: "04")
        }
    }

    private func wrapped(_ name: String, _ text: String) -> Node { .object([name: .string(text)]) }

    private func binary(_ data: Data, subType: String) -> Node {
        .object(["$binary": .object(["base64": .string(data.base64EncodedString()), "subType": .string(subType)])])
    }
}

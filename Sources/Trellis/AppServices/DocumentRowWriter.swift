import Foundation
import Synchronization

/// Writes downloaded Extended JSON documents (TrellisSync) straight into their objects' rows.
///
/// `Realm.create(_:value:update: .modified)` takes a dictionary of `Any`: each value is cast,
/// copied (``CreateValueCopier``), converted to the property's Swift type, set through the
/// property's wrapper and only then encoded into the row. Here each class gets a plan once
/// (its row columns in order, what each holds, its links' target tables), and a document is
/// decoded column by column into the row's stored values, then written with one row write:
/// scalars by their type, a link by its target's primary key (one index lookup), an embedded
/// object into a row of its own, a list of links or embedded objects as its elements' keys.
/// An existing object whose row would not change is not written; one that changes is written
/// like an update through `create(…, update: .modified)`: embedded objects are updated in
/// place, changed columns recorded for notifications. Properties of other kinds (sets, maps,
/// lists of values, `AnyRealmValue`) are set through ``ExtendedJSONBatchDecoder`` and their
/// wrappers, as before.
///
/// Use it within one write transaction of `realm`, on the Realm's thread. A link whose target is
/// not in the Realm is left out (nil, or not in the list) and named in ``missingTargets``.
package final class DocumentRowWriter {
    let realm: Realm
    private let core: RealmCore
    /// Decodes what the writer leaves to the generic path, and looks classes up.
    package let decoder: ExtendedJSONBatchDecoder
    private var plans: [String: ClassPlan] = [:]
    /// The plan ``plan(_:)`` gave last.
    private var lastPlan: ClassPlan?
    /// The targets of the links the last ``write(_:className:)`` left out, as
    /// ``ExtendedJSONBatchDecoder/linkTargetIdentity(className:primaryKey:)`` names them.
    package private(set) var missingTargets: [String] = []

    /// What ``write(_:className:)`` did.
    package struct Outcome {
        /// The object's storage key (``Realm/syncObjectKey(_:)``).
        package let objectKey: UInt64
        /// The object did not exist before.
        package let created: Bool
        /// Anything of the object was written (false: it already held the document).
        package let changed: Bool
        /// ``ExtendedJSONBatchDecoder/linkTargetIdentity(className:primaryKey:)`` of the object.
        package let identity: String
    }

    /// For measurements only (`SyncBench --downloads-through-create`): TrellisSync then applies
    /// every downloaded document through `create(_:value:update:)`, as before this writer.
    package static let measuresCreateInstead = Atomic<Bool>(false)

    package init(realm: Realm) {
        self.realm = realm
        core = realm.core
        decoder = ExtendedJSONBatchDecoder(realm: realm, skipsMissingLinks: true)
    }

    /// Creates or updates the object of class `className` the document describes (by its primary
    /// key). Nil when the writer leaves the document to `create(_:value:update:)`: a class
    /// without a primary key or model type, a null primary key, or a document without every
    /// property (`create` gives a new object the model's defaults for those).
    ///
    /// - Throws: ``Realm/Error`` (`.invalidValue`) for a document that does not fit the class;
    ///   nothing of it is written.
    package func write<Node: DocumentNode>(_ document: [String: Node], className: String) throws -> Outcome? {
        core.verifyInWrite(Realm.addRequiresWriteMessage)
        missingTargets.removeAll(keepingCapacity: true)
        guard let plan = plan(className), let pkColumn = plan.primaryKeyColumn else { return nil }
        let row: DecodedRow
        do {
            row = try decode(document, plan)
        } catch is LeftToCreate {
            return nil
        }
        let pk = row.payloads[pkColumn]
        if case .null = pk { return nil }
        let existing = core.lookUpPrimaryKey(plan.table, pk)
        let (key, changed) = store(row, existing: existing, primaryKey: pk)
        return Outcome(objectKey: key, created: existing == nil, changed: changed,
                       identity: Self.identity(plan.info.className, pk))
    }

    /// The identity of an object of `className` with the stored primary key `pk`: the text of
    /// ``ExtendedJSONBatchDecoder/linkTargetIdentity(className:primaryKey:)`` (records of
    /// unresolved links in the file are keyed by it), written without boxing the key in `Any`
    /// for `String(describing:)`.
    static func identity(_ className: String, _ pk: _StoredValue.Payload) -> String {
        let key: String = switch pk {
        case .objectId(let value): value.hexDigits
        case .string(let value): value
        case .int(let value): String(value)
        case .uuid(let value): value.uuidString
        default: "\(pk)"
        }
        return className + "\u{0}" + key
    }

    // MARK: - Plans

    /// What a class's rows hold, column by column.
    final class ClassPlan {
        let info: ClassInfo
        let table: Table
        var columns: [ColumnPlan] = []
        /// Some property is set through its wrapper (``Kind/generic``).
        var leavesPropertiesToWrappers = false
        var primaryKeyColumn: Int? { info.primaryKeyField?.rowColumn }

        init(info: ClassInfo, table: Table) {
            self.info = info
            self.table = table
        }
    }

    struct ColumnPlan {
        let field: FieldInfo
        let kind: Kind
    }

    /// The class a link names and how its primary key is read, found once per class.
    struct LinkTarget {
        let table: Table
        let primaryKey: FieldInfo
        let keyKind: DocumentScalarKind
        let schema: ObjectSchema
    }

    enum Kind {
        case scalar(DocumentScalarKind)
        /// A to-one link to a class with a primary key.
        case link(LinkTarget)
        case embedded(ClassPlan)
        case linkList(LinkTarget)
        case embeddedList(ClassPlan)
        /// Left to ``ExtendedJSONBatchDecoder`` and the property's wrapper.
        case generic
    }

    /// The plan of a class of the configuration's `objectTypes`.
    private func plan(_ className: String) -> ClassPlan? {
        // A download's documents come class by class: the last plan, without hashing the name.
        if let last = lastPlan, last.info.className == className { return last }
        if let known = plans[className] {
            lastPlan = known
            return known
        }
        guard let type = decoder.objectType(className), let made = plan(of: type) else { return nil }
        lastPlan = made
        return made
    }

    private func plan(of type: ObjectBase.Type) -> ClassPlan? {
        if let known = plans[type.className()] { return known }
        guard let table = core.table(for: type, create: true) else { return nil }
        let plan = ClassPlan(info: table.info, table: table)
        // Registered before its columns: an embedded class may hold itself.
        plans[type.className()] = plan
        plan.columns = table.info.storedFields.map { ColumnPlan(field: $0, kind: kind(of: $0)) }
        plan.leavesPropertiesToWrappers = plan.columns.contains { if case .generic = $0.kind { true } else { false } }
        return plan
    }

    /// Whether some property of the class is set through its wrapper (``Kind/generic``): such a
    /// property is set again even when it holds the document's value already.
    package func leavesPropertiesToWrappers(_ className: String) -> Bool {
        plan(className)?.leavesPropertiesToWrappers ?? true
    }

    private func kind(of field: FieldInfo) -> Kind {
        let type = field.typeInfo
        if field.isLink {
            guard type.collection == .none || type.collection == .list, let target = core.linkedTable(field),
                  let targetType = type.objectType
            else { return .generic }
            if field.isEmbeddedLink {
                guard let plan = plan(of: targetType) else { return .generic }
                return type.collection == .list ? .embeddedList(plan) : .embedded(plan)
            }
            guard let key = target.info.primaryKeyField, let keyKind = DocumentScalarKind(key.typeInfo) else { return .generic }
            let link = LinkTarget(table: target, primaryKey: key, keyKind: keyKind, schema: target.info.objectSchema)
            return type.collection == .list ? .linkList(link) : .link(link)
        }
        guard type.collection == .none, let scalar = DocumentScalarKind(type) else { return .generic }
        return .scalar(scalar)
    }

    // MARK: - Decoding

    /// A document decoded into a row's stored values, before anything is written.
    struct DecodedRow {
        let plan: ClassPlan
        var payloads: [_StoredValue.Payload]
        var embedded: [(column: Int, child: DecodedRow?)] = []
        var linkLists: [(field: FieldInfo, keys: [ObjectKey])] = []
        var embeddedLists: [(field: FieldInfo, children: [DecodedRow])] = []
        var generic: [(field: FieldInfo, value: Any)] = []
    }

    /// A document the writer leaves to `create` (a property missing).
    private struct LeftToCreate: Error {}

    private func decode<Node: DocumentNode>(_ document: [String: Node], _ plan: ClassPlan) throws -> DecodedRow {
        let schema = plan.info.objectSchema
        var row = DecodedRow(plan: plan, payloads: Array(repeating: .none, count: plan.columns.count))
        for column in plan.columns {
            let field = column.field
            guard let node = document[field.columnName] else { throw LeftToCreate() }
            switch column.kind {
            case .scalar(let kind):
                row.payloads[field.rowColumn] = try scalar(node, kind, field, schema)
            case .link(let target):
                if node.isNull {
                    row.payloads[field.rowColumn] = .null
                } else {
                    row.payloads[field.rowColumn] = try link(node, target, field, schema).map { .link($0) } ?? .null
                }
            case .embedded(let childPlan):
                if node.isNull {
                    row.embedded.append((field.rowColumn, nil))
                } else {
                    guard let child = node.objectValue else { throw mismatch(node, field, schema) }
                    row.embedded.append((field.rowColumn, try decode(child, childPlan)))
                }
            case .linkList(let target):
                var keys = [ObjectKey]()
                let elements = node.isNull ? [] : try elementsOf(node, field, schema)
                keys.reserveCapacity(elements.count)
                for element in elements {
                    if element.isNull { throw ExtendedJSON.notOptional(field.property, schema) }
                    if let found = try link(element, target, field, schema) { keys.append(found) }
                }
                row.linkLists.append((field, keys))
            case .embeddedList(let childPlan):
                let elements = node.isNull ? [] : try elementsOf(node, field, schema)
                var children = [DecodedRow]()
                children.reserveCapacity(elements.count)
                for element in elements {
                    guard let child = element.objectValue else {
                        if element.isNull { throw ExtendedJSON.notOptional(field.property, schema) }
                        throw mismatch(element, field, schema)
                    }
                    children.append(try decode(child, childPlan))
                }
                row.embeddedLists.append((field, children))
            case .generic:
                let values = try decoder.values([field.columnName: node.foundationValue], schema: schema)
                missingTargets += decoder.missingTargets
                guard let value = values[field.name] else { throw mismatch(node, field, schema) }
                row.generic.append((field, value))
            }
        }
        return row
    }

    private func elementsOf<Node: DocumentNode>(_ node: Node, _ field: FieldInfo, _ schema: ObjectSchema) throws -> [Node] {
        guard let elements = node.arrayValue else { throw mismatch(node, field, schema) }
        return elements
    }

    /// The key of the object a link names, nil (and noted in ``missingTargets``) when it is not
    /// in the Realm.
    private func link<Node: DocumentNode>(_ node: Node, _ target: LinkTarget, _ field: FieldInfo,
                                          _ schema: ObjectSchema) throws -> ObjectKey?
    {
        let pk = try scalar(node, target.keyKind, target.primaryKey, target.schema)
        if let found = core.lookUpPrimaryKey(target.table, pk) { return found }
        missingTargets.append(Self.identity(target.table.info.className, pk))
        return nil
    }

    private func scalar<Node: DocumentNode>(_ node: Node, _ kind: DocumentScalarKind, _ field: FieldInfo,
                                            _ schema: ObjectSchema) throws -> _StoredValue.Payload
    {
        if node.isNull {
            guard field.typeInfo.isOptional else { throw ExtendedJSON.notOptional(field.property, schema) }
            return .null
        }
        switch kind {
        case .int(let range):
            let value: Int64?
            if let text = node.wrapped("$numberLong") {
                value = Int64(text)
            } else if let text = node.wrapped("$numberInt") {
                // 32-bit in Extended JSON.
                value = Int32(text).map(Int64.init)
            } else if let int = node.int64Value {
                value = int
            } else {
                value = node.doubleValue.flatMap { Int64(exactly: $0) }
            }
            guard let value, range.contains(value) else { throw mismatch(node, field, schema) }
            return .int(value)
        case .bool:
            guard let value = node.boolValue else { throw mismatch(node, field, schema) }
            return .bool(value)
        case .double, .float:
            let double: Double?
            if let text = node.wrapped("$numberDouble") {
                double = Double(text)
            } else {
                double = node.doubleValue
            }
            guard let double else { throw mismatch(node, field, schema) }
            guard case .float = kind else { return .double(double) }
            // A finite number past a Float's range does not fit (it would be stored as infinity).
            guard !double.isFinite || Float(double).isFinite else { throw mismatch(node, field, schema) }
            return .float(Float(double))
        case .string:
            guard let value = node.stringValue else { throw mismatch(node, field, schema) }
            return .string(value)
        case .objectId:
            guard let text = node.wrapped("$oid"), let value = ObjectId(hexDigits: text) else {
                throw mismatch(node, field, schema)
            }
            return .objectId(value)
        case .date, .decimal, .data, .uuid:
            let value = try ExtendedJSON.scalarValue(node.foundationValue, field.property, schema)
            switch value {
            case let date as Date: return .date(date)
            case let decimal as Decimal128: return .decimal(decimal)
            case let data as Data: return .data(data)
            case let uuid as UUID: return .uuid(uuid)
            default: throw mismatch(node, field, schema)
            }
        }
    }

    private func mismatch<Node: DocumentNode>(_ node: Node, _ field: FieldInfo, _ schema: ObjectSchema) -> Realm.Error {
        ExtendedJSON.mismatch(field.property, schema, node.foundationValue)
    }

    // MARK: - Writing

    /// Writes a decoded row: a new object (`existing` nil: a new key, and `primaryKey` into the
    /// index) or the object `existing`, with its embedded objects and collections. Returns its
    /// key and whether anything was written.
    private func store(_ row: DecodedRow, existing: ObjectKey?, primaryKey: _StoredValue.Payload?)
        -> (key: ObjectKey, changed: Bool)
    {
        let plan = row.plan, table = plan.table
        var payloads = row.payloads
        var changed = false
        // The embedded objects the row links now (read before anything is written: a write moves
        // the row's bytes).
        var heldChildren = [Int: ObjectKey]()
        if let existing, !row.embedded.isEmpty, let old = core.rowView(table, existing) {
            for (column, _) in row.embedded where !old.isNull(column) { heldChildren[column] = old.slot(column) }
        }
        for (column, child) in row.embedded {
            guard let child else {
                payloads[column] = .null
                continue
            }
            // Updated in place, as `create(…, update: .modified)` updates an embedded object.
            let stored = store(child, existing: heldChildren[column], primaryKey: nil)
            changed = changed || stored.changed
            payloads[column] = .link(stored.key)
        }
        let key: ObjectKey
        if let existing {
            key = existing
            let bytes = RowWriter.encode(payloads)
            let same = core.rowView(table, existing).map { old in
                bytes.withUnsafeBytes { $0.elementsEqual(old.bytes) }
            } ?? false
            if !same {
                core.writeRow(table, key: key, values: payloads, isNew: false)
                changed = true
            }
        } else {
            key = core.allocateKey(in: table)
            if let primaryKey { core.insertPrimaryKey(table, primaryKey, key: key) }
            core.writeRow(table, key: key, values: payloads, isNew: true)
            changed = true
        }
        let isNew = existing == nil
        for (field, keys) in row.linkLists {
            changed = storeLinkList(keys, at: CollectionLocation(table: table, key: key, field: field), isNew: isNew)
                || changed
        }
        for (field, children) in row.embeddedLists {
            changed = storeEmbeddedList(children, at: CollectionLocation(table: table, key: key, field: field),
                                        isNew: isNew) || changed
        }
        if !row.generic.isEmpty {
            let object = core.accessor(plan.info.objectType, table: table, key: key)
            // Linked objects with primary keys merge, as under `create(…, update: .modified)`.
            // The document's sets and maps replace the object's whole (see assignsCollectionsWhole).
            let policy = core.propertyUpdatePolicy, whole = core.assignsCollectionsWhole
            core.propertyUpdatePolicy = .modified
            core.assignsCollectionsWhole = true
            defer {
                core.propertyUpdatePolicy = policy
                core.assignsCollectionsWhole = whole
            }
            for (field, value) in row.generic {
                field.witness.dynamicSet(object, field, value)
            }
            changed = true
        }
        return (key, changed)
    }

    /// Makes a list of links hold `keys`; whether it changed.
    private func storeLinkList(_ keys: [ObjectKey], at location: CollectionLocation, isNew: Bool) -> Bool {
        if isNew {
            core.storeNewLinkList(location, keys)
            return !keys.isEmpty
        }
        let current = core.listElements(location).compactMap(CollectionElement.linkKey)
        if current == keys { return false }
        core.listSplice(location, 0..<current.count, with: keys.map(CollectionElement.link))
        return true
    }

    /// Makes a list of embedded objects hold `children`: the elements it has are updated in
    /// place, extra ones appended, surplus ones removed (and deleted); whether it changed.
    private func storeEmbeddedList(_ children: [DecodedRow], at location: CollectionLocation, isNew: Bool) -> Bool {
        if isNew {
            // A new owner's list holds only its new children: stored from their keys, as a new
            // owner's list of links (the same chunks, header and a backlink from each child to
            // its owner as `listSplice` writes), without an encoded element each.
            guard !children.isEmpty else { return false }
            core.storeNewLinkList(location, children.map { store($0, existing: nil, primaryKey: nil).key })
            return true
        }
        let current = core.listElements(location).compactMap(CollectionElement.linkKey)
        var changed = false
        for (child, key) in zip(children, current) {
            changed = store(child, existing: key, primaryKey: nil).changed || changed
        }
        if children.count > current.count {
            let added = children[current.count...].map { CollectionElement.link(store($0, existing: nil, primaryKey: nil).key) }
            core.listSplice(location, current.count..<current.count, with: added)
            changed = true
        } else if children.count < current.count {
            core.listSplice(location, children.count..<current.count, with: [])
            changed = true
        }
        return changed
    }
}

import Foundation
import Trellis
import TrellisSyncProtocol

/// Links whose targets this file does not have (outside its subscriptions): the server's
/// document keeps them, the local object cannot show them (a to-one link reads nil, a list
/// skips them). As Realm keeps such unresolved links, a local change must not upload their
/// absence: they are put back into the local document before it is compared with the mirror,
/// also inside embedded objects. A collection the app emptied with `removeAll()` gets none
/// back: as Realm's clear removes unresolved links too.
extension SyncEngine {
    /// `document` (the local object's) with the links of `mirror` (the server's last document)
    /// that do not resolve in this file put back where they were; none into the collections
    /// named in `cleared` (persisted names).
    func keepingUnresolvedLinks(_ document: [String: JSONValue], mirror: [String: JSONValue], schema: ObjectSchema,
                                cleared: Set<String> = [], realm: Realm) -> [String: JSONValue] {
        // Most classes have no links: no schema to build.
        guard schema.properties.contains(where: { $0.type == .object }) else { return document }
        let schemas = realm.schema
        return keepingUnresolvedLinks(document, mirror: mirror, schema: schema, cleared: cleared, schemas: schemas,
                                      realm: realm)
    }

    private func keepingUnresolvedLinks(_ document: [String: JSONValue], mirror: [String: JSONValue],
                                        schema: ObjectSchema, cleared: Set<String>, schemas: Schema,
                                        realm: Realm) -> [String: JSONValue] {
        var result = document
        for property in schema.properties where property.type == .object {
            guard let targetName = property.objectClassName, let targetSchema = schemas[targetName] else { continue }
            // Documents and the mirror are keyed by the stored name (`propertiesMapping()`).
            let field = property.columnName
            let before = mirror[field] ?? .null
            let after = document[field] ?? .null
            if targetSchema.isEmbedded {
                if before != after, Self.holdsLinks(targetSchema, schemas),
                   let kept = keepingUnresolvedLinks(inEmbedded: after, mirror: before, property: property,
                                                     schema: targetSchema, schemas: schemas, realm: realm)
                {
                    result[field] = kept
                }
                continue
            }
            guard !cleared.contains(field), let targetType = objectType(targetName) else { continue }
            let resolves = { (key: JSONValue) in key == .null || self.find(realm, targetType, targetSchema, key) != nil }
            if property.isArray {
                let old = before.arrayValue ?? []
                var list = after.arrayValue ?? []
                for (index, element) in old.enumerated() where !resolves(element) {
                    // After its nearest left neighbour of the mirror still in the list.
                    var position = 0
                    for left in stride(from: index - 1, through: 0, by: -1) {
                        if let found = list.firstIndex(of: old[left]) { position = found + 1; break }
                    }
                    list.insert(element, at: position)
                }
                result[field] = .array(list)
            } else if property.isSet {
                var items = after.arrayValue ?? []
                for element in before.arrayValue ?? [] where !resolves(element) && !items.contains(element) {
                    items.append(element)
                }
                result[field] = .array(items)
            } else if property.isMap {
                var entries = after.objectValue ?? [:]
                for (key, value) in before.objectValue ?? [:] where !resolves(value) {
                    if entries[key] == nil || entries[key] == .null { entries[key] = value }
                }
                result[field] = .object(entries)
            } else if after == .null, !resolves(before) {
                result[field] = before
            }
        }
        return result
    }

    /// Whether objects of `schema` (an embedded class) hold links to top-level objects, also
    /// through the embedded objects they hold.
    private static func holdsLinks(_ schema: ObjectSchema, _ schemas: Schema, depth: Int = 0) -> Bool {
        depth < 16 && schema.properties.contains { property in
            guard property.type == .object, let name = property.objectClassName, let target = schemas[name] else {
                return false
            }
            return !target.isEmbedded || holdsLinks(target, schemas, depth: depth + 1)
        }
    }

    /// The value of an embedded property (`after`, the local one) with the unresolved links of
    /// its mirror (`before`) put back; nil to leave it as it is. An embedded object has no
    /// identity in a document: a single one is the mirror's if both exist; a list's element
    /// is the mirror's element it equals once the links are put back (in order), else, in a
    /// list of the same length, the mirror's element at its index (it was edited in place).
    private func keepingUnresolvedLinks(inEmbedded after: JSONValue, mirror before: JSONValue, property: Property,
                                        schema: ObjectSchema, schemas: Schema, realm: Realm) -> JSONValue? {
        func kept(_ local: [String: JSONValue], _ old: [String: JSONValue]) -> [String: JSONValue] {
            keepingUnresolvedLinks(local, mirror: old, schema: schema, cleared: [], schemas: schemas, realm: realm)
        }
        if property.isArray {
            guard let old = before.arrayValue, let local = after.arrayValue, !old.isEmpty else { return nil }
            var used = Set<Int>()
            var list = [JSONValue]()
            for (index, element) in local.enumerated() {
                guard let fields = element.objectValue else { list.append(element); continue }
                var chosen: JSONValue?
                for (candidate, oldElement) in old.enumerated() where !used.contains(candidate) {
                    guard let oldFields = oldElement.objectValue, JSONValue.object(kept(fields, oldFields)) == oldElement
                    else { continue }
                    used.insert(candidate)
                    chosen = oldElement
                    break
                }
                if chosen == nil, local.count == old.count, !used.contains(index), let oldFields = old[index].objectValue {
                    used.insert(index)
                    chosen = .object(kept(fields, oldFields))
                }
                list.append(chosen ?? element)
            }
            return .array(list)
        }
        if property.isMap {
            guard var entries = after.objectValue, let old = before.objectValue else { return nil }
            for (key, value) in entries {
                if let fields = value.objectValue, let oldFields = old[key]?.objectValue {
                    entries[key] = .object(kept(fields, oldFields))
                }
            }
            return .object(entries)
        }
        guard let fields = after.objectValue, let oldFields = before.objectValue else { return nil }
        return .object(kept(fields, oldFields))
    }
}

/// Links downloaded before their targets: a download frame, a bootstrap page or the history
/// can bring an object before the object it links to (a person before their dog, in a later
/// frame or a later session). Each such link is recorded under its target
/// (``SyncStoreLayout/unresolved(to:from:_:)``) and under its object
/// (``SyncStoreLayout/unresolved(from:_:to:)``), in the same transaction as the object. When the
/// target arrives, the linking object is written again from its mirror (the server's
/// document), which sets the link, whatever the frame boundaries in between; when the target
/// is created on this device, the link is set in the object (``resolveLinks(toCreated:in:)``).
/// The records go with their object (deleted, or out of the subscriptions) and are made again
/// each time the server's document of the object is written, so a record is kept only while
/// the object exists and its document names the missing target.
extension SyncEngine {
    /// An object a download created, which links downloaded before may be waiting for.
    struct ArrivedObject {
        /// ``ExtendedJSONBatchDecoder/linkTargetIdentity(className:primaryKey:)`` of the object.
        let identity: String
        let className: String
        let objectKey: UInt64
    }

    /// Records that `className`/`objectKey` links to each of `targets`, which the file does not have.
    func recordUnresolvedLinks(_ targets: [String], from className: String, _ objectKey: UInt64, in realm: Realm) throws {
        for target in Set(targets) {
            try realm.syncStorePut(SyncStoreLayout.unresolved(to: target, from: className, objectKey), [])
            try realm.syncStorePut(SyncStoreLayout.unresolved(from: className, objectKey, to: target), [])
        }
    }

    /// Forgets the unresolved links of `className`/`objectKey`: the object is gone, or its
    /// document is about to be written again (which records those still missing).
    func dropUnresolvedLinks(from className: String, _ objectKey: UInt64, in realm: Realm) throws {
        let prefix = SyncStoreLayout.unresolved(from: className, objectKey)
        var found = [[UInt8]]()
        realm.syncStoreForEach(prefix: prefix) { key, _ in
            found.append(Array(key))
            return true
        }
        for key in found {
            try realm.syncStoreDelete(key)
            let target = String(decoding: key[prefix.count...], as: UTF8.self)
            try realm.syncStoreDelete(SyncStoreLayout.unresolved(to: target, from: className, objectKey))
        }
    }

    /// Takes the records of the links waiting for `target`; the linking objects.
    private func takeUnresolvedLinks(to target: String, in realm: Realm) throws -> [(className: String, objectKey: UInt64)] {
        let prefix = SyncStoreLayout.unresolved(to: target)
        var found = [[UInt8]]()
        realm.syncStoreForEach(prefix: prefix) { key, _ in
            found.append(Array(key))
            return true
        }
        var sources = [(className: String, objectKey: UInt64)]()
        for key in found {
            try realm.syncStoreDelete(key)
            guard let source = SyncStoreLayout.unresolvedSource(key, prefixLength: prefix.count) else { continue }
            try realm.syncStoreDelete(SyncStoreLayout.unresolved(from: source.className, source.objectKey, to: target))
            sources.append(source)
        }
        return sources
    }

    /// Sets the links waiting for the objects `arrived` (created in this transaction): each
    /// object linking to one is written again from its mirror. An object with local changes
    /// not yet acknowledged keeps them: only its links to the arrived objects are set (the
    /// server sends it back, merged, once it applied those changes). Links to objects still
    /// missing stay recorded.
    func resolveLinks(to arrived: [ArrivedObject], pending: PendingObjects, writer: DocumentRowWriter,
                      in realm: Realm) throws {
        guard !arrived.isEmpty, hasUnresolvedLinks(realm) else { return }
        var sources = [(className: String, objectKey: UInt64)]()
        var seen = Set<[UInt8]>()
        for target in arrived {
            for source in try takeUnresolvedLinks(to: target.identity, in: realm) {
                let key = SyncStoreLayout.mirror(source.className, source.objectKey)
                guard let mirror = SyncStoreLayout.mirrorEntry(realm, key) else { continue }
                if pending.contains(source.className + "\u{0}" + mirror.primaryKey.jsonText) {
                    if let object = realm.syncObject(className: source.className, objectKey: source.objectKey),
                       let targetObject = realm.syncObject(className: target.className, objectKey: target.objectKey) {
                        try setLinks(to: targetObject, in: object, mirror: mirror.document, realm: realm)
                    }
                } else if seen.insert(key).inserted {
                    sources.append(source)
                }
            }
        }
        for source in sources {
            // Gone since (deleted, or removed with its subscription): nothing to link.
            guard let mirror = SyncStoreLayout.mirrorEntry(realm, SyncStoreLayout.mirror(source.className, source.objectKey)),
                  let type = objectType(source.className), let schema = writer.decoder.objectSchema(source.className)
            else { continue }
            do {
                _ = try write(mirror.document, of: source.className, primaryKey: mirror.primaryKey, type, schema,
                              writer: writer, in: realm)
            } catch is UnusableDocument {
                // The mirror holds what was applied: it fitted then, and the model has not changed.
            }
        }
    }

    /// Sets the links waiting for the objects this local write created (`changes` with no
    /// mirror yet), in the objects that hold them, before the write's changes are measured:
    /// as Realm resolves a link when an object with the primary key it names is created. The
    /// linking objects then read as their mirrors for those links, so no change of them
    /// uploads the links' absence.
    func resolveLinks(toCreated changes: [SyncChangedObject], in realm: Realm) throws {
        guard hasUnresolvedLinks(realm) else { return }
        for change in changes where !change.isDeleted {
            guard realm.syncStoreGet(SyncStoreLayout.mirror(change.className, change.objectKey)) == nil,
                  let object = realm.syncObject(className: change.className, objectKey: change.objectKey),
                  let keyName = object.objectSchema.primaryKeyProperty?.name, let key = object[keyName]
            else { continue }
            let identity = ExtendedJSONBatchDecoder.linkTargetIdentity(className: change.className, primaryKey: key)
            for source in try takeUnresolvedLinks(to: identity, in: realm) {
                guard let linking = realm.syncObject(className: source.className, objectKey: source.objectKey),
                      let mirror = SyncStoreLayout.mirrorEntry(realm, SyncStoreLayout.mirror(source.className, source.objectKey))
                else { continue }
                try setLinks(to: object, in: linking, mirror: mirror.document, realm: realm)
            }
        }
    }

    /// Sets in `object` the links of `mirror` (its document as last synced) to `target` that
    /// the object lacks: a to-one link that is nil, a list's elements (after their nearest
    /// left neighbour in the mirror that the list still has, as ``keepingUnresolvedLinks(_:mirror:schema:realm:)``
    /// places them), a set's element, a map's entries that are nil or absent.
    private func setLinks(to target: Object, in object: Object, mirror: [String: JSONValue], realm: Realm) throws {
        let targetSchema = target.objectSchema
        guard let keyProperty = targetSchema.primaryKeyProperty, let keyValue = target[keyProperty.name],
              let key = try Self.document(of: target)[keyProperty.columnName],
              let dynamicTarget = realm.dynamicObject(ofType: targetSchema.className, forPrimaryKey: keyValue)
        else { return }
        let current = try Self.document(of: object)
        for property in object.objectSchema.properties
            where property.type == .object && property.objectClassName == targetSchema.className
        {
            let before = mirror[property.columnName] ?? .null
            let after = current[property.columnName] ?? .null
            if property.isArray {
                let old = before.arrayValue ?? []
                var keys = after.arrayValue ?? []
                let list = object.dynamicList(property.name)
                for (index, element) in old.enumerated() where element == key {
                    var position = 0
                    for left in stride(from: index - 1, through: 0, by: -1) {
                        if let found = keys.firstIndex(of: old[left]) { position = found + 1; break }
                    }
                    keys.insert(element, at: position)
                    list.insert(dynamicTarget, at: position)
                }
            } else if property.isSet {
                if before.arrayValue?.contains(key) == true, after.arrayValue?.contains(key) != true {
                    object.dynamicMutableSet(property.name).insert(dynamicTarget)
                }
            } else if property.isMap {
                let entries = after.objectValue ?? [:]
                let map: Map<String, DynamicObject?> = object.dynamicMap(property.name)
                for (name, value) in before.objectValue ?? [:] where value == key && (entries[name] ?? .null) == .null {
                    map[name] = dynamicTarget
                }
            } else if before == key, after == .null {
                object[property.name] = target
            }
        }
        setEmbeddedLinks(to: target, key: key, in: object, mirror: mirror, realm: realm)
    }

    /// Sets, in the embedded objects `object` holds (one per property, at any depth), the
    /// to-one links to `target` (`key`) that `mirror` has and the object lacks, as
    /// ``setLinks(to:in:mirror:realm:)`` sets top-level ones. Collections inside embedded
    /// objects are left alone (docs/SYNC.md, "What a local edit keeps").
    private func setEmbeddedLinks(to target: Object, key: JSONValue, in object: ObjectBase, mirror: [String: JSONValue],
                                  realm: Realm, depth: Int = 0) {
        guard depth < 16 else { return }
        for property in object.objectSchema.properties
            where property.type == .object && !property.isArray && !property.isSet && !property.isMap
        {
            guard let className = property.objectClassName else { continue }
            let before = mirror[property.columnName] ?? .null
            if depth > 0, className == target.objectSchema.className {
                if before == key, object[property.name] as? ObjectBase == nil { object[property.name] = target }
            } else if let fields = before.objectValue, realm.schema[className]?.isEmbedded == true,
                      let embedded = object[property.name] as? ObjectBase
            {
                setEmbeddedLinks(to: target, key: key, in: embedded, mirror: fields, realm: realm, depth: depth + 1)
            }
        }
    }

    /// Whether any link waits for its target (one seek: most files have none).
    func hasUnresolvedLinks(_ realm: Realm) -> Bool {
        var any = false
        realm.syncStoreForEach(prefix: SyncStoreLayout.unresolvedPrefix) { _, _ in
            any = true
            return false
        }
        return any
    }
}

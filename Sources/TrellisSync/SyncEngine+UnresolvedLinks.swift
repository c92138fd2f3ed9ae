import Foundation
import Trellis
import TrellisSyncProtocol

/// Links whose targets this file does not have (outside its subscriptions): the server's
/// document keeps them, the local object cannot show them (a to-one link reads nil, a list
/// skips them). As Realm keeps such unresolved links, a local change must not upload their
/// absence: they are put back into the local document before it is compared with the mirror,
/// also inside embedded objects. A collection the app emptied (`removeAll()`, also an embedded
/// object's) gets none back: as Realm's clear removes unresolved links too; nor does a link or
/// embedded object set by `update: .all` (realm-core sets every property then).
extension SyncEngine {
    /// What a walk of a document needs besides the document.
    struct UnresolvedLinkContext {
        let realm: Realm
        let schemas: Schema
        /// An object being created on the device (class, primary key in the document): links
        /// to it count as unresolved still, so they are put back where the mirror has them (to
        /// find which embedded element holds them, ``setLinks(to:in:mirror:realm:)``).
        var creating: (className: String, key: JSONValue)?
    }

    /// `document` (the document of `object`, a top-level object) with the links of `mirror`
    /// (the server's last document) that do not resolve in this file put back where they were;
    /// none into the collections the app emptied in this write transaction.
    func keepingUnresolvedLinks(_ document: [String: JSONValue], mirror: [String: JSONValue], of object: ObjectBase,
                                realm: Realm) -> [String: JSONValue] {
        // Most classes have no links: no schema to build.
        let schema = object.objectSchema
        guard schema.properties.contains(where: { $0.type == .object }) else { return document }
        let context = UnresolvedLinkContext(realm: realm, schemas: realm.schema)
        return keepingUnresolvedLinks(document, mirror: mirror, schema: schema, object: object, context)
    }

    /// The same for an object of `schema` (top-level or embedded); `object` is the live one the
    /// document was read from, which names the collections emptied (nil: none).
    func keepingUnresolvedLinks(_ document: [String: JSONValue], mirror: [String: JSONValue], schema: ObjectSchema,
                                object: ObjectBase?, _ context: UnresolvedLinkContext) -> [String: JSONValue] {
        let realm = context.realm
        var cleared = Set<String>()
        if let object, let key = realm.syncObjectKey(object) {
            cleared = realm.syncClearedCollections(className: schema.className, objectKey: key)
        }
        var result = document
        for property in schema.properties where property.type == .object {
            guard let targetName = property.objectClassName, let targetSchema = context.schemas[targetName] else { continue }
            // Documents and the mirror are keyed by the stored name (`propertiesMapping()`).
            let field = property.columnName
            let before = mirror[field] ?? .null
            let after = document[field] ?? .null
            if targetSchema.isEmbedded {
                // Embedded objects the app replaced (`update: .all`, `removeAll()`) are new, as
                // in realm-core: the old ones' unresolved links went with them.
                if !cleared.contains(field), before != after, Self.holdsLinks(targetSchema, context.schemas),
                   let kept = keepingUnresolvedLinks(inEmbedded: after, mirror: before, property: property,
                                                     schema: targetSchema,
                                                     children: object?.syncEmbeddedObjects(property.name) ?? [], context)
                {
                    result[field] = kept
                }
                continue
            }
            guard !cleared.contains(field), let targetType = objectType(targetName) else { continue }
            let creating = context.creating
            let resolves = { (key: JSONValue) in
                key == .null || (creating.map { $0.className == targetName && $0.key == key } != true
                    && self.find(realm, targetType, targetSchema, key) != nil)
            }
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
    /// its mirror (`before`) put back; nil to leave it as it is. `children` are the live
    /// embedded objects (``Trellis/ObjectBase/syncEmbeddedObjects(_:)``). An embedded object
    /// has no identity in a document: a single one is the mirror's if both exist, a map's is
    /// the mirror's under its key, a list's is paired by ``pairElements(_:_:restoring:)``.
    private func keepingUnresolvedLinks(inEmbedded after: JSONValue, mirror before: JSONValue, property: Property,
                                        schema: ObjectSchema, children: [(key: String?, object: ObjectBase)],
                                        _ context: UnresolvedLinkContext) -> JSONValue? {
        func kept(_ local: [String: JSONValue], _ old: [String: JSONValue], _ child: ObjectBase?) -> [String: JSONValue] {
            keepingUnresolvedLinks(local, mirror: old, schema: schema, object: child, context)
        }
        if property.isArray {
            guard let old = before.arrayValue, let local = after.arrayValue, !old.isEmpty else { return nil }
            // The live list and its document have the same elements in the same order.
            let child = { (index: Int) in children.count == local.count ? children[index].object : nil }
            let pairs = Self.pairElements(local, old) { index, fields, oldFields in kept(fields, oldFields, child(index)) }
            return .array(local.indices.map { index in
                guard let match = pairs[index], let fields = local[index].objectValue,
                      let oldFields = old[match].objectValue
                else { return local[index] }
                return .object(kept(fields, oldFields, child(index)))
            })
        }
        if property.isMap {
            guard var entries = after.objectValue, let old = before.objectValue else { return nil }
            var objects = [String: ObjectBase]()
            for child in children { if let key = child.key { objects[key] = child.object } }
            for (key, value) in entries {
                if let fields = value.objectValue, let oldFields = old[key]?.objectValue {
                    entries[key] = .object(kept(fields, oldFields, objects[key]))
                }
            }
            return .object(entries)
        }
        guard let fields = after.objectValue, let oldFields = before.objectValue else { return nil }
        return .object(kept(fields, oldFields, children.first?.object))
    }

    /// For each element of an embedded list (`local`, documents), the index of the mirror's
    /// element (`old`) it is, nil for a new one: the first not taken that it equals once
    /// `restoring(index, fields, mirror's fields)` put back the mirror element's unresolved
    /// links, else, in a list of the same length, the one at its index (edited in place).
    static func pairElements(_ local: [JSONValue], _ old: [JSONValue],
                             restoring: (Int, [String: JSONValue], [String: JSONValue]) -> [String: JSONValue]) -> [Int?] {
        var used = Set<Int>()
        var pairs = [Int?]()
        for (index, element) in local.enumerated() {
            guard let fields = element.objectValue else { pairs.append(nil); continue }
            var chosen: Int?
            for (candidate, oldElement) in old.enumerated() where !used.contains(candidate) {
                guard let oldFields = oldElement.objectValue,
                      JSONValue.object(restoring(index, fields, oldFields)) == oldElement
                else { continue }
                chosen = candidate
                break
            }
            if chosen == nil, local.count == old.count, !used.contains(index), old[index].objectValue != nil {
                chosen = index
            }
            if let chosen { used.insert(chosen) }
            pairs.append(chosen)
        }
        return pairs
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

import Foundation
import Trellis
import TrellisSyncProtocol

/// Links whose targets this file does not have (outside its subscriptions): the server's
/// document keeps them, the local object cannot show them (a to-one link reads nil, a list
/// skips them). As Realm keeps such unresolved links, a local change must not upload their
/// absence: they are put back into the local document before it is compared with the mirror.
extension SyncEngine {
    /// `document` (the local object's) with the links of `mirror` (the server's last document)
    /// that do not resolve in this file put back where they were.
    func keepingUnresolvedLinks(_ document: [String: JSONValue], mirror: [String: JSONValue], schema: ObjectSchema,
                                realm: Realm) -> [String: JSONValue] {
        var result = document
        for property in schema.properties where property.type == .object {
            guard let targetName = property.objectClassName, let targetSchema = realm.schema[targetName],
                  !targetSchema.isEmbedded, let targetType = objectType(targetName) else { continue }
            let resolves = { (key: JSONValue) in key == .null || self.find(realm, targetType, targetSchema, key) != nil }
            let before = mirror[property.name] ?? .null
            let after = document[property.name] ?? .null
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
                result[property.name] = .array(list)
            } else if property.isSet {
                var items = after.arrayValue ?? []
                for element in before.arrayValue ?? [] where !resolves(element) && !items.contains(element) {
                    items.append(element)
                }
                result[property.name] = .array(items)
            } else if property.isMap {
                var entries = after.objectValue ?? [:]
                for (key, value) in before.objectValue ?? [:] where !resolves(value) {
                    if entries[key] == nil || entries[key] == .null { entries[key] = value }
                }
                result[property.name] = .object(entries)
            } else if after == .null, !resolves(before) {
                result[property.name] = before
            }
        }
        return result
    }
}

/// Links downloaded before their targets: a download frame, a bootstrap page or the history
/// can bring an object before the object it links to (a person before their dog, in a later
/// frame or a later session). Each such link is recorded under its target
/// (``SyncStoreLayout/unresolved(to:from:_:)``), in the same transaction as the object; when
/// the target arrives, the linking object is written again from its mirror (the server's
/// document), which sets the link, whatever the frame boundaries in between.
extension SyncEngine {
    /// Records that `className`/`objectKey` links to each of `targets`, which the file does not have.
    func recordUnresolvedLinks(_ targets: [String], from className: String, _ objectKey: UInt64, in realm: Realm) throws {
        for target in Set(targets) {
            try realm.syncStorePut(SyncStoreLayout.unresolved(to: target, from: className, objectKey), [])
        }
    }

    /// Sets the links waiting for the objects `arrived` (``ExtendedJSONBatchDecoder/linkTargetIdentity(className:primaryKey:)``,
    /// created in this transaction): each object linking to one is written again from its
    /// mirror, unless it has local changes not yet acknowledged (the server sends it back, with
    /// the link, once it merged them). Links to objects still missing stay recorded.
    func resolveLinks(to arrived: [String], pending: PendingObjects, writer: DocumentRowWriter, in realm: Realm) throws {
        guard !arrived.isEmpty, hasUnresolvedLinks(realm) else { return }
        var sources = [(className: String, objectKey: UInt64)]()
        var seen = Set<[UInt8]>()
        for target in arrived {
            let prefix = SyncStoreLayout.unresolved(to: target)
            var found = [[UInt8]]()
            realm.syncStoreForEach(prefix: prefix) { key, _ in
                found.append(Array(key))
                return true
            }
            for key in found {
                try realm.syncStoreDelete(key)
                guard let source = SyncStoreLayout.unresolvedSource(key, prefixLength: prefix.count) else { continue }
                if seen.insert(SyncStoreLayout.mirror(source.className, source.objectKey)).inserted { sources.append(source) }
            }
        }
        for source in sources {
            // Gone since (deleted, or removed with its subscription): nothing to link.
            guard let mirror = SyncStoreLayout.mirrorEntry(realm, SyncStoreLayout.mirror(source.className, source.objectKey)),
                  !pending.contains(source.className + "\u{0}" + mirror.primaryKey.jsonText),
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

    /// Whether any link waits for its target (one seek: most files have none).
    private func hasUnresolvedLinks(_ realm: Realm) -> Bool {
        var any = false
        realm.syncStoreForEach(prefix: SyncStoreLayout.unresolvedPrefix) { _, _ in
            any = true
            return false
        }
        return any
    }
}

import Foundation
import Trellis
import TrellisSyncProtocol

/// Setting, in an object, the links its mirror (the server's document) has to an object that
/// now exists in the file (created on this device, or downloaded while the object has local
/// changes): at any depth of embedded objects, in to-one links and in lists, sets and maps of
/// links, as Realm resolves every link naming an object's primary key when the object is
/// created. A link left unset would read nil, and the next edit would upload its absence.
extension SyncEngine {
    /// The object the links name, found three ways.
    private struct LinkTarget {
        let object: Object
        /// The same object for a collection of ``DynamicObject``s.
        let dynamic: DynamicObject
        let className: String
        /// Its primary key as a document holds it.
        let key: JSONValue
    }

    /// Sets in `object` the links of `mirror` (its document as last synced) to `target` that
    /// the object lacks: a to-one link that is nil, a list's elements (after their nearest
    /// left neighbour in the mirror that the list still has, as
    /// ``keepingUnresolvedLinks(_:mirror:of:realm:)`` places them), a set's element, a map's
    /// entries that are nil or absent; and the same inside its embedded objects.
    func setLinks(to target: Object, in object: Object, mirror: [String: JSONValue], realm: Realm) throws {
        let targetSchema = target.objectSchema
        guard let keyProperty = targetSchema.primaryKeyProperty, let keyValue = target[keyProperty.name],
              let key = try Self.document(of: target)[keyProperty.columnName],
              let dynamic = realm.dynamicObject(ofType: targetSchema.className, forPrimaryKey: keyValue)
        else { return }
        let link = LinkTarget(object: target, dynamic: dynamic, className: targetSchema.className, key: key)
        let context = UnresolvedLinkContext(realm: realm, schemas: realm.schema, creating: (link.className, key))
        let current = try Self.document(of: object)
        setLinks(to: link, in: object, current: current, mirror: mirror, context, depth: 0)
    }

    /// ``setLinks(to:in:mirror:realm:)`` in `object` (top-level or embedded), whose document
    /// is `current`.
    private func setLinks(to target: LinkTarget, in object: ObjectBase, current: [String: JSONValue],
                          mirror: [String: JSONValue], _ context: UnresolvedLinkContext, depth: Int) {
        guard depth < 16 else { return }
        for property in object.objectSchema.properties where property.type == .object {
            guard let className = property.objectClassName else { continue }
            let before = mirror[property.columnName] ?? .null
            let after = current[property.columnName] ?? .null
            if before == after { continue }
            if className == target.className {
                setDirectLinks(to: target, property: property, in: object, current: after, mirror: before)
            } else if let schema = context.schemas[className], schema.isEmbedded {
                setLinks(to: target, inEmbedded: property, schema: schema, of: object, current: after, mirror: before,
                         context, depth: depth)
            }
        }
    }

    /// The links to `target` of the property `property` of `object` that `mirror` (its value in
    /// the mirror) has and `current` (its value now) lacks.
    private func setDirectLinks(to target: LinkTarget, property: Property, in object: ObjectBase, current: JSONValue,
                                mirror: JSONValue) {
        let key = target.key
        if property.isArray {
            let old = mirror.arrayValue ?? []
            var keys = current.arrayValue ?? []
            let list = object.syncLinkList(property.name)
            for (index, element) in old.enumerated() where element == key {
                var position = 0
                for left in stride(from: index - 1, through: 0, by: -1) {
                    if let found = keys.firstIndex(of: old[left]) { position = found + 1; break }
                }
                keys.insert(element, at: position)
                list.insert(target.dynamic, at: position)
            }
        } else if property.isSet {
            if mirror.arrayValue?.contains(key) == true, current.arrayValue?.contains(key) != true {
                object.syncLinkSet(property.name).insert(target.dynamic)
            }
        } else if property.isMap {
            let entries = current.objectValue ?? [:]
            let map = object.syncLinkMap(property.name)
            for (name, value) in mirror.objectValue ?? [:] where value == key && (entries[name] ?? .null) == .null {
                map[name] = target.dynamic
            }
        } else if mirror == key, current == .null {
            object[property.name] = target.object
        }
    }

    /// The links to `target` inside the embedded objects that `property` of `object` holds
    /// (`current` their documents, `mirror` the mirror's): a single one is the mirror's, a
    /// map's the mirror's under its key, a list's the mirror's element it pairs with
    /// (``pairElements(_:_:restoring:)``, with the links to `target` counted unresolved, as
    /// they were before it existed).
    private func setLinks(to target: LinkTarget, inEmbedded property: Property, schema: ObjectSchema,
                          of object: ObjectBase, current: JSONValue, mirror: JSONValue,
                          _ context: UnresolvedLinkContext, depth: Int) {
        let children = object.syncEmbeddedObjects(property.name)
        func descend(_ child: ObjectBase, _ local: JSONValue?, _ old: JSONValue?) {
            guard let fields = local?.objectValue, let oldFields = old?.objectValue else { return }
            setLinks(to: target, in: child, current: fields, mirror: oldFields, context, depth: depth + 1)
        }
        if property.isArray {
            guard let local = current.arrayValue, let old = mirror.arrayValue, local.count == children.count else { return }
            let pairs = Self.pairElements(local, old) { index, fields, oldFields in
                keepingUnresolvedLinks(fields, mirror: oldFields, schema: schema, object: children[index].object, context)
            }
            for (index, match) in pairs.enumerated() {
                if let match { descend(children[index].object, local[index], old[match]) }
            }
        } else if property.isMap {
            let local = current.objectValue ?? [:], old = mirror.objectValue ?? [:]
            for child in children {
                if let key = child.key { descend(child.object, local[key], old[key]) }
            }
        } else if let child = children.first {
            descend(child.object, current, mirror)
        }
    }
}

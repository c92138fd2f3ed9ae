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

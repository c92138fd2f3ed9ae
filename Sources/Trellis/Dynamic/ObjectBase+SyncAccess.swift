/// What TrellisSync reads and writes in any object, an embedded one included, without its
/// model class: the embedded objects a property holds, and the collections of links an object
/// holds (``Object/dynamicList(_:)`` and its kin are an `Object`'s only, as in Realm). The sync
/// engine sets, inside embedded objects, the links to an object created on the device.
extension ObjectBase {
    /// The embedded objects the property `name` holds: a to-one property's (none when nil), a
    /// list's in order, a map's with their keys (the key is nil otherwise).
    package func syncEmbeddedObjects(_ name: String) -> [(key: String?, object: ObjectBase)] {
        let value = storedValue(forKey: name)
        var objects = [(key: String?, object: ObjectBase)]()
        guard let collection = value as? any _CollectionProperty else {
            if let object = ValueConversion.unwrapped(value) as? ObjectBase { objects.append((key: nil, object: object)) }
            return objects
        }
        for element in collection._trellisElements {
            if let entry = element as? (String, Any) {
                if let object = ValueConversion.unwrapped(entry.1) as? ObjectBase { objects.append((key: entry.0, object: object)) }
            } else if let object = ValueConversion.unwrapped(element) as? ObjectBase {
                objects.append((key: nil, object: object))
            }
        }
        return objects
    }

    /// The list of links named `name`, live, with ``DynamicObject`` elements.
    package func syncLinkList(_ name: String) -> List<DynamicObject> {
        List(binding: dynamicCollectionBinding(name, .list, "a List"))
    }

    /// The set of links named `name`, live, with ``DynamicObject`` elements.
    package func syncLinkSet(_ name: String) -> MutableSet<DynamicObject> {
        MutableSet(binding: dynamicCollectionBinding(name, .set, "a MutableSet"))
    }

    /// The map of links named `name`, live, with ``DynamicObject`` values.
    package func syncLinkMap(_ name: String) -> Map<String, DynamicObject?> {
        Map(binding: dynamicCollectionBinding(name, .map, "a Map"))
    }
}

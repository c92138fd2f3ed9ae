import Foundation

// Realm's `description` of objects and collections, the text its tests and apps' logs read:
//
//     Dog {
//         name = Rex;
//         owner = Person {
//             name = Tim;
//         };
//         toys = List<Toy> <0x600003c04e40> (
//             [0] Toy {
//                 name = ball;
//             }
//         );
//     }
//
// (tabs, not spaces). A value prints as Realm's Objective-C layer prints it: a Bool as 0 or 1,
// nil as `(null)`, a string without quotes, a date as `1970-01-01 00:00:01 +0000`, data as
// `<61626364 — 4 total bytes>`. Nesting stops at depth 5 with `<Maximum depth exceeded>`;
// a collection prints its first 100 elements and says how many it skipped.

/// A value that prints itself Realm's way down to a given depth. Not API.
protocol RealmDescribable {
    func realmDescription(depth: Int) -> String
}

enum RealmDescription {
    /// How deep `description` follows links and collections (Realm's `RLMDescriptionMaxDepth`).
    static let maximumDepth = 5
    /// How many elements a collection prints.
    static let maximumElements = 100
    static let depthExceeded = "<Maximum depth exceeded>"

    /// `Dog {\n\tname = Rex;\n}`: every persisted property in schema order.
    static func object(_ object: ObjectBase, depth: Int) -> String {
        if depth == 0 { return depthExceeded }
        if object.isInvalidated { return "[invalid object]" }
        let info = object._managed?.info ?? ClassInfo.unbound(for: type(of: object))
        var text = "\(info.className) {\n"
        for field in info.storedFields {
            let value = object.storedValue(forKey: field.name)
            let described = field.typeInfo.type == .data && field.typeInfo.collection == .none
                ? data(value) : Self.value(value, depth: depth - 1)
            text += "\t\(field.name) = \(indented(described));\n"
        }
        return text + "}"
    }

    /// `List<Dog> <0x…> (\n\t[0] …,\n\t[1] …\n)`.
    static func collection(
        _ name: String, elementType: String, address: AnyObject?, elements: [Any?], depth: Int
    ) -> String {
        if depth == 0 { return depthExceeded }
        var lines: [String] = []
        for (index, element) in elements.prefix(maximumElements).enumerated() {
            lines.append("\t[\(index)] \(indented(value(element, depth: depth - 1)))")
        }
        var text = "\(name)<\(elementType)> <\(pointer(address))> (\n" + lines.joined(separator: ",\n")
        if elements.count > maximumElements {
            text += "\n\t... \(elements.count - maximumElements) objects skipped."
        }
        return text + "\n)"
    }

    /// `Map<string, Dog> <0x…> (\n[key]: Dog {…},\n…\n)`: Realm indents nothing at the first
    /// level of a dictionary's entries.
    static func map(_ name: String, valueType: String, address: AnyObject?, entries: [(String, Any?)], depth: Int) -> String {
        if depth == 0 { return depthExceeded }
        let lines = entries.prefix(maximumElements).map { key, entryValue in
            indented("[\(key)]: \(value(entryValue, depth: depth - 1))")
        }
        var text = "\(name)<string, \(valueType)> <\(pointer(address))> (\n" + lines.joined(separator: ",\n")
        if entries.count > maximumElements {
            text += "\n\t... \(entries.count - maximumElements) objects skipped."
        }
        return text + "\n)"
    }

    /// Realm's name for a collection's element type: the class name for objects, else the
    /// stored type (`int`, `string`, `mixed`, `decimal128`, …).
    static func typeName<T: _Persistable>(_ type: T.Type) -> String {
        let info = T._trellisTypeInfo
        if let className = info.objectClassName { return className }
        return info.type == .decimal128 ? "decimal128" : info.type.description
    }

    /// One value as Realm's Objective-C `description` prints it.
    static func value(_ value: Any?, depth: Int) -> String {
        guard let value = flattened(value) else { return "(null)" }
        switch value {
        case let linked as ObjectBase: return object(linked, depth: depth)
        case let describable as any RealmDescribable: return describable.realmDescription(depth: depth)
        case let bool as Bool: return bool ? "1" : "0"
        case let string as String: return string
        case let date as Date: return dateText(date)
        case let uuid as UUID: return uuid.uuidString
        case let data as Data: return hex(data)
        case let mixed as AnyRealmValue: return mixedText(mixed, depth: depth)
        case let custom as any _CustomPersistable: return Self.value(custom.persistableValue, depth: depth)
        case let enumValue as any RawRepresentable: return Self.value(enumValue.rawValue, depth: depth)
        default: return "\(value)"
        }
    }

    private static func mixedText(_ mixed: AnyRealmValue, depth: Int) -> String {
        switch mixed {
        case .none: "(null)"
        case .int(let v): "\(v)"
        case .bool(let v): v ? "1" : "0"
        case .float(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v): v
        case .data(let v): hex(v)
        case .date(let v): dateText(v)
        case .object(let v): object(v, depth: depth)
        case .objectId(let v): v.stringValue
        case .decimal128(let v): v.description
        case .uuid(let v): v.uuidString
        case .dictionary(let v): v.realmDescription(depth: depth)
        case .list(let v): v.realmDescription(depth: depth)
        }
    }

    /// A nil wrapped in an `Any` (an optional property's value) as nil.
    private static func flattened(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if value is NSNull { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return nil }
            return flattened(wrapped)
        }
        return value
    }

    /// A Data property: its first 24 bytes and its length (Realm's object description).
    private static func data(_ value: Any?) -> String {
        guard let bytes = flattened(value) as? Data else { return "(null)" }
        let shown = hex(bytes.prefix(24))
        return "<\(shown.dropFirst().dropLast()) — \(bytes.count) total bytes>"
    }

    /// `<61626364 65>`: Foundation's classic data description.
    private static func hex(_ data: Data) -> String {
        var text = "<"
        for (index, byte) in data.enumerated() {
            if index > 0 && index % 4 == 0 { text += " " }
            text += String(byte, radix: 16).leftPadded(to: 2)
        }
        return text + ">"
    }

    private static func dateText(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return formatter.string(from: date)
    }

    private static func pointer(_ object: AnyObject?) -> String {
        guard let object else { return "0x0" }
        return "0x" + String(UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()), radix: 16)
    }

    private static func indented(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: "\n\t")
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

// MARK: - The collections

extension List: RealmDescribable {
    func realmDescription(depth: Int) -> String {
        RealmDescription.collection("List", elementType: RealmDescription.typeName(Element.self), address: self,
                                    elements: allElements.map { $0 as Any }, depth: depth)
    }
}

extension MutableSet: RealmDescribable {
    func realmDescription(depth: Int) -> String {
        RealmDescription.collection("MutableSet", elementType: RealmDescription.typeName(Element.self), address: self,
                                    elements: allElements.map { $0 as Any }, depth: depth)
    }
}

extension Map: RealmDescribable {
    func realmDescription(depth: Int) -> String {
        RealmDescription.map("Map", valueType: RealmDescription.typeName(Value.self), address: self,
                             entries: entries.map { ("\($0.key)", $0.value as Any) }, depth: depth)
    }
}

extension Results: RealmDescribable {
    func realmDescription(depth: Int) -> String {
        let elementType = dynamicClassName ?? objectType?.className() ?? RealmDescription.typeName(Element.self)
        return RealmDescription.collection("Results", elementType: elementType, address: cacheIdentity,
                                           elements: map { $0 as Any }, depth: depth)
    }
}

extension LinkingObjects: RealmDescribable {
    func realmDescription(depth: Int) -> String {
        RealmDescription.collection("LinkingObjects", elementType: Element.className(), address: source,
                                    elements: map { $0 as Any }, depth: depth)
    }
}

extension AnyRealmCollection: RealmDescribable {
    func realmDescription(depth: Int) -> String {
        RealmDescription.collection("AnyRealmCollection", elementType: RealmDescription.typeName(Element.self),
                                    address: base, elements: map { $0 as Any }, depth: depth)
    }
}

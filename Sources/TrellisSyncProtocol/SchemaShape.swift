import Foundation

/// A collection's schema reduced to what sync checks: each property path's BSON type, read
/// from an App Services JSON schema (`{"title", "bsonType": "object", "properties": …}`).
/// Paths go into embedded documents (`address.city`) and array items (`dogs.[]`).
public struct SchemaShape: Sendable, Equatable {
    public var className: String
    /// Path → BSON type (`objectId`, `long`, `string`, `array`, `object`, …).
    public var types: [String: String]
    /// The primary key property's name (`_id` when the schema has one, else the first
    /// required property of a scalar type).
    public var primaryKey: String?
    /// The paths of the required properties (`required` at each level: `name`,
    /// `address.city`).
    public var required: Set<String>

    public init(document: JSONValue) throws {
        guard let title = document["title"]?.stringValue else {
            throw SchemaShapeError(message: "A collection schema needs a \"title\" (the class name).")
        }
        className = title
        types = [:]
        var requiredPaths = Set<String>()
        Self.collect(document, path: "", into: &types, required: &requiredPaths)
        self.required = requiredPaths
        let required = document["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
        primaryKey = types["_id"] != nil ? "_id" : types["id"] != nil ? "id" : required.first { types[$0] != nil && !$0.contains(".") }
    }

    private static func collect(_ schema: JSONValue, path: String, into types: inout [String: String],
                                required: inout Set<String>) {
        guard let properties = schema["properties"]?.objectValue else { return }
        for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
            required.insert(path.isEmpty ? name : path + "." + name)
        }
        for (name, property) in properties {
            let key = path.isEmpty ? name : path + "." + name
            let type = property.stringValue ?? property["bsonType"]?.stringValue ?? "mixed"
            types[key] = type
            if type == "object" {
                collect(property, path: key, into: &types, required: &required)
                // A map: the type of its values.
                if let values = property["additionalProperties"], values.objectValue != nil || values.stringValue != nil {
                    let valueType = values.stringValue ?? values["bsonType"]?.stringValue ?? "mixed"
                    types[key + ".{}"] = valueType
                    if valueType == "object" { collect(values, path: key + ".{}", into: &types, required: &required) }
                }
            }
            if type == "array", let items = property["items"] {
                let itemType = items.stringValue ?? items["bsonType"]?.stringValue ?? "mixed"
                types[key + ".[]"] = itemType
                if itemType == "object" { collect(items, path: key + ".[]", into: &types, required: &required) }
            }
        }
    }

    /// What keeps a client's model of this class (`client`) from syncing with this server
    /// schema, one line each (empty when it can sync). A property the server has and the
    /// client lacks is fine when it is optional: the server's schema grew (an additive
    /// change, as Device Sync allows without a new schema version), and the client leaves
    /// the new property alone. A property the client has and the server lacks, another
    /// type, or a required property the client lacks cannot sync.
    public func differences(from client: SchemaShape) -> [String] {
        var lines = [String]()
        for key in Set(types.keys).union(client.types.keys).sorted() where types[key] != client.types[key] {
            if client.types[key] == nil {
                let parent = Self.parent(of: key)
                let parentOnClient = parent.isEmpty || client.types[parent] != nil
                if !required.contains(key) || !parentOnClient { continue }
            }
            lines.append("'\(className).\(key)' is \(client.types[key] ?? "absent") on the client but "
                + "\(types[key] ?? "absent") on the server")
        }
        return lines
    }

    /// The changes from `old` (the schema served before) to this one that Device Sync calls
    /// breaking, one line each: a property removed, its type changed, made required or
    /// optional, a new required property. New optional properties are additive (not listed).
    public func breakingChanges(from old: SchemaShape) -> [String] {
        var lines = [String]()
        for key in old.types.keys.sorted() {
            guard let type = types[key] else {
                lines.append("'\(className).\(key)' was removed")
                continue
            }
            if type != old.types[key] {
                lines.append("'\(className).\(key)' changed type from \(old.types[key] ?? "?") to \(type)")
            } else if required.contains(key) != old.required.contains(key) {
                lines.append("'\(className).\(key)' was made \(required.contains(key) ? "required" : "optional")")
            }
        }
        for key in types.keys.sorted() where old.types[key] == nil && required.contains(key) {
            let parent = Self.parent(of: key)
            if parent.isEmpty || old.types[parent] != nil {
                lines.append("'\(className).\(key)' is a new required property")
            }
        }
        return lines
    }

    /// The path of the property holding `path` (`address` for `address.city`; empty at the top).
    static func parent(of path: String) -> String {
        var components = path.split(separator: ".").map(String.init)
        components.removeLast()
        while components.last == "[]" || components.last == "{}" { components.removeLast() }
        return components.joined(separator: ".")
    }

    /// Why a stored document does not fit the schema, or nil when it does. Properties the
    /// schema does not know are left alone (a column added with SQL, a schema that grew).
    ///
    /// Every document a bootstrap sends is checked (``firstProblem(in:_:)``).
    public func problem(inDocument document: [String: JSONValue]) -> String? {
        Self.firstProblem(in: document) { key, value in types[key] == nil ? nil : mismatch(value, at: key) }
    }

    /// The problem `problem` finds in the first entry of `object`, in key order, that has one.
    /// The entries are checked in the dictionary's order first, and sorted (so the problem named
    /// is the same whatever the order) only when one does not fit: every document a bootstrap
    /// sends is checked, and almost all fit.
    private static func firstProblem(in object: [String: JSONValue],
                                     _ problem: (_ key: String, _ value: JSONValue) -> String?) -> String? {
        guard object.contains(where: { problem($0.key, $0.value) != nil }) else { return nil }
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            if let found = problem(key, value) { return found }
        }
        return nil
    }

    /// Why `value` does not fit the property at `path`, or nil when it does.
    public func mismatch(_ value: JSONValue, at path: String) -> String? {
        guard let type = types[path] else { return "'\(className)' has no property '\(path)'" }
        if case .null = value { return nil }
        let fits: Bool
        switch type {
        case "objectId":
            fits = value["$oid"]?.stringValue.map { $0.utf8.count == 24 && $0.utf8.allSatisfy(Self.isASCIIHexDigit) } ?? false
        case "long", "int":
            let number: Int64?
            switch value {
            case .int(let integer): number = integer
            default: number = (value["$numberLong"]?.stringValue ?? value["$numberInt"]?.stringValue).flatMap { Int64($0) }
            }
            fits = number.map { type == "long" || Int64(Int32.min)...Int64(Int32.max) ~= $0 } ?? false
        case "double", "float":
            switch value {
            case .int, .double: fits = true
            default: fits = value["$numberDouble"]?.stringValue.map { Double($0) != nil } ?? false
            }
        case "decimal":
            fits = value["$numberDecimal"]?.stringValue.map {
                Decimal(string: $0) != nil || ["NaN", "-NaN", "Infinity", "-Infinity", "Inf", "-Inf"].contains($0)
            } ?? false
        case "string": fits = value.stringValue != nil
        case "bool": if case .bool = value { fits = true } else { fits = false }
        case "date":
            let millis = value["$date"]?["$numberLong"]?.stringValue.flatMap { Int64($0) }
            fits = millis != nil || value["$date"]?.stringValue != nil
        case "uuid", "binData":
            let data = value["$binary"]?["base64"]?.stringValue.flatMap { Data(base64Encoded: $0) }
            fits = data != nil && (type != "uuid" || data?.count == 16)
        case "array":
            guard let items = value.arrayValue else { return "'\(className).\(path)' must be an array" }
            let itemPath = path + ".[]"
            for item in items { if let problem = mismatch(item, at: itemPath) { return problem } }
            return nil
        case "object":
            guard let object = value.objectValue else { return "'\(className).\(path)' must be a document" }
            let prefix = path + "."
            let valuePath = prefix + "{}"
            if types[valuePath] != nil {
                return Self.firstProblem(in: object) { key, item in
                    mismatch(item, at: valuePath).map { $0 + " (key '\(key)')" }
                }
            }
            let isMixedMap = !types.keys.contains { $0.hasPrefix(prefix) }
            if isMixedMap { return nil }
            return Self.firstProblem(in: object) { key, item in mismatch(item, at: prefix + key) }
        default: fits = true
        }
        return fits ? nil : "'\(className).\(path)' is \(type), not \(value.jsonText)"
    }

    /// `0`-`9`, `a`-`f`, `A`-`F` (an ObjectId's 24 characters; `Character.isHexDigit` also
    /// takes fullwidth digits, which no ObjectId holds).
    static func isASCIIHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
             UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}

/// A schema that cannot be read.
public struct SchemaShapeError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

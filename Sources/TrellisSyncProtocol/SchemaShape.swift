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

    public init(document: JSONValue) throws {
        guard let title = document["title"]?.stringValue else {
            throw SchemaShapeError(message: "A collection schema needs a \"title\" (the class name).")
        }
        className = title
        types = [:]
        Self.collect(document, path: "", into: &types)
        let required = document["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
        primaryKey = types["_id"] != nil ? "_id" : types["id"] != nil ? "id" : required.first { types[$0] != nil && !$0.contains(".") }
    }

    private static func collect(_ schema: JSONValue, path: String, into types: inout [String: String]) {
        guard let properties = schema["properties"]?.objectValue else { return }
        for (name, property) in properties {
            let key = path.isEmpty ? name : path + "." + name
            let type = property.stringValue ?? property["bsonType"]?.stringValue ?? "mixed"
            types[key] = type
            if type == "object" {
                collect(property, path: key, into: &types)
                // A map: the type of its values.
                if let values = property["additionalProperties"], values.objectValue != nil || values.stringValue != nil {
                    let valueType = values.stringValue ?? values["bsonType"]?.stringValue ?? "mixed"
                    types[key + ".{}"] = valueType
                    if valueType == "object" { collect(values, path: key + ".{}", into: &types) }
                }
            }
            if type == "array", let items = property["items"] {
                let itemType = items.stringValue ?? items["bsonType"]?.stringValue ?? "mixed"
                types[key + ".[]"] = itemType
                if itemType == "object" { collect(items, path: key + ".[]", into: &types) }
            }
        }
    }

    /// The differences from another shape of the same class, one line each (empty when equal).
    public func differences(from other: SchemaShape) -> [String] {
        var lines = [String]()
        for key in Set(types.keys).union(other.types.keys).sorted() where types[key] != other.types[key] {
            lines.append("'\(className).\(key)' is \(other.types[key] ?? "absent") on the client but "
                + "\(types[key] ?? "absent") on the server")
        }
        return lines
    }

    /// Why a stored document does not fit the schema, or nil when it does. Properties the
    /// schema does not know are left alone (a column added with SQL, a schema that grew).
    public func problem(inDocument document: [String: JSONValue]) -> String? {
        for (key, value) in document.sorted(by: { $0.key < $1.key }) where types[key] != nil {
            if let problem = mismatch(value, at: key) { return problem }
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
            fits = value["$oid"]?.stringValue.map { $0.utf8.count == 24 && $0.allSatisfy(\.isHexDigit) } ?? false
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
            for item in items { if let problem = mismatch(item, at: path + ".[]") { return problem } }
            return nil
        case "object":
            guard let object = value.objectValue else { return "'\(className).\(path)' must be a document" }
            if types[path + ".{}"] != nil {
                for (key, item) in object.sorted(by: { $0.key < $1.key }) {
                    if let problem = mismatch(item, at: path + ".{}") { return problem + " (key '\(key)')" }
                }
                return nil
            }
            let isMixedMap = !types.keys.contains { $0.hasPrefix(path + ".") }
            if isMixedMap { return nil }
            for (key, item) in object.sorted(by: { $0.key < $1.key }) {
                if let problem = mismatch(item, at: path + "." + key) { return problem }
            }
            return nil
        default: fits = true
        }
        return fits ? nil : "'\(className).\(path)' is \(type), not \(value.jsonText)"
    }
}

/// A schema that cannot be read.
public struct SchemaShapeError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

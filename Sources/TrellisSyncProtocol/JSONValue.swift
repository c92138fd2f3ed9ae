import Foundation

/// A JSON value, as it travels in frames and is stored in PostgreSQL's `jsonb`: documents are
/// canonical Extended JSON (`{"$oid": …}`, `{"$numberLong": "…"}`), plain numbers are accepted
/// (a row written with SQL).
public enum JSONValue: Codable, Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // The most frequent kinds first: every failed attempt costs a thrown error.
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([String: JSONValue].self) { self = .object(value) }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .int(value) }
        else if let value = try? container.decode(Double.self) { self = .double(value) }
        else { self = .array(try container.decode([JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as Foundation's JSON objects (what `JSONSerialization` and Trellis's
    /// `ExtendedJSON` use).
    public var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): NSNumber(value: value)
        case .int(let value): NSNumber(value: value)
        case .double(let value): NSNumber(value: value)
        case .string(let value): value
        case .array(let value): value.map(\.foundationObject)
        case .object(let value): value.mapValues(\.foundationObject)
        }
    }

    /// A Foundation JSON object as a value.
    public init(foundationObject object: Any) {
        switch object {
        case let string as String: self = .string(string)
        case let number as NSNumber:
            let type = String(cString: number.objCType)
            if type == "c" || type == "B" { self = .bool(number.boolValue) }
            else if type == "d" || type == "f" { self = .double(number.doubleValue) }
            else { self = .int(number.int64Value) }
        case let array as [Any]: self = .array(array.map(JSONValue.init(foundationObject:)))
        case let dictionary as [String: Any]: self = .object(dictionary.mapValues(JSONValue.init(foundationObject:)))
        default: self = .null
        }
    }

    /// Compact JSON text with sorted keys (the form compared and stored).
    public var jsonText: String { JSONText.write(self) }

    /// Parses JSON text.
    public init(jsonText: String) throws {
        self = try JSONText.parse(jsonText)
    }

    /// Parses JSON text given as UTF-8 bytes.
    public init(jsonBytes: some Collection<UInt8>) throws {
        self = try JSONText.parse(jsonBytes)
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
}

/// Encodes and decodes frames: uploads and downloads (the frames that carry documents) by
/// hand (written straight to text: ``SyncMessage/frameText``; read through ``JSONValue``:
/// ``SyncMessage/fastJSON``), the others with `Codable`; the JSON is the same either way.
public enum SyncCoding {
    public static func encode(_ message: SyncMessage) -> String {
        if let text = message.frameText { return text }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(message), as: UTF8.self)) ?? "{}"
    }

    public static func decode(_ text: String) throws -> SyncMessage {
        var text = text
        // An upload read straight into its changes; any other frame, or an upload not in the
        // form that reader takes, the general way (which reports what is wrong with it).
        if let upload = text.withUTF8({ JSONText.parseUpload($0) }) { return .upload(upload) }
        if let message = try SyncMessage(fastJSON: try JSONValue(jsonText: text)) { return message }
        return try JSONDecoder().decode(SyncMessage.self, from: Data(text.utf8))
    }

    /// With `Codable` only (what the hand-written coding is checked against).
    public static func encodeWithCodable(_ message: SyncMessage) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(message), as: UTF8.self)) ?? "{}"
    }

    public static func decodeWithCodable(_ text: String) throws -> SyncMessage {
        try JSONDecoder().decode(SyncMessage.self, from: Data(text.utf8))
    }
}

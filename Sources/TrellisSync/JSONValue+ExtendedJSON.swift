import Foundation
import Trellis
import TrellisSyncProtocol

/// The conversions between the frames' ``JSONValue`` and the Foundation objects of Trellis's
/// `ExtendedJSON`, done directly: a local change is recorded without writing its document as
/// JSON text and parsing it back, and a download is decoded without Foundation's bridging.
extension JSONValue {
    /// A document of `ExtendedJSON.documentValue(for:)`, which holds strings, booleans,
    /// `NSNull`, arrays and documents only (every number is a wrapped string, such as
    /// `{"$numberLong": "5"}`): the same value as its JSON text parsed, without the text.
    package init(extendedJSON value: Any) {
        if let string = value as? String {
            self = .string(string)
        } else if type(of: value) == Bool.self, let bool = value as? Bool {
            // A Swift `Bool` only: an `NSNumber` 1 would cast to `true` too.
            self = .bool(bool)
        } else if let document = value as? [String: Any] {
            self = .object(document.mapValues(JSONValue.init(extendedJSON:)))
        } else if let array = value as? [Any] {
            self = .array(array.map(JSONValue.init(extendedJSON:)))
        } else {
            // NSNull, or what `documentValue` does not make: as its JSON text would read.
            self = JSONValue(foundationObject: value)
        }
    }

    /// The value as `ExtendedJSON`'s decoder reads it: as ``foundationObject``, but a boolean
    /// is a Swift `Bool` (no `NSNumber` to bridge back).
    var decodableObject: Any {
        switch self {
        case .bool(let value): value
        case .string(let value): value
        case .object(let value): value.mapValues(\.decodableObject)
        case .array(let value): value.map(\.decodableObject)
        case .null, .int, .double: foundationObject
        }
    }
}

/// Downloaded documents are written into their objects' rows from these values directly
/// (`DocumentRowWriter`).
extension JSONValue: DocumentNode {
    package var isNull: Bool { if case .null = self { true } else { false } }
    package var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    package var int64Value: Int64? { if case .int(let value) = self { value } else { nil } }
    package var doubleValue: Double? {
        switch self {
        case .double(let value): value
        case .int(let value): Double(value)
        default: nil
        }
    }
    package var foundationValue: Any { decodableObject }

    /// The wrapper's text without a hashed lookup when the document has one member (every
    /// Extended JSON wrapper): that member's name compared with `key`.
    package func wrapped(_ key: String) -> String? {
        guard case .object(let members) = self else { return nil }
        let member: JSONValue?
        if members.count == 1, let only = members.first {
            member = only.key == key ? only.value : nil
        } else {
            member = members[key]
        }
        guard case .string(let text)? = member else { return nil }
        return text
    }
}

/// A local change's document is read from the object's row into these values directly
/// (`DocumentRowReader`).
extension JSONValue: DocumentBuilding {}


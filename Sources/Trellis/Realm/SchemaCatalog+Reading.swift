/// Reading a stored catalog without `JSONDecoder`: every open reads the catalog, and on Linux
/// Foundation's decoder spent ~12M instructions on a 50-class one (most of it looking up the
/// runtime types and conformances of each value it decodes), a fifth of such an open.
///
/// Reads what ``SchemaCatalog/encoded()`` writes, with its rules: keys in any order, unknown keys
/// skipped, optional members absent or null. Anything else it does not expect (a duplicated key,
/// a number with a fraction or exponent, a value out of its type's range, a member of the wrong
/// type) gives nil, and ``SchemaCatalog/decode(_:)`` asks `JSONDecoder`, whose answer stands.
extension SchemaCatalog {
    static func read(_ bytes: UnsafeRawBufferPointer) -> SchemaCatalog? {
        var reader = CatalogJSONReader(bytes)
        guard let value = reader.value(), reader.atEnd, let top = value.members else { return nil }
        var catalog = SchemaCatalog()
        guard let format = top["format"]?.int(as: Int.self),
              let schemaVersion = top["schemaVersion"]?.int(as: UInt64.self),
              let nextTableId = top["nextTableId"]?.int(as: UInt32.self),
              let classes = top["classes"]?.elements,
              let columnShift = top.optional("columnShift", { $0.int(as: Int.self) })
        else { return nil }
        catalog.format = format
        catalog.columnShift = columnShift
        catalog.schemaVersion = schemaVersion
        catalog.nextTableId = nextTableId
        catalog.classes = []
        catalog.classes.reserveCapacity(classes.count)
        for value in classes {
            guard let stored = storedClass(value) else { return nil }
            catalog.classes.append(stored)
        }
        return catalog
    }

    private static func storedClass(_ value: CatalogJSON) -> StoredClass? {
        guard let members = value.members,
              let name = members["name"]?.string,
              let tableId = members["tableId"]?.int(as: UInt32.self),
              let embedded = members["embedded"]?.bool,
              let properties = members["properties"].flatMap(storedProperties),
              let computed = members["computed"].flatMap(storedProperties),
              let swiftType = members.optional("swiftType", \.string)
        else { return nil }
        return StoredClass(name: name, tableId: tableId, embedded: embedded, properties: properties,
                           computed: computed, swiftType: swiftType)
    }

    /// The properties of an array, or nil when it is not one or one of them does not read.
    private static func storedProperties(_ value: CatalogJSON) -> [StoredProperty]? {
        guard let elements = value.elements else { return nil }
        var properties = [StoredProperty]()
        properties.reserveCapacity(elements.count)
        for element in elements {
            guard let property = storedProperty(element) else { return nil }
            properties.append(property)
        }
        return properties
    }

    private static func storedProperty(_ value: CatalogJSON) -> StoredProperty? {
        guard let members = value.members,
              let name = members["name"]?.string,
              let type = members["type"]?.int(as: Int.self),
              let optional = members["optional"]?.bool,
              let collectionText = members["collection"]?.string,
              let collection = CollectionKind(rawValue: collectionText),
              let primary = members["primary"]?.bool,
              let indexed = members["indexed"]?.bool,
              let target = members.optional("target", \.string),
              let origin = members.optional("origin", \.string),
              let onDelete = members.optional("onDelete", \.string)
        else { return nil }
        return StoredProperty(name: name, type: type, optional: optional, collection: collection, target: target,
                              primary: primary, indexed: indexed, origin: origin, onDelete: onDelete)
    }
}

/// A JSON value of a stored catalog.
enum CatalogJSON {
    case object(CatalogMembers)
    case array([CatalogJSON])
    case string(String)
    /// An integer, as its text (`-`? digits): converted to the member's type when read.
    case integer(String)
    case bool(Bool)
    case null

    var members: CatalogMembers? { if case .object(let members) = self { members } else { nil } }
    var elements: [CatalogJSON]? { if case .array(let elements) = self { elements } else { nil } }
    var string: String? { if case .string(let text) = self { text } else { nil } }
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }

    /// The integer, if it is one and `T` holds it.
    func int<T: FixedWidthInteger>(as _: T.Type) -> T? {
        guard case .integer(let text) = self else { return nil }
        return T(text)
    }
}

/// An object's members, in order (a catalog object has a handful: a linear search is fastest).
struct CatalogMembers {
    var pairs: [(key: String, value: CatalogJSON)] = []

    subscript(key: String) -> CatalogJSON? { pairs.first { $0.key == key }?.value }

    /// An optional member: `.some(nil)` when absent or null, `.some(value)` when `read` takes
    /// it, nil (not readable) when it is of another type.
    func optional<T>(_ key: String, _ read: (CatalogJSON) -> T?) -> T?? {
        guard let value = self[key] else { return .some(nil) }
        if case .null = value { return .some(nil) }
        guard let read = read(value) else { return nil }
        return .some(read)
    }
}

/// A strict reader of the JSON `JSONEncoder` writes (no comments, no trailing commas).
struct CatalogJSONReader {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool {
        mutating get {
            skipSpace()
            return position == bytes.count
        }
    }

    private mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func take(word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return false }
        position += count
        return true
    }

    /// The next value, or nil where the text is not one.
    mutating func value() -> CatalogJSON? {
        skipSpace()
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(CatalogJSON.string)
        case UInt8(ascii: "t"): return take(word: "true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return take(word: "false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return take(word: "null") ? .null : nil
        default: return integer()
        }
    }

    private mutating func object() -> CatalogJSON? {
        position += 1
        var members = CatalogMembers()
        if take(UInt8(ascii: "}")) { return .object(members) }
        repeat {
            skipSpace()
            guard let key = string(), take(UInt8(ascii: ":")), let value = value(),
                  members[key] == nil  // a duplicated key: JSONDecoder's rule decides
            else { return nil }
            members.pairs.append((key, value))
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? .object(members) : nil
    }

    private mutating func array() -> CatalogJSON? {
        position += 1
        var elements = [CatalogJSON]()
        if take(UInt8(ascii: "]")) { return .array(elements) }
        repeat {
            guard let element = value() else { return nil }
            elements.append(element)
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) ? .array(elements) : nil
    }

    private mutating func integer() -> CatalogJSON? {
        let start = position
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let digitsStart = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
        // No digits, or a leading zero before more digits (not JSON).
        guard position > digitsStart, bytes[digitsStart] != UInt8(ascii: "0") || position == digitsStart + 1 else {
            return nil
        }
        // A fraction or an exponent: not an integer this reader takes.
        if position < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) {
            return nil
        }
        return .integer(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
    }

    /// A string at `position` (its opening quote), unescaped; nil for malformed text.
    private mutating func string() -> String? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        position += 1
        let start = position
        // The common case: no escape. The bytes between the quotes are the string (valid UTF-8
        // is checked by `String(validating:)`).
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\"),
              bytes[position] >= 0x20
        {
            position += 1
        }
        guard position < bytes.count else { return nil }
        if bytes[position] == UInt8(ascii: "\"") {
            let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            position += 1
            return text
        }
        var unescaped = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: unescaped, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { return nil }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escaped)
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    unescaped.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
            case 0..<0x20:
                return nil  // a control character must be escaped
            default:
                unescaped.append(byte)
            }
        }
        return nil
    }

    /// The scalar of `\uXXXX` (after the `u`), a surrogate pair taken whole.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let first = hexQuad() else { return nil }
        if (0xD800..<0xDC00).contains(first) {
            guard take(word: "\\u"), let second = hexQuad(), (0xDC00..<0xE000).contains(second) else { return nil }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
        }
        return Unicode.Scalar(first)
    }

    private mutating func hexQuad() -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = bytes[position].hexValue else { return nil }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}

private extension UInt8 {
    /// The value of a hexadecimal digit.
    var hexValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension SchemaCatalog.StoredProperty {
    /// A property as a stored catalog lists it.
    init(name: String, type: Int, optional: Bool, collection: CollectionKind, target: String?, primary: Bool,
         indexed: Bool, origin: String?, onDelete: String?)
    {
        self.name = name
        self.type = type
        self.optional = optional
        self.collection = collection
        self.target = target
        self.primary = primary
        self.indexed = indexed
        self.origin = origin
        self.onDelete = onDelete
    }
}

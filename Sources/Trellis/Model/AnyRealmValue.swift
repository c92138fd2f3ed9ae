import Foundation

/// A property that may hold a value of any supported type, or a link to any object (Realm's
/// "mixed"). `.none` is its nil; the property itself is never optional.
public enum AnyRealmValue: Hashable {
    case none
    case int(Int)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case object(Object)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    case uuid(UUID)

    /// `.none`.
    public init() { self = .none }

    /// The value if it is an integer, else nil.
    public var intValue: Int? { if case .int(let v) = self { v } else { nil } }
    /// The value if it is a Bool, else nil.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The value if it is a Float, else nil.
    public var floatValue: Float? { if case .float(let v) = self { v } else { nil } }
    /// The value if it is a Double, else nil.
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    /// The value if it is a string, else nil.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    /// The value if it is Data, else nil.
    public var dataValue: Data? { if case .data(let v) = self { v } else { nil } }
    /// The value if it is a date, else nil.
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    /// The value if it is an ObjectId, else nil.
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { v } else { nil } }
    /// The value if it is a Decimal128, else nil.
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { v } else { nil } }
    /// The value if it is a UUID, else nil.
    public var uuidValue: UUID? { if case .uuid(let v) = self { v } else { nil } }

    /// The linked object as `T`, or nil.
    public func object<T: Object>(_ objectType: T.Type) -> T? {
        if case .object(let object) = self { return object as? T }
        return nil
    }
}

// MARK: - Stored form of the values that are not objects

extension AnyRealmValue {
    /// The value of a stored scalar; nil for a link (reading one needs the Realm).
    init?(scalar mixed: MixedValue) {
        switch mixed {
        case .int(let v): self = .int(Int(v))
        case .bool(let v): self = .bool(v)
        case .float(let v): self = .float(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .data(let v): self = .data(v)
        case .date(let v): self = .date(v)
        case .objectId(let v): self = .objectId(v)
        case .decimal(let v): self = .decimal128(v)
        case .uuid(let v): self = .uuid(v)
        case .link: return nil
        }
    }

    /// The stored form of a scalar; nil for `.none` and `.object` (a link needs the Realm).
    var storedScalar: MixedValue? {
        switch self {
        case .none, .object: nil
        case .int(let v): .int(Int64(v))
        case .bool(let v): .bool(v)
        case .float(let v): .float(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .data(let v): .data(v)
        case .date(let v): .date(v)
        case .objectId(let v): .objectId(v)
        case .decimal128(let v): .decimal(v)
        case .uuid(let v): .uuid(v)
        }
    }

    /// The Swift value inside (an `Object` for `.object`); nil for `.none`.
    var swiftValue: Any? {
        switch self {
        case .none: nil
        case .int(let v): v
        case .bool(let v): v
        case .float(let v): v
        case .double(let v): v
        case .string(let v): v
        case .data(let v): v
        case .date(let v): v
        case .object(let v): v
        case .objectId(let v): v
        case .decimal128(let v): v
        case .uuid(let v): v
        }
    }
}

extension AnyRealmValue: _PersistableInsideOptional {
    public static var _trellisTypeInfo: _PropertyTypeInfo {
        var info = _PropertyTypeInfo(.any, swiftName: "AnyRealmValue")
        info.forbidsOptional = true
        return info
    }

    public static func _trellisDefaultValue() -> AnyRealmValue { .none }

    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> AnyRealmValue {
        guard let mixed = row.row.mixed(column) else { return .none }
        if let scalar = AnyRealmValue(scalar: mixed) { return scalar }
        guard case .link(let tableId, let key) = mixed, let table = row.core.table(id: tableId),
              row.core.rowView(table, key) != nil,
              let object = row.core.accessor(table.info.objectType, table: table, key: key) as? Object
        else { return .none }
        return .object(object)
    }

    public static func _trellisEncode(_ value: AnyRealmValue, _ context: _EncodingContext) -> _StoredValue {
        if let scalar = value.storedScalar { return _StoredValue(.mixed(scalar)) }
        guard case .object(let object) = value else { return _StoredValue(.null) }
        let key = context.session.linkTarget(object)
        // The target may only be queued (its row written later in the same add): its table is
        // known from its class.
        guard let table = object._managed?.table ?? context.core.table(for: type(of: object), create: true)
        else { return _StoredValue(.null) }
        return _StoredValue(.mixed(.link(tableId: table.tableId, key: key)))
    }
}

/// The byte form of a mixed value: a tag byte, then the payload.
enum MixedCoding {
    static func encode(_ value: MixedValue) -> [UInt8] {
        func bytes<T>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
        switch value {
        case .int(let v): return [1] + bytes(v)
        case .bool(let v): return [2, v ? 1 : 0]
        case .float(let v): return [3] + bytes(v.bitPattern)
        case .double(let v): return [4] + bytes(v.bitPattern)
        case .string(let v): return [5] + Array(v.utf8)
        case .data(let v): return [6] + [UInt8](v)
        case .date(let v): return [7] + bytes(v.timeIntervalSinceReferenceDate.bitPattern)
        case .objectId(let v): return [8] + v.byteArray
        case .decimal(let v): return [9] + Array(v.stringValue.utf8)
        case .uuid(let v): return [10] + bytes(v.uuid)
        case .link(let tableId, let key): return [11] + bytes(tableId) + bytes(key)
        }
    }

    static func decode(_ raw: UnsafeRawBufferPointer) -> MixedValue? {
        guard let tag = raw.first else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: raw[1...])
        func load<T: FixedWidthInteger>(_: T.Type, at offset: Int = 0) -> T? {
            body.count >= offset + MemoryLayout<T>.size ? body.loadUnaligned(fromByteOffset: offset, as: T.self) : nil
        }
        switch tag {
        case 1: return load(Int64.self).map { .int($0) }
        case 2: return .bool(body.first == 1)
        case 3: return load(UInt32.self).map { .float(Float(bitPattern: $0)) }
        case 4: return load(UInt64.self).map { .double(Double(bitPattern: $0)) }
        case 5: return .string(String(decoding: body, as: UTF8.self))
        case 6: return .data(Data(body))
        case 7: return load(UInt64.self).map { .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0))) }
        case 8: return ObjectId(bytes: body).map { .objectId($0) }
        case 9: return Decimal(string: String(decoding: body, as: UTF8.self)).map { .decimal(Decimal128($0)) }
        case 10:
            guard body.count == 16 else { return nil }
            var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: body) }
            return .uuid(UUID(uuid: raw))
        case 11:
            guard let tableId = load(UInt32.self), let key = load(UInt64.self, at: 4) else { return nil }
            return .link(tableId: tableId, key: key)
        default: return nil
        }
    }
}

/// Upload frames read straight into their changes, with no ``JSONValue`` tree for the frame,
/// its changes and their field changes (session 38: the server parsed each upload into
/// dictionaries it only walked once and released, a dictionary per change and two per field
/// change). The values inside (primary keys, field values) are read as ``JSONValue``s as before.
///
/// Only the form uploads are written in is read here: each key once, no key the upload does not
/// have, each member of the kind it must be. Anything else (a syntax error, a duplicate or
/// unknown key, a missing field) gives nil, and the frame is read the general way, which reads
/// it as before and reports the same errors.
extension JSONText {
    static func parseUpload(_ bytes: UnsafeBufferPointer<UInt8>) -> SyncMessage.Upload? {
        var reader = UploadFrameReader(parser: Parser(bytes: bytes))
        return try? reader.frame()
    }
}

private struct UploadFrameReader {
    var parser: JSONText.Parser

    /// Not the form this reader takes: the general reader reads the frame.
    struct Unexpected: Error {}

    private var bytes: UnsafeBufferPointer<UInt8> { parser.bytes }

    /// Skips white space and takes `byte` if it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        parser.skipSpace()
        guard parser.position < bytes.count, bytes[parser.position] == byte else { return false }
        parser.position += 1
        return true
    }

    mutating func expect(_ byte: UInt8) throws {
        guard take(byte) else { throw Unexpected() }
    }

    /// The members of an object, calling `member` with each key (positioned at its value).
    mutating func members(_ member: (inout UploadFrameReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if take(UInt8(ascii: "}")) { return }
        repeat {
            parser.skipSpace()
            guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: "\"") else { throw Unexpected() }
            let key = try parser.string()
            try expect(UInt8(ascii: ":"))
            try member(&self, key)
        } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    /// An array whose members `element` reads (the changes of an upload, the field changes of a change).
    mutating func list<Element>(_ element: (inout UploadFrameReader) throws -> Element) throws -> [Element] {
        var items = [Element]()
        try expect(UInt8(ascii: "["))
        if take(UInt8(ascii: "]")) { return items }
        repeat { items.append(try element(&self)) } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
        return items
    }

    mutating func value(depth: Int) throws -> JSONValue { try parser.value(depth: depth) }

    mutating func string(depth: Int) throws -> String {
        guard case .string(let text) = try value(depth: depth) else { throw Unexpected() }
        return text
    }

    mutating func array(depth: Int) throws -> [JSONValue] {
        guard case .array(let items) = try value(depth: depth) else { throw Unexpected() }
        return items
    }

    /// `{"upload": {"_0": {…}}}` and nothing after it.
    mutating func frame() throws -> SyncMessage.Upload {
        var upload: SyncMessage.Upload?
        try members { reader, key in
            guard key == "upload", upload == nil else { throw Unexpected() }
            var body: SyncMessage.Upload?
            try reader.members { reader, key in
                guard key == "_0", body == nil else { throw Unexpected() }
                body = try reader.upload(depth: 2)
            }
            guard let body else { throw Unexpected() }
            upload = body
        }
        parser.skipSpace()
        guard let upload, parser.position == bytes.count else { throw Unexpected() }
        return upload
    }

    mutating func upload(depth: Int) throws -> SyncMessage.Upload {
        var uploadId: Int64?, firstChangeId: Int64??, changes: [SyncObjectChange]?
        try members { reader, key in
            switch key {
            case "uploadId" where uploadId == nil:
                guard case .int(let number) = try reader.value(depth: depth + 1) else { throw Unexpected() }
                uploadId = number
            case "firstChangeId" where firstChangeId == nil:
                switch try reader.value(depth: depth + 1) {
                case .int(let number): firstChangeId = .some(number)
                case .null: firstChangeId = .some(nil)
                default: throw Unexpected()
                }
            case "changes" where changes == nil:
                changes = try reader.list { reader in try reader.change(depth: depth + 2) }
            default:
                throw Unexpected()
            }
        }
        guard let uploadId, let changes else { throw Unexpected() }
        return SyncMessage.Upload(uploadId: uploadId, firstChangeId: firstChangeId ?? nil, changes: changes)
    }

    mutating func change(depth: Int) throws -> SyncObjectChange {
        var className: String?, primaryKey: JSONValue?, kind: SyncObjectChange.Kind?, timestamp: String?
        var fields: [FieldChange]?, defaultFields: [String]??
        try members { reader, key in
            switch key {
            case "className" where className == nil: className = try reader.string(depth: depth + 1)
            case "primaryKey" where primaryKey == nil: primaryKey = try reader.value(depth: depth + 1)
            case "kind" where kind == nil:
                guard let known = SyncObjectChange.Kind(rawValue: try reader.string(depth: depth + 1)) else {
                    throw Unexpected()
                }
                kind = known
            case "timestamp" where timestamp == nil: timestamp = try reader.string(depth: depth + 1)
            case "defaultFields" where defaultFields == nil:
                switch try reader.value(depth: depth + 1) {
                case .null: defaultFields = .some(nil)
                case .array(let items):
                    defaultFields = .some(try items.map { item in
                        guard case .string(let name) = item else { throw Unexpected() }
                        return name
                    })
                default: throw Unexpected()
                }
            case "fields" where fields == nil:
                fields = try reader.list { reader in try reader.field(depth: depth + 2) }
            default:
                throw Unexpected()
            }
        }
        guard let className, let primaryKey, let kind, let timestamp, let fields else { throw Unexpected() }
        return SyncObjectChange(className: className, primaryKey: primaryKey, kind: kind, timestamp: timestamp,
                                fields: fields, defaultFields: defaultFields ?? nil)
    }

    /// `{"set": {"name": …, "value": …}}` and the other kinds, one key.
    mutating func field(depth: Int) throws -> FieldChange {
        var result: FieldChange?
        try members { reader, kind in
            guard result == nil else { throw Unexpected() }
            var name: String?, first: JSONValue?, second: JSONValue?
            // The kind's two members besides the name, in sorted order.
            let keys: (String, String)
            switch kind {
            case "set": keys = ("value", "")
            case "list": keys = ("base", "value")
            case "setDiff": keys = ("added", "removed")
            case "map": keys = ("values", "")
            default: throw Unexpected()
            }
            try reader.members { reader, key in
                if key == "name", name == nil { name = try reader.string(depth: depth + 2) }
                else if key == keys.0, first == nil { first = try reader.value(depth: depth + 2) }
                else if key == keys.1, second == nil { second = try reader.value(depth: depth + 2) }
                else { throw Unexpected() }
            }
            guard let name, let first else { throw Unexpected() }
            switch (kind, first, second) {
            case ("set", _, nil): result = .set(name: name, value: first)
            case ("list", .array(let base), .array(let value)?): result = .list(name: name, base: base, value: value)
            case ("setDiff", .array(let added), .array(let removed)?):
                result = .setDiff(name: name, added: added, removed: removed)
            case ("map", .object(let values), nil): result = .map(name: name, values: values.mapValues { $0 == .null ? nil : $0 })
            default: throw Unexpected()
            }
        }
        guard let result else { throw Unexpected() }
        return result
    }
}

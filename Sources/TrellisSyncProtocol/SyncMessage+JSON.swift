import Foundation

/// The frames that carry documents (uploads and downloads) and the outbox entries, to and
/// from ``JSONValue`` by hand, in exactly the shape Swift's synthesized `Codable` gives them
/// (so either side may use either coder), without `Codable`'s cost per value
/// (`SyncCodingTests` checks both give the same JSON for random messages).
extension SyncMessage {
    /// The frame as JSON when it is an upload or a download (nil: use `Codable`).
    var fastJSON: JSONValue? {
        switch self {
        case .upload(let upload): .object(["upload": .object(["_0": upload.json])])
        case .download(let download): .object(["download": .object(["_0": download.json])])
        default: nil
        }
    }

    /// An upload or download frame read from JSON (nil: another kind of frame, use `Codable`).
    init?(fastJSON json: JSONValue) throws {
        guard case .object(let frame) = json, frame.count == 1, let (kind, body) = frame.first,
              kind == "upload" || kind == "download" else { return nil }
        let payload = try JSONReading.field(body, "_0")
        self = kind == "upload" ? .upload(try Upload(json: payload)) : .download(try Download(json: payload))
    }
}

extension SyncMessage.Upload {
    var json: JSONValue {
        var object: [String: JSONValue] = ["uploadId": .int(uploadId), "changes": .array(changes.map(\.json))]
        if let firstChangeId { object["firstChangeId"] = .int(firstChangeId) }
        return .object(object)
    }

    init(json: JSONValue) throws {
        self.init(uploadId: try JSONReading.int(json, "uploadId"),
                  firstChangeId: try JSONReading.optionalInt(json, "firstChangeId"),
                  changes: try JSONReading.array(json, "changes").map(SyncObjectChange.init(json:)))
    }
}

extension SyncMessage.Download {
    var json: JSONValue {
        var object: [String: JSONValue] = ["changes": .array(changes.map(\.json)), "serverVersion": .int(serverVersion),
                                           "hasMore": .bool(hasMore)]
        if let completesSubscriptionVersion { object["completesSubscriptionVersion"] = .int(completesSubscriptionVersion) }
        return .object(object)
    }

    init(json: JSONValue) throws {
        self.init(changes: try JSONReading.array(json, "changes").map(ServerChange.init(json:)),
                  serverVersion: try JSONReading.int(json, "serverVersion"),
                  completesSubscriptionVersion: try JSONReading.optionalInt(json, "completesSubscriptionVersion"),
                  hasMore: try JSONReading.bool(json, "hasMore"))
    }
}

extension ServerChange {
    var json: JSONValue {
        var object: [String: JSONValue] = ["className": .string(className), "primaryKey": primaryKey,
                                           "serverVersion": .int(serverVersion)]
        if let document { object["document"] = document }
        if let timestamp { object["timestamp"] = .string(timestamp) }
        return .object(object)
    }

    init(json: JSONValue) throws {
        let document = json["document"]
        self.init(className: try JSONReading.string(json, "className"), primaryKey: try JSONReading.field(json, "primaryKey"),
                  document: document == .null ? nil : document, serverVersion: try JSONReading.int(json, "serverVersion"),
                  timestamp: try JSONReading.optionalString(json, "timestamp"))
    }
}

extension SyncObjectChange {
    var json: JSONValue {
        var object: [String: JSONValue] = ["className": .string(className), "primaryKey": primaryKey,
                                           "kind": .string(kind.rawValue), "timestamp": .string(timestamp),
                                           "fields": .array(fields.map(\.json))]
        if let defaultFields { object["defaultFields"] = .array(defaultFields.map(JSONValue.string)) }
        return .object(object)
    }

    init(json: JSONValue) throws {
        let kindText = try JSONReading.string(json, "kind")
        guard let kind = Kind(rawValue: kindText) else { throw JSONReading.Failure("unknown change kind '\(kindText)'") }
        var defaults: [String]?
        if let list = json["defaultFields"], list != .null {
            guard case .array(let items) = list else { throw JSONReading.Failure("'defaultFields' is not an array") }
            defaults = try items.map { item in
                guard case .string(let name) = item else { throw JSONReading.Failure("'defaultFields' holds a non-string") }
                return name
            }
        }
        self.init(className: try JSONReading.string(json, "className"), primaryKey: try JSONReading.field(json, "primaryKey"),
                  kind: kind, timestamp: try JSONReading.string(json, "timestamp"),
                  fields: try JSONReading.array(json, "fields").map(FieldChange.init(json:)), defaultFields: defaults)
    }

    /// The change as compact JSON text (the outbox's form).
    public var jsonText: String {
        var out = [UInt8]()
        out.reserveCapacity(256)
        FrameWriter.write(self, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// A change read from JSON text (written by ``jsonText`` or by `JSONEncoder`).
    public init(jsonBytes: some Collection<UInt8>) throws {
        try self.init(json: try JSONValue(jsonBytes: jsonBytes))
    }
}

extension FieldChange {
    var json: JSONValue {
        switch self {
        case .set(let name, let value):
            .object(["set": .object(["name": .string(name), "value": value])])
        case .list(let name, let base, let value):
            .object(["list": .object(["name": .string(name), "base": .array(base), "value": .array(value)])])
        case .setDiff(let name, let added, let removed):
            .object(["setDiff": .object(["name": .string(name), "added": .array(added), "removed": .array(removed)])])
        case .map(let name, let values):
            .object(["map": .object(["name": .string(name), "values": .object(values.mapValues { $0 ?? .null })])])
        }
    }

    init(json: JSONValue) throws {
        guard case .object(let wrapper) = json, wrapper.count == 1, let (kind, body) = wrapper.first else {
            throw JSONReading.Failure("a field change is not an object with one key")
        }
        let name = try JSONReading.string(body, "name")
        switch kind {
        case "set": self = .set(name: name, value: try JSONReading.field(body, "value"))
        case "list": self = .list(name: name, base: try JSONReading.array(body, "base"), value: try JSONReading.array(body, "value"))
        case "setDiff":
            self = .setDiff(name: name, added: try JSONReading.array(body, "added"), removed: try JSONReading.array(body, "removed"))
        case "map":
            guard case .object(let values)? = body["values"] else { throw JSONReading.Failure("'values' is not an object") }
            // As `Codable` reads `[String: JSONValue?]`: null is a removed key.
            self = .map(name: name, values: values.mapValues { $0 == .null ? nil : $0 })
        default: throw JSONReading.Failure("unknown field change '\(kind)'")
        }
    }
}

/// Reading the fields of a JSON object, with errors that name the field.
enum JSONReading {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func field(_ json: JSONValue, _ key: String) throws -> JSONValue {
        guard case .object(let object) = json else { throw Failure("expected an object holding '\(key)'") }
        guard let value = object[key] else { throw Failure("'\(key)' is missing") }
        return value
    }

    static func string(_ json: JSONValue, _ key: String) throws -> String {
        guard case .string(let text) = try field(json, key) else { throw Failure("'\(key)' is not a string") }
        return text
    }

    static func optionalString(_ json: JSONValue, _ key: String) throws -> String? {
        switch json[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw Failure("'\(key)' is not a string")
        }
    }

    static func int(_ json: JSONValue, _ key: String) throws -> Int64 {
        guard let value = try optionalInt(json, key) else { throw Failure("'\(key)' is missing") }
        return value
    }

    static func optionalInt(_ json: JSONValue, _ key: String) throws -> Int64? {
        switch json[key] {
        case nil, .null?: return nil
        case .int(let value)?: return value
        default: throw Failure("'\(key)' is not an integer")
        }
    }

    static func bool(_ json: JSONValue, _ key: String) throws -> Bool {
        guard case .bool(let flag) = try field(json, key) else { throw Failure("'\(key)' is not a boolean") }
        return flag
    }

    static func array(_ json: JSONValue, _ key: String) throws -> [JSONValue] {
        guard case .array(let items) = try field(json, key) else { throw Failure("'\(key)' is not an array") }
        return items
    }
}

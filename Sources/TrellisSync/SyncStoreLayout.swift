import Foundation
import Trellis
import TrellisSyncProtocol

/// The keys of the client's sync state in the Realm file (an LMDB database of its own,
/// written in the same transactions as the objects):
///
/// - `meta/…`: client id, newest server version applied, clock, next outbox number,
///   subscription set and the version of it the server completed, the last set completed
///   and the last refused, the server's identity (`serverEpoch`).
/// - `o/<seq u64 BE>`: the outbox, one uploaded ``SyncObjectChange`` per changed object per commit.
/// - `m/<class>\0<object key u64 BE>`: the mirror, each synced object's document as of the
///   last commit (local or downloaded): local changes are diffs against it, and it maps a
///   deleted object's key to its primary key.
/// - `u/<target length u32 BE><target><class>\0<object key u64 BE>` (empty value): the object
///   `<class>`/`<object key>` has a link to `<target>` (``ExtendedJSONBatchDecoder/linkTargetIdentity(className:primaryKey:)``),
///   which the file did not have when the object was downloaded; when it arrives the link is set
///   from the object's mirror.
/// - `r/<class>\0<object key u64 BE><target>` (empty value): the same records by linking
///   object, so they go with the object (deleted, out of the subscriptions) or with its link
///   (the server's document names another object).
enum SyncStoreLayout {
    static let clientId = key("meta/clientId")
    static let lastServerVersion = key("meta/lastServerVersion")
    static let clock = key("meta/clock")
    static let nextSequence = key("meta/nextSequence")
    static let subscriptions = key("meta/subscriptions")
    static let completedSubscriptions = key("meta/completedSubscriptions")
    /// The last set the server completed (what it serves after refusing a newer one).
    static let activeSubscriptions = key("meta/activeSubscriptions")
    /// `<version>\n<message>`: the newest set the server refused, and why.
    static let refusedSubscriptions = key("meta/refusedSubscriptions")
    /// The identity of the server history the file synced with (the welcome's `serverEpoch`).
    static let serverEpoch = key("meta/serverEpoch")
    static let outboxPrefix = key("o/")
    static let mirrorPrefix = key("m/")
    static let unresolvedPrefix = key("u/")
    static let unresolvedBySourcePrefix = key("r/")

    static func key(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func outbox(_ sequence: UInt64) -> [UInt8] { outboxPrefix + bigEndian(sequence) }

    static func sequence(ofOutbox key: [UInt8]) -> UInt64 {
        key.suffix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// An outbox entry's value: `<class>\0<primary key JSON>\0<change JSON>`, so the objects
    /// with pending changes are known without decoding the changes.
    static func putOutbox(_ realm: Realm, _ sequence: UInt64, _ change: SyncObjectChange) throws {
        let head = Array((change.className + "\u{0}" + change.primaryKey.jsonText + "\u{0}").utf8)
        try realm.syncStorePut(outbox(sequence), head + Array(change.jsonText.utf8))
    }

    /// `class\0primary key JSON` of an outbox entry.
    static func outboxObject(_ value: some Collection<UInt8>) -> String {
        var zeros = 0
        let end = value.firstIndex { byte in
            if byte == 0 { zeros += 1 }
            return zeros == 2
        } ?? value.endIndex
        return String(decoding: value[..<end], as: UTF8.self)
    }

    /// The change of an outbox entry.
    static func outboxChange(_ value: some Collection<UInt8>) -> SyncObjectChange? {
        guard let first = value.firstIndex(of: 0),
              let second = value[value.index(after: first)...].firstIndex(of: 0) else { return nil }
        return try? SyncObjectChange(jsonBytes: value[value.index(after: second)...])
    }

    static func mirror(_ className: String, _ objectKey: UInt64) -> [UInt8] {
        mirrorPrefix + Array(className.utf8) + [0] + bigEndian(objectKey)
    }

    /// The prefix of the unresolved links to `target`.
    static func unresolved(to target: String) -> [UInt8] {
        let bytes = Array(target.utf8)
        return unresolvedPrefix + bigEndian(UInt64(bytes.count)).suffix(4) + bytes
    }

    /// The entry of `className`/`objectKey`'s unresolved link to `target`.
    static func unresolved(to target: String, from className: String, _ objectKey: UInt64) -> [UInt8] {
        unresolved(to: target) + Array(className.utf8) + [0] + bigEndian(objectKey)
    }

    /// The prefix of `className`/`objectKey`'s unresolved links, by linking object.
    static func unresolved(from className: String, _ objectKey: UInt64) -> [UInt8] {
        unresolvedBySourcePrefix + Array(className.utf8) + [0] + bigEndian(objectKey)
    }

    /// The entry, by linking object, of `className`/`objectKey`'s unresolved link to `target`.
    static func unresolved(from className: String, _ objectKey: UInt64, to target: String) -> [UInt8] {
        unresolved(from: className, objectKey) + Array(target.utf8)
    }

    /// The linking object of an unresolved-link entry of `target` (its key after the prefix).
    static func unresolvedSource(_ key: some Collection<UInt8>, prefixLength: Int) -> (className: String, objectKey: UInt64)? {
        let rest = Array(key.dropFirst(prefixLength))
        // The object key's 8 bytes may hold zeros: the class ends 9 bytes before the end.
        guard rest.count > 9, rest[rest.count - 9] == 0 else { return nil }
        return (String(decoding: rest[..<(rest.count - 9)], as: UTF8.self), sequence(ofOutbox: rest))
    }

    /// The target and linking object of an unresolved-link entry (a whole `u/` key).
    static func unresolvedEntry(_ key: [UInt8]) -> (target: String, className: String, objectKey: UInt64)? {
        let start = unresolvedPrefix.count
        guard key.count >= start + 4, key.starts(with: unresolvedPrefix) else { return nil }
        let length = Int(key[start..<start + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard key.count >= start + 4 + length else { return nil }
        let target = String(decoding: key[(start + 4)..<(start + 4 + length)], as: UTF8.self)
        guard let source = unresolvedSource(key, prefixLength: start + 4 + length) else { return nil }
        return (target, source.className, source.objectKey)
    }

    static func bigEndian(_ value: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }

    static func text(_ realm: Realm, _ key: [UInt8]) -> String? {
        realm.syncStoreGet(key).map { String(decoding: $0, as: UTF8.self) }
    }

    static func putText(_ realm: Realm, _ key: [UInt8], _ value: String) throws {
        try realm.syncStorePut(key, Array(value.utf8))
    }

    static func json<T: Decodable>(_ realm: Realm, _ key: [UInt8], as type: T.Type) -> T? {
        realm.syncStoreGet(key).flatMap { try? JSONDecoder().decode(T.self, from: Data($0)) }
    }

    static func putJSON<T: Encodable>(_ realm: Realm, _ key: [UInt8], _ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try realm.syncStorePut(key, Array(try encoder.encode(value)))
    }
}

/// A mirror entry: the object's primary key and document.
struct MirrorEntry: Codable {
    var primaryKey: JSONValue
    var document: [String: JSONValue]

    /// As `Codable` writes it: `{"document": …, "primaryKey": …}`.
    var jsonText: String { JSONValue.object(["primaryKey": primaryKey, "document": .object(document)]).jsonText }

    init(primaryKey: JSONValue, document: [String: JSONValue]) {
        self.primaryKey = primaryKey
        self.document = document
    }

    /// An entry's text made from its document's JSON text as it is (a download frame's bytes):
    /// `{"document":<document text>,"primaryKey":<key text>}`, read as any other entry (the text
    /// of ``jsonText`` differs only in key order and spacing, when the frame's has others). No
    /// document tree is walked or written; the key is written only when `primaryKeyText` is nil.
    static func jsonBytes(primaryKey: JSONValue, documentText: ArraySlice<UInt8>,
                          primaryKeyText: ArraySlice<UInt8>? = nil) -> [UInt8] {
        let key = primaryKeyText ?? ArraySlice(primaryKey.jsonText.utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(documentHead.count + documentText.count + keyHead.count + key.count + 1)
        bytes += documentHead
        bytes += documentText
        bytes += keyHead
        bytes += key
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private static let documentHead = Array(#"{"document":"#.utf8)
    private static let keyHead = Array(#","primaryKey":"#.utf8)

    init?(jsonBytes: some Collection<UInt8>) {
        guard let json = try? JSONValue(jsonBytes: jsonBytes), let key = json["primaryKey"],
              case .object(let document)? = json["document"] else { return nil }
        self.init(primaryKey: key, document: document)
    }
}

extension SyncStoreLayout {
    static func mirrorEntry(_ realm: Realm, _ key: [UInt8]) -> MirrorEntry? {
        realm.syncStoreGet(key).flatMap { MirrorEntry(jsonBytes: $0) }
    }

    static func putMirror(_ realm: Realm, _ key: [UInt8], _ entry: MirrorEntry) throws {
        try realm.syncStorePut(key, Array(entry.jsonText.utf8))
    }

    /// A downloaded document's mirror entry: from the frame's text of it when there is one
    /// (``MirrorEntry/jsonBytes(primaryKey:documentText:primaryKeyText:)``), else written from
    /// the document.
    static func putMirror(_ realm: Realm, _ key: [UInt8], primaryKey: JSONValue, document: [String: JSONValue],
                          text: FrameDocumentText.Change?) throws {
        guard let text else {
            return try putMirror(realm, key, MirrorEntry(primaryKey: primaryKey, document: document))
        }
        try realm.syncStorePut(key, MirrorEntry.jsonBytes(primaryKey: primaryKey, documentText: text.document,
                                                          primaryKeyText: text.primaryKey))
    }
}

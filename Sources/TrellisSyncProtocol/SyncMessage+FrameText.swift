/// Upload and download frames written straight to UTF-8 text, with no ``JSONValue`` tree
/// around the documents: the text is exactly `fastJSON`'s (compact, keys sorted), but no
/// dictionary is built, hashed, sorted and released for each change and each field change
/// (session 38: on the upload path, the server wrote each uploaded object back to its
/// uploader in a download frame, and building those dictionaries was much of its JSON work).
/// Only the values inside (documents, keys, field values) go through ``JSONText/write(_:into:)``.
extension SyncMessage {
    /// The frame's text when it is an upload or a download (nil: use `Codable`).
    var frameText: String? {
        var out = [UInt8]()
        switch self {
        case .upload(let upload):
            out.reserveCapacity(128 + upload.changes.count * 256)
            FrameWriter.literal("{\"upload\":{\"_0\":", into: &out)
            FrameWriter.write(upload, into: &out)
        case .download(let download):
            out.reserveCapacity(128 + download.changes.count * 256)
            FrameWriter.literal("{\"download\":{\"_0\":", into: &out)
            FrameWriter.write(download, into: &out)
        default:
            return nil
        }
        FrameWriter.literal("}}", into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// The members of the frames' objects in sorted key order, as ``JSONText`` sorts them.
enum FrameWriter {
    static func literal(_ text: StaticString, into out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    static func write(_ upload: SyncMessage.Upload, into out: inout [UInt8]) {
        literal("{\"changes\":", into: &out)
        writeList(upload.changes, into: &out) { change, out in write(change, into: &out) }
        if let first = upload.firstChangeId {
            literal(",\"firstChangeId\":", into: &out)
            JSONText.writeDecimal(first, into: &out)
        }
        literal(",\"uploadId\":", into: &out)
        JSONText.writeDecimal(upload.uploadId, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ download: SyncMessage.Download, into out: inout [UInt8]) {
        literal("{\"changes\":", into: &out)
        writeList(download.changes, into: &out) { change, out in write(change, into: &out) }
        if let version = download.completesSubscriptionVersion {
            literal(",\"completesSubscriptionVersion\":", into: &out)
            JSONText.writeDecimal(version, into: &out)
        }
        literal(download.hasMore ? ",\"hasMore\":true" : ",\"hasMore\":false", into: &out)
        literal(",\"serverVersion\":", into: &out)
        JSONText.writeDecimal(download.serverVersion, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ change: ServerChange, into out: inout [UInt8]) {
        literal("{\"className\":", into: &out)
        JSONText.writeString(change.className, into: &out)
        if let document = change.document {
            literal(",\"document\":", into: &out)
            JSONText.write(document, into: &out)
        }
        literal(",\"primaryKey\":", into: &out)
        JSONText.write(change.primaryKey, into: &out)
        literal(",\"serverVersion\":", into: &out)
        JSONText.writeDecimal(change.serverVersion, into: &out)
        if let timestamp = change.timestamp {
            literal(",\"timestamp\":", into: &out)
            JSONText.writeString(timestamp, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ change: SyncObjectChange, into out: inout [UInt8]) {
        literal("{\"className\":", into: &out)
        JSONText.writeString(change.className, into: &out)
        if let defaults = change.defaultFields {
            literal(",\"defaultFields\":", into: &out)
            writeList(defaults, into: &out) { name, out in JSONText.writeString(name, into: &out) }
        }
        literal(",\"fields\":", into: &out)
        writeList(change.fields, into: &out) { field, out in write(field, into: &out) }
        literal(",\"kind\":", into: &out)
        JSONText.writeString(change.kind.rawValue, into: &out)
        literal(",\"primaryKey\":", into: &out)
        JSONText.write(change.primaryKey, into: &out)
        literal(",\"timestamp\":", into: &out)
        JSONText.writeString(change.timestamp, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ field: FieldChange, into out: inout [UInt8]) {
        switch field {
        case .set(let name, let value):
            literal("{\"set\":{\"name\":", into: &out)
            JSONText.writeString(name, into: &out)
            literal(",\"value\":", into: &out)
            JSONText.write(value, into: &out)
        case .list(let name, let base, let value):
            literal("{\"list\":{\"base\":", into: &out)
            writeArray(base, into: &out)
            literal(",\"name\":", into: &out)
            JSONText.writeString(name, into: &out)
            literal(",\"value\":", into: &out)
            writeArray(value, into: &out)
        case .setDiff(let name, let added, let removed):
            literal("{\"setDiff\":{\"added\":", into: &out)
            writeArray(added, into: &out)
            literal(",\"name\":", into: &out)
            JSONText.writeString(name, into: &out)
            literal(",\"removed\":", into: &out)
            writeArray(removed, into: &out)
        case .map(let name, let values):
            literal("{\"map\":{\"name\":", into: &out)
            JSONText.writeString(name, into: &out)
            literal(",\"values\":{", into: &out)
            for (index, member) in values.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONText.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                JSONText.write(member.value ?? .null, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        literal("}}", into: &out)
    }

    private static func writeArray(_ items: [JSONValue], into out: inout [UInt8]) {
        writeList(items, into: &out) { item, out in JSONText.write(item, into: &out) }
    }

    /// `[` the items written by `element`, separated by commas `]`: the frames' one way to
    /// write an array (changes, field changes, default fields, values).
    @inline(__always)
    static func writeList<Item>(_ items: [Item], into out: inout [UInt8],
                                _ element: (Item, inout [UInt8]) -> Void)
    {
        out.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            element(item, &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}

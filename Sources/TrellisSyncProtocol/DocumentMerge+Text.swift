extension DocumentMerge.Stored {
    /// The document as compact JSON text with sorted keys (what the server stores).
    public var documentText: String {
        var out = [UInt8]()
        out.reserveCapacity(256)
        JSONText.write(.object(document), into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The timestamps as a JSON object's compact text with sorted keys, written straight from
    /// the strings (no ``JSONValue`` dictionary in between): the server's `_meta` column.
    public var timestampsText: String {
        var out = [UInt8]()
        out.reserveCapacity(2 + timestamps.count * 48)
        out.append(UInt8(ascii: "{"))
        for (index, member) in timestamps.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONText.writeString(member.key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONText.writeString(member.value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}

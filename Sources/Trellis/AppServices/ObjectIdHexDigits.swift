/// ObjectIds read from and written as the 24 hexadecimal digits of Extended JSON's `$oid`
/// directly on the text's bytes: `ObjectId(string:)` and `stringValue` build an array per call
/// (two when parsing), and a download reads one ObjectId per object and per link and names each
/// object it creates by its key (``DocumentRowWriter``).
extension ObjectId {
    /// The ObjectId of 24 hexadecimal digits (either case), as `ObjectId(string:)` reads them;
    /// nil for any other text.
    init?(hexDigits text: String) {
        var text = text
        guard let id = text.withUTF8(Self.parsingHexDigits) else { return nil }
        self = id
    }

    private static func parsingHexDigits(_ utf8: UnsafeBufferPointer<UInt8>) -> ObjectId? {
        guard utf8.count == 24 else { return nil }
        var id = ObjectId()
        let parsed = withUnsafeMutableBytes(of: &id) { raw -> Bool in
            guard raw.count == 12 else { return false }
            for index in 0..<12 {
                guard let high = nibble(utf8[2 * index]), let low = nibble(utf8[2 * index + 1]) else { return false }
                raw[index] = high << 4 | low
            }
            return true
        }
        return parsed ? id : nil
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 65...70: c - 55
        case 97...102: c - 87
        default: nil
        }
    }

    /// The 24 lowercase hexadecimal digits: the same text as ``stringValue``, written straight
    /// into the string's storage.
    var hexDigits: String {
        String(unsafeUninitializedCapacity: 24) { buffer in
            withUnsafeBytes(of: bytes) { raw in
                for (index, byte) in raw.enumerated() {
                    buffer[2 * index] = Self.digit(byte >> 4)
                    buffer[2 * index + 1] = Self.digit(byte & 0xF)
                }
            }
            return 24
        }
    }

    private static func digit(_ value: UInt8) -> UInt8 { value < 10 ? 48 + value : 87 + value }
}

/// ObjectIds written as the 24 hexadecimal digits of Extended JSON's `$oid` directly into the
/// text's storage: `stringValue` builds an array per call, and a download names each object it
/// creates by its key (``DocumentRowWriter``).
extension ObjectId {
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

/// The backlink index: one entry per (target object, origin object, origin property), with the
/// number of times the origin links the target through that property.
///
/// Key (26 bytes, big-endian so entries of one target are contiguous and ordered):
/// `targetTable u32 | targetKey u64 | originTable u32 | originColumn u16 | originKey u64`.
/// Value: `u32` occurrence count. Maintained on every link change and every delete, so
/// LinkingObjects are a prefix scan, never a join.
struct BacklinkKey {
    var targetTable: UInt32
    var targetKey: ObjectKey
    var originTable: UInt32
    var originColumn: UInt16
    var originKey: ObjectKey

    static let size = 26

    var bytes: [UInt8] { withBytes { Array($0) } }

    /// Calls `body` with the encoded key in a stack buffer (no allocation: a backlink is
    /// written for every link stored).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: Self.size, alignment: 8) { buffer in
            BigEndian.store(targetTable, into: buffer, at: 0)
            BigEndian.store(targetKey, into: buffer, at: 4)
            BigEndian.store(originTable, into: buffer, at: 12)
            BigEndian.store(originColumn, into: buffer, at: 16)
            BigEndian.store(originKey, into: buffer, at: 18)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// The prefix shared by every backlink of a target, optionally narrowed to one origin
    /// table and column.
    static func prefix(targetTable: UInt32, targetKey: ObjectKey, originTable: UInt32? = nil,
                       originColumn: UInt16? = nil) -> [UInt8]
    {
        var out = [UInt8]()
        BigEndian.append(targetTable, to: &out)
        BigEndian.append(targetKey, to: &out)
        if let originTable { BigEndian.append(originTable, to: &out) }
        if let originColumn { BigEndian.append(originColumn, to: &out) }
        return out
    }

    init(targetTable: UInt32, targetKey: ObjectKey, originTable: UInt32, originColumn: UInt16, originKey: ObjectKey) {
        self.targetTable = targetTable
        self.targetKey = targetKey
        self.originTable = originTable
        self.originColumn = originColumn
        self.originKey = originKey
    }

    init?(_ raw: UnsafeRawBufferPointer) {
        guard raw.count == Self.size else { return nil }
        targetTable = BigEndian.read(raw, at: 0)
        targetKey = BigEndian.read(raw, at: 4)
        originTable = BigEndian.read(raw, at: 12)
        originColumn = BigEndian.read(raw, at: 16)
        originKey = BigEndian.read(raw, at: 18)
    }
}

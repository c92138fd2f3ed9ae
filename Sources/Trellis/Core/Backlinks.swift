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

    var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.size)
        Self.append(targetTable, to: &out)
        Self.append(targetKey, to: &out)
        Self.append(originTable, to: &out)
        Self.append(originColumn, to: &out)
        Self.append(originKey, to: &out)
        return out
    }

    /// The prefix shared by every backlink of a target, optionally narrowed to one origin
    /// table and column.
    static func prefix(targetTable: UInt32, targetKey: ObjectKey, originTable: UInt32? = nil,
                       originColumn: UInt16? = nil) -> [UInt8]
    {
        var out = [UInt8]()
        append(targetTable, to: &out)
        append(targetKey, to: &out)
        if let originTable { append(originTable, to: &out) }
        if let originColumn { append(originColumn, to: &out) }
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
        func read<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            var value: T = 0
            for i in 0..<MemoryLayout<T>.size { value = value << 8 | T(raw[offset + i]) }
            return value
        }
        targetTable = read(0, UInt32.self)
        targetKey = read(4, UInt64.self)
        originTable = read(12, UInt32.self)
        originColumn = read(16, UInt16.self)
        originKey = read(18, UInt64.self)
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        for i in (0..<MemoryLayout<T>.size).reversed() { out.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }
}

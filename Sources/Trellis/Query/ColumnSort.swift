/// Sorts objects on Int, Bool, Float, Double and Date properties read from the column copy:
/// each value becomes a 64-bit key whose unsigned order is Realm's order for the property, and
/// a stable radix sort orders the keys, one descriptor at a time from the last (least
/// significant) to the first. Bytes that every key shares are skipped, so ages of 0 to 99 take
/// one pass.
///
/// The order is the one ``ResultsPipeline/sortOrder(_:_:)`` gives: nil first (last when
/// descending), equal values in their previous order.
enum ColumnSort {
    /// Whether every descriptor is a property the column copy sorts.
    static func canSort(by descriptors: [SortDescriptor], table: Table) -> Bool {
        !descriptors.isEmpty && descriptors.allSatisfy { sortableField($0, table) != nil }
    }

    private static func sortableField(_ descriptor: SortDescriptor, _ table: Table) -> FieldInfo? {
        guard !descriptor.keyPath.contains("."), let field = table.info.field(named: descriptor.keyPath),
              field.isStored, field.typeInfo.collection == .none,
              [.int, .bool, .float, .double, .date].contains(field.typeInfo.type)
        else { return nil }
        return field
    }

    /// `keys` in the order `descriptors` give; nil when a descriptor is not a property the
    /// column copy sorts (a link path, a String, …) or a value has no order (NaN): the rows are
    /// sorted then.
    static func sorted(_ keys: [ObjectKey], by descriptors: [SortDescriptor], table: Table, storage: ColumnStorage,
                       txn: Transaction) -> [ObjectKey]?
    {
        var fields: [FieldInfo] = []
        for descriptor in descriptors {
            guard let field = sortableField(descriptor, table) else { return nil }
            fields.append(field)
        }
        var order = Array(keys.indices)
        for (descriptor, field) in zip(descriptors, fields).reversed() {
            var reader = ColumnReader(storage: storage, column: field.rowColumn, txn: txn)
            var sortKeys = [UInt64](repeating: 0, count: keys.count)
            var nulls = [Bool](repeating: false, count: keys.count)
            var hasNulls = false
            let type = field.typeInfo.type, ascending = descriptor.ascending
            for index in keys.indices {
                guard let slot = reader.slot(keys[index]) else {
                    nulls[index] = true
                    hasNulls = true
                    continue
                }
                guard let key = sortKey(slot, type) else { return nil }
                sortKeys[index] = ascending ? key : ~key
            }
            radixSort(&order, by: sortKeys)
            // Nil before every value ascending, after every value descending; stable.
            if hasNulls {
                let nullsFirst = ascending
                order = order.filter { nulls[$0] == nullsFirst } + order.filter { nulls[$0] != nullsFirst }
            }
        }
        return order.map { keys[$0] }
    }

    /// A key whose unsigned order is the value's order; nil for NaN.
    @inline(__always)
    private static func sortKey(_ slot: UInt64, _ type: PropertyType) -> UInt64? {
        switch type {
        case .int: return slot ^ (1 << 63)
        case .bool: return slot
        case .float: return floatingKey(Double(Float(bitPattern: UInt32(truncatingIfNeeded: slot))))
        default: return floatingKey(Double(bitPattern: slot))
        }
    }

    @inline(__always)
    private static func floatingKey(_ value: Double) -> UInt64? {
        guard !value.isNaN else { return nil }
        let bits = (value == 0 ? 0.0 : value).bitPattern  // -0.0 sorts with 0.0
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    /// Stable LSD radix sort of `order` (indices into `keys`) by `keys`, a byte at a time.
    private static func radixSort(_ order: inout [Int], by keys: [UInt64]) {
        guard order.count > 1 else { return }
        var all: UInt64 = ~0, any: UInt64 = 0
        for key in keys {
            all &= key
            any |= key
        }
        let differing = all ^ any
        var buffer = order
        var counts = [Int](repeating: 0, count: 256)
        keys.withUnsafeBufferPointer { keys in
            counts.withUnsafeMutableBufferPointer { counts in
                for byte in 0..<8 {
                    let shift = UInt64(byte * 8)
                    guard (differing >> shift) & 0xFF != 0 else { continue }
                    order.withUnsafeMutableBufferPointer { order in
                        buffer.withUnsafeMutableBufferPointer { buffer in
                            pass(order, into: buffer, keys, counts, shift: shift)
                        }
                    }
                    swap(&order, &buffer)
                }
            }
        }
    }

    /// One counting pass: `order`, stably ordered by the byte of `keys` at `shift`, into `buffer`.
    /// Every index in `order` is a valid index of `keys` (it came from `keys.indices`).
    @inline(__always)
    private static func pass(_ order: UnsafeMutableBufferPointer<Int>, into buffer: UnsafeMutableBufferPointer<Int>,
                             _ keys: UnsafeBufferPointer<UInt64>, _ counts: UnsafeMutableBufferPointer<Int>,
                             shift: UInt64)
    {
        for index in 0..<256 { counts[index] = 0 }
        for index in order { counts[Int(truncatingIfNeeded: keys[index] &>> shift) & 0xFF] &+= 1 }
        var offset = 0
        for index in 0..<256 {
            let count = counts[index]
            counts[index] = offset
            offset &+= count
        }
        for index in order {
            let digit = Int(truncatingIfNeeded: keys[index] &>> shift) & 0xFF
            buffer[counts[digit]] = index
            counts[digit] &+= 1
        }
    }
}

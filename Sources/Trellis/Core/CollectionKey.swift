/// Where a list, set or map lives: the owning row and the collection's column.
///
/// Every collection of a file is stored in one LMDB database, `collections`, under keys that
/// start with the owner (`tableId u32 | objectKey u64 | column u16`, big-endian, 14 bytes), so a
/// collection's entries are contiguous and deleting an owner is one prefix range. After the
/// owner prefix comes one tag byte:
///
/// | tag | rest of key            | value                                                    |
/// |-----|------------------------|----------------------------------------------------------|
/// | 0   | —                      | header: lists `count u32, nextChunk u32, (id u32, n u32)*`; sets and maps `count u32` |
/// | 1   | chunk id `u32`         | list chunk: up to 256 elements, each `length u32` + element |
/// | 2   | element bytes          | set element (the full element)                           |
/// | 3   | UTF-8 map key          | map value                                                |
///
/// An element is encoded as a one-column row (``RowWriter``), so every property type's own
/// decoder reads collection elements too, and a link element holds the target's object key.
struct CollectionLocation {
    let table: Table
    let key: ObjectKey
    let field: FieldInfo

    /// The owner prefix; room for a tag and a chunk id after it, which most keys add.
    var ownerPrefix: [UInt8] {
        [UInt8].zeroed(count: CollectionKey.ownerSize, extraCapacity: 9) { storeOwnerPrefix(into: $0) }
    }

    var headerKey: [UInt8] { ownerPrefix + [CollectionKey.headerTag] }

    /// Calls `body` with ``headerKey`` built on the stack (read for every collection read).
    func withHeaderKey<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: CollectionKey.ownerSize + 1, alignment: 8) { buffer in
            storeOwnerPrefix(into: buffer)
            buffer[CollectionKey.ownerSize] = CollectionKey.headerTag
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// Calls `body` with ``chunkKey(_:)`` built on the stack.
    func withChunkKey<R>(_ id: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: CollectionKey.ownerSize + 5, alignment: 8) { buffer in
            storeOwnerPrefix(into: buffer)
            buffer[CollectionKey.ownerSize] = CollectionKey.chunkTag
            BigEndian.store(id, into: buffer, at: CollectionKey.ownerSize + 1)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    private func storeOwnerPrefix(into buffer: UnsafeMutableRawBufferPointer) {
        BigEndian.store(table.tableId, into: buffer, at: 0)
        BigEndian.store(key, into: buffer, at: 4)
        BigEndian.store(UInt16(field.rowColumn), into: buffer, at: 12)
    }

    func chunkKey(_ id: UInt32) -> [UInt8] {
        var out = ownerPrefix
        out.append(CollectionKey.chunkTag)
        BigEndian.append(id, to: &out)
        return out
    }

    func setElementKey(_ element: [UInt8]) -> [UInt8] {
        ownerPrefix + [CollectionKey.setTag] + CollectionKey.boundedKeyBytes(element)
    }

    func mapEntryKey(_ mapKey: String) -> [UInt8] {
        ownerPrefix + [CollectionKey.mapTag] + Array(mapKey.utf8)
    }

    var setElementsPrefix: [UInt8] { ownerPrefix + [CollectionKey.setTag] }
    var mapEntriesPrefix: [UInt8] { ownerPrefix + [CollectionKey.mapTag] }
}

enum CollectionKey {
    static let ownerSize = 14
    static let headerTag: UInt8 = 0
    static let chunkTag: UInt8 = 1
    static let setTag: UInt8 = 2
    static let mapTag: UInt8 = 3

    /// LMDB keys are at most 511 bytes; the longest map key we accept leaves room for the prefix.
    static let maximumMapKeyBytes = 480
    private static let maximumElementKeyBytes = 440

    /// A set element as a key: itself, or for long elements a prefix plus a 64-bit hash.
    static func boundedKeyBytes(_ element: [UInt8]) -> [UInt8] {
        guard element.count > maximumElementKeyBytes else { return element }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in element { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var out = Array(element[0..<(maximumElementKeyBytes - 8)])
        BigEndian.append(hash, to: &out)
        return out
    }
}

/// A link element's target, read from its encoded form (nil for a null element).
enum CollectionElement {
    static func linkKey(_ element: UnsafeRawBufferPointer) -> ObjectKey? {
        let row = RowView(bytes: element)
        return row.isNull(0) ? nil : row.slot(0)
    }

    static func linkKey(_ element: [UInt8]) -> ObjectKey? {
        element.withUnsafeBytes { linkKey($0) }
    }

    static func link(_ key: ObjectKey) -> [UInt8] { RowWriter.encode(single: .link(key)) }
    static let null: [UInt8] = RowWriter.encode(single: .null)
}

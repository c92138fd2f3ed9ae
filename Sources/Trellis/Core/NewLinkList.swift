/// Storing the list of objects of an object just added, straight from its elements' keys.
///
/// ``RealmCore/listSplice(_:_:with:)`` takes each element encoded in an array of its own, which
/// an edit needs: it merges them with what is stored. A new owner has nothing stored, and a
/// list of objects holds only object keys, so its chunks, header and backlinks are written
/// from the keys alone. The bytes are the ones `listSplice` writes (a test compares them).
extension RealmCore {
    /// Stores `keys` as the elements of the empty list at `location` (a new owner's list of
    /// non-embedded objects) and adds a backlink from each target.
    func storeNewLinkList(_ location: CollectionLocation, _ keys: [ObjectKey]) {
        guard !keys.isEmpty else { return }
        var header = ListHeader()
        header.chunks.reserveCapacity((keys.count + ListHeader.capacity - 1) / ListHeader.capacity)
        var start = 0
        while start < keys.count {
            let end = min(start + ListHeader.capacity, keys.count)
            let id = header.nextChunkId
            header.nextChunkId += 1
            let chunk = ListChunk.encodeLinks(keys[start ..< end])
            location.withChunkKey(id) { putCollectionValue(at: $0, chunk) }
            header.chunks.append((id, end - start))
            start = end
        }
        header.count = keys.count
        let headerBytes = header.bytes
        location.withHeaderKey { putCollectionValue(at: $0, headerBytes) }
        noteChange()
        relink(location, addedKeys: keys)
    }
}

extension ListChunk {
    /// The size of a link element: a one-column row whose slot holds the target's key.
    static let linkElementSize = RowFormat.tailStart(1)

    /// A chunk of link elements, the bytes `encode(_:)` gives for
    /// `keys.map(CollectionElement.link)`, in one allocation. Each element is written in
    /// ``RowFormat``'s layout: column count 1, a null bitmap with the link set, the key's slot.
    /// (Copying one encoded link per element instead cost 80-110 instructions per element.)
    static func encodeLinks(_ keys: ArraySlice<ObjectKey>) -> [UInt8] {
        let entrySize = 4 + linkElementSize
        return [UInt8](unsafeUninitializedCapacity: keys.count * entrySize) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var offset = 0
            for key in keys {
                raw.storeBytes(of: UInt32(linkElementSize), toByteOffset: offset, as: UInt32.self)
                raw.storeBytes(of: UInt16(1), toByteOffset: offset + 4, as: UInt16.self)
                raw[offset + 4 + 2] = 0  // the null bitmap, after the column count
                raw.storeBytes(of: key, toByteOffset: offset + 4 + RowFormat.slotsStart(1), as: UInt64.self)
                offset += entrySize
            }
            initialized = offset
        }
    }
}

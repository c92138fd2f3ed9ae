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
        guard let txn = writeTransaction else { throwRealmException(Realm.writeRequiredMessage) }
        recordedChanges.modified(location.table.tableId, location.key, column: location.field.rowColumn)
        var header = ListHeader()
        header.chunks.reserveCapacity((keys.count + ListHeader.capacity - 1) / ListHeader.capacity)
        var start = 0
        do {
            while start < keys.count {
                let end = min(start + ListHeader.capacity, keys.count)
                let id = header.nextChunkId
                header.nextChunkId += 1
                let chunk = ListChunk.encodeLinks(keys[start ..< end])
                try location.withChunkKey(id) { (k) in
                    _ = try chunk.withUnsafeBytes { (v) in try txn.put(file.collections, key: k, value: v) }
                }
                header.chunks.append((id, end - start))
                start = end
            }
            header.count = keys.count
            let headerBytes = header.bytes
            try location.withHeaderKey { (k) in
                _ = try headerBytes.withUnsafeBytes { (v) in try txn.put(file.collections, key: k, value: v) }
            }
        } catch {
            throwRealmException("Trellis could not write to '\(environmentPath)': \(error)")
        }
        noteChange()
        relink(location, addedKeys: keys)
    }
}

extension ListChunk {
    /// The size of a link element: a one-column row whose slot holds the target's key.
    static let linkElementSize = RowFormat.tailStart(1)

    /// A chunk of link elements, the bytes `encode(_:)` gives for
    /// `keys.map(CollectionElement.link)`, in one allocation.
    static func encodeLinks(_ keys: ArraySlice<ObjectKey>) -> [UInt8] {
        let entrySize = 4 + linkElementSize
        return [UInt8](unsafeUninitializedCapacity: keys.count * entrySize) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var offset = 0
            for key in keys {
                raw.storeBytes(of: UInt32(linkElementSize), toByteOffset: offset, as: UInt32.self)
                raw.storeBytes(of: UInt16(1), toByteOffset: offset + 4, as: UInt16.self)
                raw[offset + 6] = 0  // the null bitmap: the link is set
                raw.storeBytes(of: key, toByteOffset: offset + 4 + RowFormat.slotsStart(1), as: UInt64.self)
                offset += entrySize
            }
            initialized = offset
        }
    }
}

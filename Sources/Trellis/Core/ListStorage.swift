/// The chunk table of a list: which chunks hold its elements, in order.
///
/// A list is split into chunks of at most ``capacity`` elements. Appending touches the last
/// chunk and the header only; an index lookup reads the header, then one chunk.
struct ListHeader {
    static let capacity = 256

    var nextChunkId: UInt32 = 0
    var chunks: [(id: UInt32, count: Int)] = []
    var count = 0

    init() {}

    /// The header stored as `bytes`. A header that does not hold together (only a damaged file
    /// has one: a size that is not 8 + 8 per chunk, a chunk of more than ``capacity`` elements,
    /// a count that is not the chunks' sum) reads as an empty list, so a count read from the
    /// file never sizes an allocation or disagrees with the elements the chunks give.
    init(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 8, bytes.count % 8 == 0 else { return }
        let stored = Int(bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        var parsed = [(id: UInt32, count: Int)]()
        parsed.reserveCapacity((bytes.count - 8) / 8)
        var total = 0
        var offset = 8
        while offset + 8 <= bytes.count {
            let id = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            let n = Int(bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
            guard n <= Self.capacity else { return }
            parsed.append((id, n))
            total += n
            offset += 8
        }
        guard total == stored else { return }
        count = stored
        nextChunkId = bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
        chunks = parsed
    }

    /// The element count of the header stored as `bytes`, read in place; nil when it does not
    /// hold together (then ``init(_:)`` reads it as an empty list).
    static func validCount(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 8, bytes.count % 8 == 0 else { return nil }
        var total = 0
        var offset = 8
        while offset &+ 8 <= bytes.count {
            let n = Int(bytes.loadUnaligned(fromByteOffset: offset &+ 4, as: UInt32.self))
            guard n <= capacity else { return nil }
            total &+= n
            offset &+= 8
        }
        let stored = Int(bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        return total == stored ? stored : nil
    }

    var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(8 + 8 * chunks.count)
        func put(_ value: UInt32) { withUnsafeBytes(of: value) { out.append(contentsOf: $0) } }
        put(UInt32(count))
        put(nextChunkId)
        for chunk in chunks {
            put(chunk.id)
            put(UInt32(chunk.count))
        }
        return out
    }

    mutating func recount() { count = chunks.reduce(0) { $0 + $1.count } }

    /// The chunk holding `index` and the index within it. `index == count` gives the end of the
    /// last chunk.
    func locate(_ index: Int) -> (chunk: Int, offset: Int)? {
        var start = 0
        for (position, chunk) in chunks.enumerated() {
            if index < start + chunk.count || (index == start + chunk.count && position == chunks.count - 1) {
                return (position, index - start)
            }
            start += chunk.count
        }
        return nil
    }

    /// The index of the first element of chunk `position`.
    func start(of position: Int) -> Int {
        chunks[..<position].reduce(0) { $0 + $1.count }
    }
}

/// Splits a chunk's bytes into its elements.
enum ListChunk {
    static func elements(_ bytes: UnsafeRawBufferPointer) -> [UnsafeRawBufferPointer] {
        var out = [UnsafeRawBufferPointer]()
        appendElements(of: bytes, to: &out)
        return out
    }

    /// Appends the chunk's elements to `out` (no array of the chunk's own).
    static func appendElements(of bytes: UnsafeRawBufferPointer, to out: inout [UnsafeRawBufferPointer]) {
        var offset = 0
        while offset + 4 <= bytes.count {
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            offset += 4
            guard length <= bytes.count - offset else { break }
            out.append(UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + length]))
            offset += length
        }
    }

    static func element(_ bytes: UnsafeRawBufferPointer, at index: Int) -> UnsafeRawBufferPointer? {
        var offset = 0
        var position = 0
        while offset + 4 <= bytes.count {
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            offset += 4
            guard length <= bytes.count - offset else { return nil }
            if position == index { return UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + length]) }
            offset += length
            position += 1
        }
        return nil
    }

    static func encode<C: Collection>(_ elements: C) -> [UInt8] where C.Element == [UInt8] {
        var out = [UInt8]()
        // Sized once: appending element by element would reallocate as the chunk grows.
        out.reserveCapacity(elements.reduce(0) { $0 + 4 + $1.count })
        for element in elements {
            withUnsafeBytes(of: UInt32(element.count)) { out.append(contentsOf: $0) }
            out.append(contentsOf: element)
        }
        return out
    }
}

/// List storage: reads return pointers into the database map, valid until the next change.
extension RealmCore {
    func listHeader(_ location: CollectionLocation) -> ListHeader {
        collectionHeader(location).map(ListHeader.init) ?? ListHeader()
    }

    func listCount(_ location: CollectionLocation) -> Int { listHeader(location).count }

    /// Every element, in order.
    func listElements(_ location: CollectionLocation) -> [UnsafeRawBufferPointer] {
        var out = [UnsafeRawBufferPointer]()
        walkList(location, count: { out.reserveCapacity($0) }, element: { out.append($0) })
        return out
    }

    /// The keys of a list of objects' elements, in order, as ``listElements(_:)`` and
    /// `CollectionElement.linkKey` give them (`.max` for a null or missing element, which only a
    /// damaged file holds), with no element array made on the way (a list iteration's only
    /// allocation is the keys').
    func listLinkKeys(_ location: CollectionLocation) -> [ObjectKey] {
        var keys = [ObjectKey]()
        walkList(location, count: { keys.reserveCapacity($0) }, element: { keys.append(CollectionElement.linkKey($0) ?? .max) })
        return keys
    }

    /// Walks a list's elements in order, read in place from its header and chunks: `count` is
    /// called once with the element count, then `element` with each element. Each chunk gives
    /// exactly the header's count for it: a missing chunk or a chunk holding fewer (only a
    /// damaged file has them) gives empty elements for the rest, which read as the element
    /// type's default, and one holding more is cut. A header that does not hold together gives
    /// no elements, as ``ListHeader/init(_:)`` reads it as an empty list. So a list's count and
    /// its elements always agree, and no collection built from them traps.
    private func walkList(_ location: CollectionLocation, count: (Int) -> Void, element: (UnsafeRawBufferPointer) -> Void) {
        guard let header = collectionHeader(location), let total = ListHeader.validCount(header), total > 0 else { return }
        count(total)
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        var offset = 8
        while offset &+ 8 <= header.count {
            let id = header.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            var left = Int(header.loadUnaligned(fromByteOffset: offset &+ 4, as: UInt32.self))
            offset &+= 8
            if let bytes = location.withChunkKey(id, { transaction.get(file.collections, nearKey: $0) }) {
                var position = 0
                while left > 0, position &+ 4 <= bytes.count {
                    let length = Int(bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self))
                    position &+= 4
                    guard length <= bytes.count &- position else { break }
                    element(UnsafeRawBufferPointer(rebasing: bytes[position ..< position &+ length]))
                    position &+= length
                    left &-= 1
                }
            }
            while left > 0 {
                element(empty)
                left &-= 1
            }
        }
    }

    /// The element at `index`, or nil when out of range (`header`: the list's header, if the
    /// caller already read it).
    func listElement(_ location: CollectionLocation, at index: Int, header: ListHeader? = nil)
        -> UnsafeRawBufferPointer?
    {
        let header = header ?? listHeader(location)
        guard index >= 0, index < header.count, let (position, offset) = header.locate(index) else { return nil }
        // Within the count, a missing chunk or element (a damaged file) reads as an empty
        // element, as `listElements` gives it.
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        guard let bytes = collectionValue(location.chunkKey(header.chunks[position].id)) else { return empty }
        return ListChunk.element(bytes, at: offset) ?? empty
    }

    /// Replaces the elements in `range` with `elements`: the one list mutation every List
    /// method is made of. Keeps backlinks in step and deletes embedded objects that left.
    func listSplice(_ location: CollectionLocation, _ range: Range<Int>, with elements: [[UInt8]]) {
        var header = listHeader(location)
        if range.isEmpty, range.lowerBound == header.count, let last = header.chunks.last,
           last.count + elements.count <= ListHeader.capacity
        {
            appendToLastChunk(location, &header, elements)
            return
        }
        var first = 0, last = -1, base = 0
        if !header.chunks.isEmpty, let start = header.locate(range.lowerBound) {
            first = start.chunk
            base = header.start(of: first)
            last = first
            var end = base + header.chunks[first].count
            while end < range.upperBound, last + 1 < header.chunks.count {
                last += 1
                end += header.chunks[last].count
            }
        }
        // The affected chunks' elements, copied out before any write moves the pages.
        var gathered = [[UInt8]]()
        if last >= first {
            for position in first...last {
                if let bytes = collectionValue(location.chunkKey(header.chunks[position].id)) {
                    gathered += ListChunk.elements(bytes).map { Array($0) }
                }
            }
        }
        let local = (range.lowerBound - base) ..< (range.upperBound - base)
        let removed = Array(gathered[local])
        if gathered.isEmpty {
            gathered = elements  // shared, not copied element by element
        } else {
            gathered.replaceSubrange(local, with: elements)
        }

        var reusable = last >= first ? header.chunks[first...last].map(\.id) : []
        var pieces: [(id: UInt32, count: Int)] = []
        var index = 0
        while index < gathered.count {
            let piece = gathered[index ..< min(index + ListHeader.capacity, gathered.count)]
            let id: UInt32
            if reusable.isEmpty {
                id = header.nextChunkId
                header.nextChunkId += 1
            } else {
                id = reusable.removeFirst()
            }
            putCollectionValue(location.chunkKey(id), ListChunk.encode(piece))
            pieces.append((id, piece.count))
            index += piece.count
        }
        for id in reusable { deleteCollectionValue(location.chunkKey(id)) }
        if last >= first {
            header.chunks.replaceSubrange(first...last, with: pieces)
        } else {
            header.chunks = pieces
        }
        header.recount()
        if header.chunks.isEmpty {
            deleteCollectionValue(location.headerKey)
        } else {
            putCollectionValue(location.headerKey, header.bytes)
        }
        noteChange()
        if location.field.isLink { relink(location, removed: removed, added: elements) }
    }

    /// The common case of an append that fits the last chunk: extend its bytes, no decoding.
    private func appendToLastChunk(_ location: CollectionLocation, _ header: inout ListHeader, _ elements: [[UInt8]]) {
        guard let last = header.chunks.indices.last else { return }
        let key = location.chunkKey(header.chunks[last].id)
        var bytes = collectionValue(key).map { Array($0) } ?? []
        bytes += ListChunk.encode(elements)
        putCollectionValue(key, bytes)
        header.chunks[last].count += elements.count
        header.count += elements.count
        putCollectionValue(location.headerKey, header.bytes)
        noteChange()
        if location.field.isLink { relink(location, removed: [], added: elements) }
    }

    /// Moves backlinks for the link elements that left and arrived; embedded objects that left
    /// are deleted.
    func relink(_ location: CollectionLocation, removed: [[UInt8]], added: [[UInt8]]) {
        // The links removed (-1) and added (+1), sorted by target and summed per target: a
        // sort, not a dictionary, which hashed each key and grew a table per splice.
        var changes = [(key: ObjectKey, change: Int)]()
        changes.reserveCapacity(removed.count + added.count)
        for element in removed { if let key = CollectionElement.linkKey(element) { changes.append((key, -1)) } }
        for element in added { if let key = CollectionElement.linkKey(element) { changes.append((key, 1)) } }
        applyLinkChanges(location, &changes)
    }

    /// Adds a backlink for each of `addedKeys`, links a list at `location` gained.
    func relink(_ location: CollectionLocation, addedKeys: [ObjectKey]) {
        var changes = addedKeys.map { (key: $0, change: 1) }
        applyLinkChanges(location, &changes)
    }

    /// Applies link changes (+1 added, -1 removed, any order) to the backlinks of their targets.
    private func applyLinkChanges(_ location: CollectionLocation, _ changes: inout [(key: ObjectKey, change: Int)]) {
        guard !changes.isEmpty, let target = linkedTable(location.field) else { return }
        changes.sort { $0.key < $1.key }
        var index = 0
        while index < changes.count {
            let key = changes[index].key
            var change = 0
            while index < changes.count, changes[index].key == key {
                change += changes[index].change
                index += 1
            }
            guard change != 0 else { continue }
            changeBacklink(target: target, targetKey: key, origin: location.table, column: location.field,
                           originKey: location.key, by: change)
            if change < 0, location.field.isEmbeddedLink { deleteObject(target, key: key) }
        }
    }
}

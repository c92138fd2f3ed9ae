/// A child of a branch, or the root of a tree, during a write transaction: a committed page
/// (untouched) or a node copied into memory to be changed (copy-on-write).
enum Child {
    case clean(PageReference)
    case dirty(Node)
}

/// A leaf value in a node being changed: bytes (in the committed page it was copied from, or in
/// the transaction's `ByteArena`), or an overflow run already in the file.
enum NodeValue {
    case bytes(UnsafeRawBufferPointer)
    case overflow(PageReference, length: Int)

    var length: Int {
        switch self {
        case .bytes(let bytes): return bytes.count
        case .overflow(_, let length): return length
        }
    }
}

/// A branch or leaf page copied into memory for a write transaction. It gets a page number only
/// when the transaction commits. `size` is what its entries take after the page header.
///
/// Keys and values are not copied: they point into the committed page the node was copied from
/// (unchanged until the write transaction ends: pages are written only at commit) or into the
/// transaction's `ByteArena` (new keys and values), so copying a page costs two arrays of plain
/// words, not two arrays per entry.
final class Node {
    // Not checked for exclusive access at run time: a node belongs to one write transaction,
    // used by one thread at a time, and no access to these overlaps another (the checks cost
    // ~8,000 instructions per W1 object pair, docs/BENCHMARKS.md session 22).
    @exclusivity(unchecked) var isLeaf: Bool
    @exclusivity(unchecked) var keys: [UnsafeRawBufferPointer]
    /// Leaf entries' values (empty for a branch).
    @exclusivity(unchecked) var values: [NodeValue]
    /// Branch entries' children (empty for a leaf). `keys[0]` of a branch is empty.
    @exclusivity(unchecked) var children: [Child]
    @exclusivity(unchecked) private(set) var size: Int

    init(isLeaf: Bool, keys: [UnsafeRawBufferPointer] = [], values: [NodeValue] = [], children: [Child] = []) {
        self.isLeaf = isLeaf
        self.keys = keys
        self.values = values
        self.children = children
        size = 0
        recomputeSize()
    }

    /// A copy of a committed page (validated by `validateTreePage`): one pass over its cells,
    /// each checked against the page's bounds as `PageView`'s accessors check them, the node's
    /// size summed on the way.
    convenience init(copying view: PageView) throws {
        let count = view.count
        let base = view.base
        let firstCell = Layout.headerSize &+ count &* Layout.slotSize
        // Room for the entry a copied node usually gets (a put), so that it does not reallocate.
        var keys: [UnsafeRawBufferPointer] = []
        keys.reserveCapacity(count + 2)
        var size = 0
        if view.isLeaf {
            var values: [NodeValue] = []
            values.reserveCapacity(count + 2)
            let compact = view.kind == PageKind.compactLeaf.rawValue
            let header = compact ? Layout.leafCellHeader : Layout.wideLeafCellHeader
            for index in 0..<count {
                let offset = Int(base.loadLE(UInt16.self, at: Layout.headerSize &+ index &* Layout.slotSize))
                guard offset >= firstCell, offset &+ header <= Layout.pageSize else {
                    throw view.corrupt("entry \(index) points outside the page")
                }
                let keyLength = Int(base.loadLE(UInt16.self, at: offset))
                let keyStart = offset &+ header
                let valueStart = keyStart &+ keyLength
                guard valueStart <= Layout.pageSize, keyLength <= StorageLimits.maximumKeyLength else {
                    throw view.corrupt("the key of entry \(index) runs past the page")
                }
                keys.append(UnsafeRawBufferPointer(start: base + keyStart, count: keyLength))
                // Inline (length) or overflow (reference size, length) in this page's layout.
                let inlineLength: Int?, referenceSize: Int, length: Int
                if compact {
                    let stored = base.loadLE(UInt16.self, at: offset &+ 2)
                    let isInline = stored != Layout.overflowMarker
                    inlineLength = isInline ? Int(stored) : nil
                    referenceSize = Layout.overflowReferenceSize
                    length = isInline || valueStart &+ referenceSize > Layout.pageSize
                        ? Int(stored) : Int(base.loadLE(UInt32.self, at: valueStart &+ 16))
                } else {
                    let kind = base.load(fromByteOffset: offset &+ 2, as: UInt8.self)
                    guard kind <= 1 else { throw view.corrupt("entry \(index) has value kind \(kind)") }
                    length = Int(base.loadLE(UInt32.self, at: offset &+ 4))
                    inlineLength = kind == 0 ? length : nil
                    referenceSize = Layout.wideOverflowReferenceSize
                }
                if let inlineLength {
                    guard valueStart &+ inlineLength <= Layout.pageSize else {
                        throw view.corrupt("the value of entry \(index) runs past the page")
                    }
                    values.append(.bytes(UnsafeRawBufferPointer(start: base + valueStart, count: inlineLength)))
                } else {
                    guard valueStart &+ referenceSize <= Layout.pageSize,
                          length <= StorageLimits.maximumValueLength,
                          Layout.isOverflow(keyLength: keyLength, valueLength: length)
                    else { throw view.corrupt("the overflow reference of entry \(index) is malformed") }
                    let reference = PageReference(page: base.loadLE(UInt64.self, at: valueStart),
                                                  checksum: base.loadLE(UInt64.self, at: valueStart &+ 8))
                    values.append(.overflow(reference, length: length))
                }
                size &+= Layout.slotSize &+ Layout.leafCellSize(keyLength: keyLength, valueLength: length)
            }
            self.init(isLeaf: true, keys: keys, values: values, children: [], size: size)
        } else {
            var children: [Child] = []
            children.reserveCapacity(count + 2)
            for index in 0..<count {
                let offset = Int(base.loadLE(UInt16.self, at: Layout.headerSize &+ index &* Layout.slotSize))
                guard offset >= firstCell, offset &+ Layout.branchCellHeader <= Layout.pageSize else {
                    throw view.corrupt("entry \(index) points outside the page")
                }
                let keyLength = index == 0 ? 0 : Int(base.loadLE(UInt16.self, at: offset))
                let keyStart = offset &+ Layout.branchCellHeader
                guard keyStart &+ keyLength <= Layout.pageSize, keyLength <= StorageLimits.maximumKeyLength else {
                    throw view.corrupt("the key of entry \(index) runs past the page")
                }
                keys.append(index == 0 ? Node.noKey : UnsafeRawBufferPointer(start: base + keyStart, count: keyLength))
                children.append(.clean(PageReference(page: base.loadLE(UInt64.self, at: offset &+ 8),
                                                     checksum: base.loadLE(UInt64.self, at: offset &+ 16))))
                size &+= Layout.slotSize &+ Layout.branchCellHeader &+ keyLength
            }
            self.init(isLeaf: false, keys: keys, values: [], children: children, size: size)
        }
    }

    /// A node whose `size` its maker computed.
    private init(isLeaf: Bool, keys: [UnsafeRawBufferPointer], values: [NodeValue], children: [Child], size: Int) {
        self.isLeaf = isLeaf
        self.keys = keys
        self.values = values
        self.children = children
        self.size = size
    }

    /// Cell 0 of a branch: no key.
    static var noKey: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    var count: Int { keys.count }

    /// Bytes taken by entry `index` (its slot and its cell).
    func entrySize(_ index: Int) -> Int {
        if isLeaf {
            return Layout.slotSize + Layout.leafCellSize(keyLength: keys[index].count, valueLength: values[index].length)
        }
        return Layout.slotSize + Layout.branchCellHeader + keys[index].count
    }

    func recomputeSize() {
        var total = 0
        for index in 0..<keys.count { total += entrySize(index) }
        size = total
    }

    // MARK: - Search

    /// The index of the first key >= `key`, and whether it is equal.
    func lowerBound(_ key: UnsafeRawBufferPointer, order: KeyOrder) -> (index: Int, found: Bool) {
        var low = isLeaf ? 0 : 1, high = keys.count
        while low < high {
            let middle = (low + high) / 2
            let comparison = order.compare(keys[middle], key)
            if comparison < 0 { low = middle + 1 } else { high = middle }
        }
        let found = low < keys.count && order.compare(keys[low], key) == 0
        return (low, found)
    }

    /// The child of a branch whose range holds `key`.
    func childIndex(for key: UnsafeRawBufferPointer, order: KeyOrder) -> Int {
        let (index, found) = lowerBound(key, order: order)
        return found ? index : index - 1
    }

    // MARK: - Changes (each keeps `size` exact)

    func insertLeaf(at index: Int, key: UnsafeRawBufferPointer, value: NodeValue) {
        keys.insert(key, at: index)
        values.insert(value, at: index)
        size += entrySize(index)
    }

    func replaceValue(at index: Int, with value: NodeValue) {
        size -= entrySize(index)
        values[index] = value
        size += entrySize(index)
    }

    func insertChild(at index: Int, key: UnsafeRawBufferPointer, child: Child) {
        keys.insert(key, at: index)
        children.insert(child, at: index)
        size += entrySize(index)
    }

    func removeEntry(at index: Int) {
        size -= entrySize(index)
        keys.remove(at: index)
        if isLeaf {
            values.remove(at: index)
        } else {
            children.remove(at: index)
            if index == 0 && !keys.isEmpty {
                size -= keys[0].count
                keys[0] = Node.noKey
            }
        }
    }

    func setKey(at index: Int, _ key: UnsafeRawBufferPointer) {
        size -= entrySize(index)
        keys[index] = key
        size += entrySize(index)
    }

    // MARK: - Splitting

    /// Splits a node that outgrew its page into pieces that each fit, keeping `self` as the
    /// first. Each later piece comes with the separator its parent needs. When the node grew by
    /// an entry at its end (sequential inserts), the left piece stays full.
    func split(appendedAtEnd: Bool) -> [(separator: UnsafeRawBufferPointer, node: Node)] {
        let count = keys.count
        var sizes: [Int] = []
        sizes.reserveCapacity(count)
        for index in 0..<count { sizes.append(entrySize(index)) }
        var cuts: [Int] = []
        // Appending splits a leaf at its last entry (the left page stays full); never a branch,
        // whose right piece would keep one child.
        if appendedAtEnd && isLeaf && count >= 2 && size - sizes[count - 1] <= Layout.usable
            && sizes[count - 1] <= Layout.usable
        {
            cuts = [count - 1]
        } else {
            // The cut that makes the larger side smallest; greedy pieces if no single cut fits.
            var best = 1, bestLarger = Int.max, left = 0
            for cut in 1..<count {
                left += sizes[cut - 1]
                let larger = max(left, size - left)
                if larger < bestLarger { bestLarger = larger; best = cut }
            }
            if bestLarger <= Layout.usable {
                cuts = [best]
            } else {
                var used = 0
                for index in 0..<count {
                    if used + sizes[index] > Layout.usable && index > 0 { cuts.append(index); used = 0 }
                    used += sizes[index]
                }
            }
        }
        var pieces: [(separator: UnsafeRawBufferPointer, node: Node)] = []
        let bounds = [0] + cuts + [count]
        let allKeys = keys, allValues = values, allChildren = children
        for piece in 0..<(bounds.count - 1) {
            let range = bounds[piece]..<bounds[piece + 1]
            var pieceKeys = Array(allKeys[range])
            let separator = pieceKeys[0]
            if !isLeaf { pieceKeys[0] = Node.noKey }
            let node = piece == 0 ? self : Node(isLeaf: isLeaf)
            node.keys = pieceKeys
            node.values = isLeaf ? Array(allValues[range]) : []
            node.children = isLeaf ? [] : Array(allChildren[range])
            node.recomputeSize()
            pieces.append((separator, node))
        }
        return pieces
    }
}

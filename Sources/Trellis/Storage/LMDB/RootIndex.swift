// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
/// A root branch page's numbered keys (``TreeSearch/ordinal(of:integerKeys:)``) and children,
/// read into one buffer, so that a snapshot that searches the same tree many times (primary-key
/// lookups) finds the child covering a key by a binary search over numbers instead of over the
/// page's nodes. Only for a branch whose keys after the first all carry numbers, under one tag,
/// in increasing order: there the numbers sort as the keys do.
///
/// Its buffer is its owner's to free (``deallocate()``): ``KnownRoot`` reads it and frees it
/// when the snapshot forgets the tree. A plain value, so that reading it costs no reference
/// counting on the lookup path.
struct RootIndex {
    /// `count` child page numbers, then the numbers of the keys of nodes 1..<count.
    private let buffer: UnsafeMutablePointer<UInt64>
    /// The branch's node count.
    let count: Int
    /// The tag byte every key carries (zero for integer keys).
    let tag: UInt8

    /// Reads `page`, a branch; nil if its keys do not qualify or a node is not sound.
    init?(_ page: TreePage, integerKeys: Bool) {
        guard let (count, upper) = page.checkedHeader(kind: PageFormat.branchFlag), count >= 2 else { return nil }
        let buffer = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 &* count &- 1)
        var tag: UInt8 = 0
        for index in 0..<count {
            guard let child = page.childNumber(index, upper: upper) else {
                buffer.deallocate()
                return nil
            }
            buffer[index] = child
            // Node 0's key stands for every key before node 1's: it is not read.
            guard index > 0 else { continue }
            guard let (key, _) = page.keyBytes(index, upper: upper),
                  let ordinal = TreeSearch.ordinal(of: key, integerKeys: integerKeys),
                  index == 1 || (ordinal.tag == tag && ordinal.number > buffer[count &+ index &- 2])
            else {
                buffer.deallocate()
                return nil
            }
            tag = ordinal.tag
            buffer[count &+ index &- 1] = ordinal.number
        }
        self.buffer = buffer
        self.count = count
        self.tag = tag
    }

    /// The child whose subtree holds `key` (the last node whose key is not after it); nil for a
    /// key without a number or under another tag, which the page search then answers.
    @inline(__always)
    func child(coveringKey key: UnsafeRawBufferPointer, integerKeys: Bool) -> UInt64? {
        guard let wanted = TreeSearch.ordinal(of: key, integerKeys: integerKeys), wanted.tag == tag else { return nil }
        // The numbers of nodes 1..<count sit at `numbers[1]...`; the first node from 1 on whose
        // number is after the key's is in low...high.
        let numbers = buffer + (count &- 1)
        var low = 1, high = count
        while low < high {
            let middle = (low &+ high) >> 1
            if numbers[middle] > wanted.number { high = middle } else { low = middle &+ 1 }
        }
        return buffer[low &- 1]
    }

    /// Frees the buffer; the index must not be used after.
    func deallocate() { buffer.deallocate() }
}

/// A tree a read snapshot searches in place: its root, and how often it was searched. Once it
/// was searched ``searchesBeforeIndexing`` times, its root branch is read into a ``RootIndex``,
/// which later searches use (a snapshot searched once or twice pays nothing for it).
struct KnownRoot {
    let database: DatabaseHandle
    private(set) var root: TreeRoot
    private var searches = 0

    /// Searches of one tree in one snapshot after which its root is indexed: reading a root of
    /// a hundred nodes costs about what eight searches save.
    static let searchesBeforeIndexing = 8

    init(database: DatabaseHandle, root: TreeRoot) {
        self.database = database
        self.root = root
    }

    /// Counts a search, reads the root into an index on the ``searchesBeforeIndexing``th, and
    /// returns the root to search.
    @inline(__always)
    mutating func searched(layout: PageLayout) -> TreeRoot {
        if searches < Self.searchesBeforeIndexing {
            searches &+= 1
            if searches == Self.searchesBeforeIndexing { readIndex(layout: layout) }
        }
        return root
    }

    private mutating func readIndex(layout: PageLayout) {
        guard root.depth >= 2, root.index == nil, let page = layout.page(numbered: root.page) else { return }
        root.index = RootIndex(page, integerKeys: root.integerKeys)
    }

    /// Frees the index; done when the snapshot forgets the tree.
    func forget() { root.index?.deallocate() }
}
#endif

/// A read transaction's root branch of one tree, read into memory once so that many point reads
/// of numbered keys (primary-key lookups: ``NumberedKey``) start one level down: a search over
/// an array of numbers replaces the root page's checks and its search.
///
/// Only for a branch whose keys after the first are all numbered keys of one length and one tag,
/// in increasing order (there the numbers sort as the keys do). It holds page references, not
/// pointers: the child is still read through the snapshot, which checks its range, its checksum
/// (or decrypts it) and its kind. It belongs to the `TreeAccess` that made it, of one read
/// transaction, whose root never changes; a later transaction (another commit, after the file
/// grew, another process's commit) has its own access and makes its own.
struct RootIndex {
    /// `count - 1` numbers (of entries 1..<count), then `count` children as (page, checksum) pairs.
    private let numbers: UnsafeMutablePointer<UInt64>
    private let children: UnsafeMutablePointer<UInt64>
    /// The branch's entry count (at least 2).
    let count: Int
    /// The tag byte every key carries, and whether keys have one (byte order, 9 bytes).
    let tag: UInt8
    let isTagged: Bool

    /// Reads `view`, the root branch of a tree of key order `order`; nil if its keys do not
    /// qualify. The index owns memory: its owner (a `TreeAccess`) frees it with `deallocate()`.
    init?(_ view: PageView, order: KeyOrder) throws {
        let count = view.count
        guard !view.isLeaf, count >= 2 else { return nil }
        let numbers = UnsafeMutablePointer<UInt64>.allocate(capacity: count &- 1)
        let children = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 &* count)
        var tag: UInt8 = 0, isTagged = false
        var qualifies = true
        // Freed unless the index keeps them: also when a damaged page makes a read below throw.
        var kept = false
        defer {
            if !kept {
                numbers.deallocate()
                children.deallocate()
            }
        }
        for index in 0..<count {
            let child = try view.child(at: index)
            children[2 &* index] = child.page
            children[2 &* index &+ 1] = child.checksum
            // Entry 0's key stands for every key before entry 1's: it is not read.
            guard index > 0 else { continue }
            guard let key = NumberedKey(try view.key(at: index), order: order),
                  index == 1 || (key.tag == tag && key.number > numbers[index &- 2])
            else {
                qualifies = false
                break
            }
            tag = key.tag
            isTagged = key.isTagged
            numbers[index &- 1] = key.number
        }
        guard qualifies else { return nil }
        kept = true
        self.numbers = numbers
        self.children = children
        self.count = count
        self.tag = tag
        self.isTagged = isTagged
    }

    /// Frees the index's memory (once, by its owner).
    func deallocate() {
        numbers.deallocate()
        children.deallocate()
    }

    /// The child whose subtree holds `key` (the last entry whose key is not after it); nil for a
    /// key of another length or tag, which the root page's own search then answers.
    @inline(__always)
    func child(covering key: NumberedKey) -> PageReference? {
        guard key.isTagged == isTagged, key.tag == tag else { return nil }
        // The first entry from 1 on whose number is after the key's, in low...high.
        var low = 1, high = count
        while low < high {
            let middle = (low &+ high) &>> 1
            if numbers[middle &- 1] > key.number { high = middle } else { low = middle &+ 1 }
        }
        let child = low &- 1
        return PageReference(page: children[2 &* child], checksum: children[2 &* child &+ 1])
    }
}

extension TreeAccess {
    /// Searches of one tree in one read transaction after which its root is indexed: reading a
    /// root of a hundred entries costs about what eight searches save.
    static let searchesBeforeIndexing = 8

    /// Reads the root of the tree into this access's ``RootIndex``, in a read transaction whose
    /// tree is at least two levels deep and whose root's keys are numbered; false otherwise (a
    /// write transaction, whose trees change; a leaf root; keys that are not numbers). Throws
    /// `corruptFile` for a damaged root page.
    func indexRoot() throws -> Bool {
        if rootIndex != nil { return true }
        guard !tracksChanges, tree.depth >= 2, case .clean(let root) = tree.root else { return false }
        guard isAlive else { throw StorageError.misuse("a transaction was used after it ended") }
        let view = try snapshot.treePage(root, level: 1, depth: tree.depth)
        rootIndex = try RootIndex(view, order: tree.order)
        return rootIndex != nil
    }

    /// The value under `key` in place, or nil, as ``value(forKey:)``, for searches with no order
    /// to their keys (primary-key lookups). With `indexing` (a read transaction that one thread
    /// uses), the tree's root is read into a ``RootIndex`` once this access searched it
    /// ``searchesBeforeIndexing`` times, and later searches of numbered keys start one level
    /// down. The index belongs to this access: it lives and ends with its transaction, whose
    /// trees never change.
    public func searchedValue(forKey key: UnsafeRawBufferPointer, indexing: Bool) throws -> UnsafeRawBufferPointer? {
        guard isAlive else { throw StorageError.misuse("a transaction was used after it ended") }
        guard indexing, !tracksChanges, case .clean(let root) = tree.root else {
            return try TreeReader(snapshot: snapshot, order: tree.order, depth: tree.depth).value(root: tree.root, key: key)
        }
        if let index = rootIndex {
            if let numbered = NumberedKey(key, order: tree.order), let child = index.child(covering: numbered) {
                return try committedValue(from: child, level: 2, key: key)
            }
        } else if searches < Self.searchesBeforeIndexing {
            searches &+= 1
            // A damaged root is reported by the search itself.
            if searches == Self.searchesBeforeIndexing { _ = try? indexRoot() }
        }
        return try committedValue(from: root, level: 1, key: key)
    }

    /// The value under `key` in the committed subtree of `reference`, a page at `level` (the
    /// root is level 1) of a read transaction's tree: one descent, the page checks inlined.
    @inline(__always)
    private func committedValue(from reference: PageReference, level: Int, key: UnsafeRawBufferPointer)
        throws -> UnsafeRawBufferPointer?
    {
        var reference = reference, level = level
        let depth = tree.depth, order = tree.order
        while true {
            let view = try snapshot.treePage(reference, level: level, depth: depth)
            let (index, found) = try view.lowerBound(key, order: order)
            if level == depth {
                guard found else { return nil }
                switch try view.leafEntry(at: index).value {
                case .inline(let bytes): return bytes
                case .overflow(let run, let length): return try snapshot.overflowValue(run, length: length)
                }
            }
            reference = try view.child(at: found ? index : index &- 1)
            level &+= 1
        }
    }
}

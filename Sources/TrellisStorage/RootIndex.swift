/// A read transaction's root branch of one tree, read into memory once so that many point reads
/// of numbered keys (primary-key lookups: ``NumberedKey``) start one level down: a search over
/// an array of numbers replaces the root page's checks and its search.
///
/// Only for a branch whose keys after the first are all numbered keys of one length and one tag,
/// in increasing order (there the numbers sort as the keys do). It holds page references, not
/// pointers: the child is still read through the snapshot, which checks its range, its checksum
/// (or decrypts it) and its kind. It is valid for the transaction whose `TreeAccess` made it: a
/// read transaction's root never changes; a later transaction (another commit, after the file
/// grew, another process's commit) makes its own.
public final class RootIndex {
    /// `count - 1` numbers (of entries 1..<count), then `count` children as (page, checksum) pairs.
    private let numbers: UnsafeMutablePointer<UInt64>
    private let children: UnsafeMutablePointer<UInt64>
    /// The branch's entry count (at least 2).
    let count: Int
    /// The tag byte every key carries, and whether keys have one (byte order, 9 bytes).
    let tag: UInt8
    let isTagged: Bool
    /// The transaction's access the index was made from (its tree's root).
    let access: TreeAccess

    /// Reads `view`, the root branch of `access`'s tree; nil if its keys do not qualify.
    init?(_ view: PageView, access: TreeAccess) throws {
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
            guard let key = NumberedKey(try view.key(at: index), order: access.tree.order),
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
        self.access = access
    }

    deinit {
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
    /// The root of the tree read into a ``RootIndex``, in a read transaction whose tree is at
    /// least two levels deep and whose root's keys are numbered; nil otherwise (a write
    /// transaction, whose trees change; a leaf root; keys that are not numbers). Throws
    /// `corruptFile` for a damaged root page.
    public func makeRootIndex() throws -> RootIndex? {
        guard !tracksChanges, tree.depth >= 2, case .clean(let root) = tree.root else { return nil }
        guard isAlive else { throw StorageError.misuse("a transaction was used after it ended") }
        let view = try snapshot.treePage(root)
        guard !view.isLeaf else { throw view.corrupt("a leaf at level 1 of a tree of depth \(tree.depth)") }
        return try RootIndex(view, access: self)
    }

    /// The value under `key` in place, or nil, as ``value(forKey:)``; the search starts below the
    /// root when `index` (made by this access) covers the key.
    @inline(__always)
    public func value(forKey key: UnsafeRawBufferPointer, rootIndex index: RootIndex) throws -> UnsafeRawBufferPointer? {
        guard isAlive else { throw StorageError.misuse("a transaction was used after it ended") }
        let reader = TreeReader(snapshot: snapshot, order: tree.order, depth: tree.depth)
        guard index.access === self, let numbered = NumberedKey(key, order: tree.order),
              let child = index.child(covering: numbered)
        else { return try reader.value(root: tree.root, key: key) }
        guard let entry = try reader.locate(from: child, level: 2, key: key) else { return nil }
        return try reader.value(of: entry.level, at: entry.index)
    }
}

import Foundation

/// Stored backlink counts: how many times each object is linked through each origin property,
/// so that `dog.owners.count` (and `@count` of linking objects in a query) reads one number
/// instead of walking the backlink index.
///
/// The counts live in the `backlinkCounts` database, in blocks of 256 consecutive object keys of
/// one target class and one origin property (object keys only grow, so a key's block is
/// `key >> 8`, with no search and no split):
///
/// ```
/// key (18 bytes, big-endian): targetTable u32 | originTable u32 | originColumn u16 | block u64
/// value (1,024 bytes):        256 x u32 count, little-endian, slot = key & 255
/// ```
///
/// A block whose counts are all zero is not stored. The counts are a summary of the backlink
/// index (``BacklinkKey``): every change to it is recorded in the write transaction's
/// ``BacklinkCountLog`` and written when the transaction commits (or before a read inside it).
/// The consistency checker rebuilds them from the index and compares.
struct BacklinkCountBlockKey: Hashable, Comparable {
    var targetTable: UInt32
    var originTable: UInt32
    var originColumn: UInt16
    var block: UInt64

    static let size = 18
    /// Object keys per block.
    static let slots = 256
    static let valueSize = slots * 4

    init(targetTable: UInt32, originTable: UInt32, originColumn: UInt16, block: UInt64) {
        self.targetTable = targetTable
        self.originTable = originTable
        self.originColumn = originColumn
        self.block = block
    }

    /// The block holding `targetKey`'s count of links from `originTable`'s `originColumn`.
    init(targetTable: UInt32, targetKey: ObjectKey, originTable: UInt32, originColumn: UInt16) {
        self.init(targetTable: targetTable, originTable: originTable, originColumn: originColumn,
                  block: targetKey >> 8)
    }

    init?(_ raw: UnsafeRawBufferPointer) {
        guard raw.count == Self.size else { return nil }
        targetTable = BigEndian.read(raw, at: 0)
        originTable = BigEndian.read(raw, at: 4)
        originColumn = BigEndian.read(raw, at: 8)
        block = BigEndian.read(raw, at: 10)
    }

    /// The slot of `key` in its block.
    @inline(__always)
    static func slot(_ key: ObjectKey) -> Int { Int(truncatingIfNeeded: key & 0xFF) }

    /// Calls `body` with the encoded key in a stack buffer.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: Self.size, alignment: 8) { buffer in
            BigEndian.store(targetTable, into: buffer, at: 0)
            BigEndian.store(originTable, into: buffer, at: 4)
            BigEndian.store(originColumn, into: buffer, at: 8)
            BigEndian.store(block, into: buffer, at: 10)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    static func < (a: Self, b: Self) -> Bool {
        (a.targetTable, a.originTable, a.originColumn, a.block) < (b.targetTable, b.originTable, b.originColumn, b.block)
    }

    /// The count in slot `slot` of a stored block (0 for a block too short: a damaged file).
    @inline(__always)
    static func count(in block: UnsafeRawBufferPointer, slot: Int) -> Int {
        guard block.count == valueSize else { return 0 }
        return Int(UInt32(littleEndian: block.loadUnaligned(fromByteOffset: slot &* 4, as: UInt32.self)))
    }
}

/// The backlink count changes of one write transaction, not yet written to the count blocks.
/// Recording one is an append; the flush sorts them and rewrites each block touched once.
///
/// A change is 16 bytes (W1 records one per link, 100,000 in its one transaction): the target's
/// object key (its block and slot) and the delta, with the link (target table, origin table and
/// column) as an index into `links`, the few distinct ones the transaction recorded. 32 bytes
/// with the block key in each made W8's peak memory of W1 4 MiB of changes (session 39).
struct BacklinkCountLog {
    private struct Change {
        var targetKey: ObjectKey
        /// The link's index in `links`.
        var link: UInt32
        var delta: Int32
    }
    /// A link's tables and column: a block key without the block.
    private struct Link: Equatable {
        var targetTable: UInt32
        var originTable: UInt32
        var originColumn: UInt16
    }
    private var changes: [Change] = []
    private var links: [Link] = []
    /// The index of the link recorded last (consecutive changes are mostly through one link).
    private var lastLink = 0

    var isEmpty: Bool { changes.isEmpty }

    /// Notes that `originTable`'s `originColumn` links `targetKey` `delta` more times.
    // Not inlined: inlined, it made the link-writing path around it slower (W1 +1.7%).
    @inline(never)
    mutating func record(targetTable: UInt32, targetKey: ObjectKey, originTable: UInt32, originColumn: UInt16, delta: Int) {
        let link = Link(targetTable: targetTable, originTable: originTable, originColumn: originColumn)
        changes.append(Change(targetKey: targetKey, link: UInt32(truncatingIfNeeded: index(of: link)),
                              delta: Int32(clamping: delta)))
    }

    /// The index of `link` in `links`, added when new.
    @inline(__always)
    private mutating func index(of link: Link) -> Int {
        if lastLink < links.count, links[lastLink] == link { return lastLink }
        lastLink = links.firstIndex(of: link) ?? links.count
        if lastLink == links.count { links.append(link) }
        return lastLink
    }

    /// The block key of a change.
    @inline(__always)
    private func block(_ change: Change) -> BacklinkCountBlockKey {
        let link = links[Int(change.link)]
        return BacklinkCountBlockKey(targetTable: link.targetTable, targetKey: change.targetKey,
                                     originTable: link.originTable, originColumn: link.originColumn)
    }

    /// Forgets the changes (the transaction was cancelled, or its backlinks were all deleted).
    mutating func reset() {
        changes.removeAll(keepingCapacity: true)
        links.removeAll(keepingCapacity: true)
        lastLink = 0
    }

    /// Writes the recorded changes into `database`: each block touched is read, changed and
    /// written once (deleted when it holds no count any more).
    mutating func flush(into database: DatabaseHandle, _ txn: Transaction) throws {
        guard !changes.isEmpty else { return }
        // The changes of a block are summed before they are applied, so their order is free.
        // In block key order (the order the blocks are written in): links sorted as block keys
        // sort them, then the target's block.
        let order = links.indices.sorted { a, b in
            let x = links[a], y = links[b]
            return (x.targetTable, x.originTable, x.originColumn) < (y.targetTable, y.originTable, y.originColumn)
        }
        var rank = [UInt32](repeating: 0, count: links.count)
        for (position, link) in order.enumerated() { rank[link] = UInt32(truncatingIfNeeded: position) }
        changes.sort { a, b in
            let x = rank[Int(a.link)], y = rank[Int(b.link)]
            return x != y ? x < y : a.targetKey &>> 8 < b.targetKey &>> 8
        }
        var sums = [Int64](repeating: 0, count: BacklinkCountBlockKey.slots)
        var counts = [UInt32](repeating: 0, count: BacklinkCountBlockKey.slots)
        var start = 0
        while start < changes.count {
            let link = changes[start].link
            let number = changes[start].targetKey &>> 8
            let block = self.block(changes[start])
            var end = start
            try block.withBytes { key in
                Self.load(txn.get(database, key: key), into: &counts)
                for slot in sums.indices { sums[slot] = Int64(counts[slot]) }
                while end < changes.count, changes[end].link == link, changes[end].targetKey &>> 8 == number {
                    sums[BacklinkCountBlockKey.slot(changes[end].targetKey)] += Int64(changes[end].delta)
                    end += 1
                }
                for slot in sums.indices { counts[slot] = UInt32(clamping: max(0, sums[slot])).littleEndian }
                if counts.allSatisfy({ $0 == 0 }) {
                    _ = try txn.delete(database, key: key)
                } else {
                    _ = try counts.withUnsafeBytes { try txn.put(database, key: key, value: $0) }
                }
            }
            start = end
        }
        reset()
    }

    /// The counts of a stored block (all zero for none, or for a block of the wrong size).
    private static func load(_ stored: UnsafeRawBufferPointer?, into counts: inout [UInt32]) {
        guard let stored, stored.count == BacklinkCountBlockKey.valueSize else {
            for index in counts.indices { counts[index] = 0 }
            return
        }
        counts.withUnsafeMutableBytes { $0.copyMemory(from: stored) }
        for index in counts.indices { counts[index] = UInt32(littleEndian: counts[index]) }
    }
}

/// Building and checking the count blocks from the backlink index.
enum BacklinkCountBuilder {
    /// A block's counts when it has none.
    private static let noCounts = [UInt32](repeating: 0, count: BacklinkCountBlockKey.slots)

    /// Every block the backlink index implies, with its counts.
    static func expectedBlocks(fromBacklinks backlinks: DatabaseHandle, _ txn: Transaction) throws
        -> [BacklinkCountBlockKey: [UInt32]]
    {
        var blocks = [BacklinkCountBlockKey: [UInt32]]()
        let noCounts = self.noCounts
        let cursor = try txn.cursor(backlinks)
        var entry = cursor.first()
        while let (key, value) = entry {
            if let backlink = BacklinkKey(key) {
                let block = BacklinkCountBlockKey(targetTable: backlink.targetTable, targetKey: backlink.targetKey,
                                                  originTable: backlink.originTable,
                                                  originColumn: backlink.originColumn)
                let count = value.load(orZeroAt: 0, as: UInt32.self)
                blocks[block, default: noCounts][
                    BacklinkCountBlockKey.slot(backlink.targetKey)] &+= count
            }
            entry = cursor.next()
        }
        return blocks.filter { $0.value.contains { $0 != 0 } }
    }

    /// Replaces the contents of `counts` with the blocks the backlink index implies.
    static func rebuild(_ counts: DatabaseHandle, fromBacklinks backlinks: DatabaseHandle, _ txn: Transaction) throws {
        let blocks = try expectedBlocks(fromBacklinks: backlinks, txn)
        try txn.empty(counts)
        for (block, values) in blocks.sorted(by: { $0.key < $1.key }) {
            let littleEndian = values.map(\.littleEndian)
            try block.withBytes { key in
                _ = try littleEndian.withUnsafeBytes { try txn.put(counts, key: key, value: $0) }
            }
        }
    }
}

extension BacklinkCountBuilder {
    /// How the stored count blocks differ from the blocks the backlink index implies.
    static func problems(counts: DatabaseHandle, backlinks: DatabaseHandle, _ txn: Transaction) -> [String] {
        do {
            var expected = try expectedBlocks(fromBacklinks: backlinks, txn)
            var problems = [String]()
            let cursor = try txn.cursor(counts)
            var entry = cursor.first()
            while let (key, value) = entry {
                entry = cursor.next()
                guard let block = BacklinkCountBlockKey(key), value.count == BacklinkCountBlockKey.valueSize else {
                    problems.append("backlink count block with a malformed key or value")
                    continue
                }
                let stored = (0..<BacklinkCountBlockKey.slots).map {
                    UInt32(BacklinkCountBlockKey.count(in: value, slot: $0))
                }
                let wanted = expected.removeValue(forKey: block) ?? noCounts
                if let slot = wanted.indices.first(where: { stored[$0] != wanted[$0] }) {
                    problems.append("backlink count of \(describe(block, slot: slot)) is \(stored[slot]), the "
                        + "backlinks count \(wanted[slot])")
                }
            }
            for (block, wanted) in expected {
                let slot = wanted.firstIndex { $0 != 0 } ?? 0
                problems.append("missing backlink count of \(describe(block, slot: slot)) (the backlinks count "
                    + "\(wanted[slot]))")
            }
            return problems
        } catch {
            return ["backlink counts unreadable: \(error)"]
        }
    }

    private static func describe(_ block: BacklinkCountBlockKey, slot: Int) -> String {
        "table \(block.targetTable) key \(block.block << 8 | UInt64(slot)) from table \(block.originTable) "
            + "column \(block.originColumn)"
    }
}

/// One walk of an LMDB B+tree in key order, checking every page it reads (see
/// `LMDBFileReader.forEachEntry`). No allocation per node: a walk visits every node of a tree.
struct TreeWalk {
    private let file: UnsafeRawBufferPointer
    private let path: String
    private let pageSize: Int
    private let lastPage: UInt64
    private let database: LMDBDatabase
    private let integerKeys: Bool
    /// Pages reached so far: a page reached twice means the tree is damaged (and could make a
    /// walk loop).
    private var visited: [UInt64]
    private var branchPages: UInt64 = 0
    private var leafPages: UInt64 = 0
    private var overflowPages: UInt64 = 0
    private var entries: UInt64 = 0
    /// The width of an integer tree's keys (its first key's).
    private var integerWidth = 0
    /// The last key handed out, for the order check across leaves.
    private var previousKey: UnsafeRawBufferPointer?

    typealias Visit = (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UInt16, UInt64) throws -> Void

    init(file: UnsafeRawBufferPointer, path: String, pageSize: Int, lastPage: UInt64, database: LMDBDatabase) {
        self.file = file
        self.path = path
        self.pageSize = pageSize
        self.lastPage = lastPage
        self.database = database
        integerKeys = database.hasIntegerKeys
        visited = [UInt64](repeating: 0, count: Int(lastPage / 64) + 1)
    }

    private func damaged(_ page: UInt64, _ detail: String) -> LMDBFormatError {
        LMDBFormatError.damaged(path, page: page, "database '\(database.displayName)': \(detail)")
    }

    mutating func run(_ visit: Visit) throws {
        let record = database.record
        if record.root == LMDBLayout.noPage {
            guard record.entries == 0, record.depth == 0, record.branchPages == 0, record.leafPages == 0,
                  record.overflowPages == 0
            else { throw damaged(0, "an empty tree whose record counts \(record.entries) entries") }
            return
        }
        guard record.depth >= 1, record.depth <= LMDBLayout.maximumDepth else {
            throw damaged(record.root, "a tree of depth \(record.depth)")
        }
        try page(record.root, level: 1, lower: nil, upper: nil, visit)
        guard entries == record.entries else {
            throw damaged(record.root, "the record counts \(record.entries) entries, the tree holds \(entries)")
        }
        guard branchPages == record.branchPages, leafPages == record.leafPages, overflowPages == record.overflowPages
        else {
            throw damaged(record.root, "the record counts \(record.branchPages)/\(record.leafPages)/"
                + "\(record.overflowPages) branch/leaf/overflow pages, the tree has \(branchPages)/\(leafPages)/"
                + "\(overflowPages)")
        }
    }

    // MARK: - Pages

    /// The bytes of page `number`, once per walk.
    private mutating func read(_ number: UInt64, from parent: UInt64) throws -> UnsafeRawBufferPointer {
        try mark(number, from: parent)
        let start = Int(number) * pageSize
        let page = UnsafeRawBufferPointer(rebasing: file[start..<(start + pageSize)])
        let named = UInt64(littleEndian: page.loadUnaligned(as: UInt64.self))
        guard named == number else { throw damaged(number, "the page says it is page \(named)") }
        return page
    }

    private mutating func mark(_ number: UInt64, from parent: UInt64) throws {
        guard number >= 2, number <= lastPage else {
            throw damaged(parent, "a link to page \(number), outside the commit (pages 2-\(lastPage))")
        }
        let word = Int(number / 64), bit = UInt64(1) << (number % 64)
        guard visited[word] & bit == 0 else { throw damaged(number, "the page is reached twice") }
        visited[word] |= bit
    }

    private mutating func page(_ number: UInt64, level: Int, lower: UnsafeRawBufferPointer?,
                               upper: UnsafeRawBufferPointer?, _ visit: Visit) throws
    {
        let bytes = try read(number, from: number)
        let kind = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 10, as: UInt16.self)) & LMDBLayout.kindFlags
        let isLeaf = level == database.depth
        guard kind == (isLeaf ? LMDBLayout.leafPage : LMDBLayout.branchPage) else {
            throw damaged(number, "a page with flags \(kind) where a \(isLeaf ? "leaf" : "branch") page belongs "
                + "(level \(level) of \(database.depth))")
        }
        let lowerBound = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt16.self)))
        let upperBound = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 14, as: UInt16.self)))
        guard lowerBound >= LMDBLayout.pageHeaderSize, lowerBound <= upperBound, upperBound <= pageSize,
              (lowerBound - LMDBLayout.pageHeaderSize) % 2 == 0
        else { throw damaged(number, "a node table with bounds \(lowerBound)-\(upperBound)") }
        let count = (lowerBound - LMDBLayout.pageHeaderSize) / 2
        guard count >= (isLeaf ? 1 : 2) else { throw damaged(number, "a \(isLeaf ? "leaf" : "branch") of \(count) nodes") }
        if isLeaf { leafPages += 1 } else { branchPages += 1 }

        for index in 0..<count {
            let node = try self.node(bytes, index: index, upperBound: upperBound, page: number)
            if isLeaf {
                try checkOrder(node.key, page: number, lower: lower)
                let value = try leafValue(bytes, node: node, page: number)
                entries += 1
                previousKey = node.key
                try visit(node.key, value, node.flags, number)
            } else {
                // A branch's first key is implicit (its parent's lower bound); the others bound
                // the children.
                let childLower = index == 0 ? lower : node.key
                let childUpper = index == count - 1 ? upper
                    : try self.node(bytes, index: index + 1, upperBound: upperBound, page: number).key
                if index > 0 { try checkSeparator(node.key, page: number, lower: lower, upper: upper) }
                let child = UInt64(node.low) | UInt64(node.high) << 16 | UInt64(node.flags) << 32
                try page(child, level: level + 1, lower: childLower, upper: childUpper, visit)
            }
        }
        if isLeaf, let upper, let last = previousKey, compare(last, upper) >= 0 {
            throw damaged(number, "a key at or past its parent's next separator")
        }
    }

    // MARK: - Nodes

    private struct Node {
        let offset: Int
        let low: UInt16, high: UInt16, flags: UInt16
        let key: UnsafeRawBufferPointer
        var dataSize: Int { Int(low) | Int(high) << 16 }
    }

    private func node(_ bytes: UnsafeRawBufferPointer, index: Int, upperBound: Int, page: UInt64) throws -> Node {
        let offset = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: LMDBLayout.pageHeaderSize + index * 2,
                                                                  as: UInt16.self)))
        guard offset >= upperBound, offset + LMDBLayout.nodeHeaderSize <= pageSize else {
            throw damaged(page, "node \(index) at offset \(offset), outside the page's node space")
        }
        func load(_ at: Int) -> UInt16 { UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + at, as: UInt16.self)) }
        let keySize = Int(load(6))
        let keyStart = offset + LMDBLayout.nodeHeaderSize
        guard keyStart + keySize <= pageSize, keySize <= LMDBLayout.maximumKeySize else {
            throw damaged(page, "node \(index) has a \(keySize)-byte key reaching past the page")
        }
        return Node(offset: offset, low: load(0), high: load(2), flags: load(4),
                    key: UnsafeRawBufferPointer(rebasing: bytes[keyStart..<(keyStart + keySize)]))
    }

    /// A leaf node's value: in the page, or in its overflow run.
    private mutating func leafValue(_ bytes: UnsafeRawBufferPointer, node: Node, page: UInt64) throws
        -> UnsafeRawBufferPointer
    {
        let allowed: UInt16 = database.isMain ? LMDBLayout.bigDataNode | LMDBLayout.subDatabaseNode : LMDBLayout.bigDataNode
        guard node.flags & ~allowed == 0, node.flags != LMDBLayout.bigDataNode | LMDBLayout.subDatabaseNode else {
            throw damaged(page, "a node with flags \(node.flags), which this database cannot have")
        }
        guard !node.key.isEmpty else { throw damaged(page, "an empty key") }
        let dataStart = node.offset + LMDBLayout.nodeHeaderSize + node.key.count
        if node.flags & LMDBLayout.bigDataNode == 0 {
            guard dataStart + node.dataSize <= pageSize else {
                throw damaged(page, "a \(node.dataSize)-byte value reaching past the page")
            }
            return UnsafeRawBufferPointer(rebasing: bytes[dataStart..<(dataStart + node.dataSize)])
        }
        guard dataStart + 8 <= pageSize else { throw damaged(page, "an overflow reference reaching past the page") }
        let first = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: dataStart, as: UInt64.self))
        let run = try read(first, from: page)
        let kind = UInt16(littleEndian: run.loadUnaligned(fromByteOffset: 10, as: UInt16.self)) & LMDBLayout.kindFlags
        let pages = UInt64(UInt32(littleEndian: run.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
        guard kind == LMDBLayout.overflowPage, pages >= 1, pages - 1 <= lastPage - first,
              node.dataSize <= Int(pages) * pageSize - LMDBLayout.pageHeaderSize
        else {
            throw damaged(first, "an overflow run (flags \(kind), \(pages) pages) that cannot hold a "
                + "\(node.dataSize)-byte value")
        }
        for extra in 1..<max(1, pages) { try mark(first + extra, from: first) }
        overflowPages += pages
        let start = Int(first) * pageSize + LMDBLayout.pageHeaderSize
        return UnsafeRawBufferPointer(rebasing: file[start..<(start + node.dataSize)])
    }

    // MARK: - Key order

    /// LMDB's order: bytes, then the shorter key first (`mdb_cmp_memn`); integer keys as native
    /// unsigned integers of one width.
    private func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        if integerKeys && a.count == b.count {
            if a.count == 8 {
                let x = UInt64(littleEndian: a.loadUnaligned(as: UInt64.self))
                let y = UInt64(littleEndian: b.loadUnaligned(as: UInt64.self))
                return x == y ? 0 : (x < y ? -1 : 1)
            }
            if a.count == 4 {
                let x = UInt32(littleEndian: a.loadUnaligned(as: UInt32.self))
                let y = UInt32(littleEndian: b.loadUnaligned(as: UInt32.self))
                return x == y ? 0 : (x < y ? -1 : 1)
            }
        }
        let shared = min(a.count, b.count)
        for index in 0..<shared where a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
        return a.count - b.count
    }

    private mutating func checkOrder(_ key: UnsafeRawBufferPointer, page: UInt64, lower: UnsafeRawBufferPointer?) throws {
        if integerKeys {
            guard key.count == 4 || key.count == 8 else { throw damaged(page, "a \(key.count)-byte integer key") }
            if integerWidth == 0 { integerWidth = key.count }
            guard key.count == integerWidth else {
                throw damaged(page, "integer keys of \(integerWidth) and \(key.count) bytes in one database")
            }
        }
        if let previous = previousKey {
            guard compare(previous, key) < 0 else { throw damaged(page, "keys out of order") }
        }
        if let lower, compare(key, lower) < 0 { throw damaged(page, "a key below its parent's separator") }
    }

    private func checkSeparator(_ key: UnsafeRawBufferPointer, page: UInt64, lower: UnsafeRawBufferPointer?,
                                upper: UnsafeRawBufferPointer?) throws
    {
        if let lower, compare(key, lower) < 0 { throw damaged(page, "a separator below its parent's range") }
        if let upper, compare(key, upper) >= 0 { throw damaged(page, "a separator past its parent's range") }
        if let previous = previousKey, compare(key, previous) <= 0 {
            throw damaged(page, "a separator at or before keys already read")
        }
    }
}

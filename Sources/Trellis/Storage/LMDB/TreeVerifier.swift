// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import Foundation

/// Walks every page the newest commit of an LMDB file reaches, with plain reads and bounds
/// checks, before LMDB maps the file.
///
/// LMDB trusts its pages: a damaged page number or node offset inside a B-tree makes it read
/// outside the map or the file, and the process dies (SIGSEGV, SIGBUS), which the file fuzzer
/// showed with Debian's LMDB 0.9.24. Checking the structure first turns that into an error.
///
/// What is checked, per the LMDB 0.9 file format (64-bit): each page number is within the
/// newest commit and reached once; each branch or leaf page names itself, and its node table,
/// nodes, keys and values lie inside it; child and overflow page numbers are in range, and
/// overflow runs fit; named and duplicate sub-databases are walked the same way; free-list
/// entries name pages in range.
struct TreeVerifier {
    /// The file's pages, mapped read-only for the walk (the header check made sure the file
    /// holds every page of the newest commit, and LMDB files never shrink).
    private let file: UnsafeRawBufferPointer
    private let pageSize: Int
    private let lastPage: Int
    private var visited: [UInt64]

    /// Why the structure is damaged.
    struct Damage: Error {
        let reason: String
    }

    /// Checks the tree of the newest commit of the file at `path`; nil when it is sound. A
    /// commit by another process during the walk can make pages of the walked version change:
    /// the walk is then repeated on the new version.
    static func damage(inFileAt path: String) -> String? {
        var lastFailure: String?
        for _ in 0..<3 {
            switch FileHeader.inspect(path: path) {
            case .foreign: return nil // LMDB itself refuses it
            case .damaged(let reason): return reason
            case .header(let header):
                let descriptor = open(path, O_RDONLY)
                guard descriptor >= 0 else { return nil }
                defer { close(descriptor) }
                var status = stat()
                guard fstat(descriptor, &status) == 0, Int(status.st_size) >= header.requiredSize,
                      header.requiredSize > 0, header.requiredSize != Int.max,
                      let map = mmap(nil, header.requiredSize, PROT_READ, MAP_SHARED, descriptor, 0), map != MAP_FAILED
                else { return nil } // too short or unmappable: the header check and LMDB report it
                defer { munmap(map, header.requiredSize) }
                var verifier = TreeVerifier(file: UnsafeRawBufferPointer(start: map, count: header.requiredSize),
                                            header: header)
                do {
                    try verifier.walk(header)
                    return nil
                } catch {
                    lastFailure = error.reason
                }
                // Damage, unless the file moved on to a new commit while it was being read.
                guard case .header(let now) = FileHeader.inspect(path: path), now.transaction != header.transaction
                else { return lastFailure }
            }
        }
        return lastFailure
    }

    private init(file: UnsafeRawBufferPointer, header: FileHeader) {
        self.file = file
        pageSize = header.pageSize
        lastPage = header.lastPage
        visited = [UInt64](repeating: 0, count: max(0, header.lastPage) / 64 + 1)
    }

    // MARK: - Layout (LMDB 0.9, 64-bit)

    private static let databaseRecordSize = 48
    private static let invalidPage = UInt64.max
    /// LMDB's cursor holds at most 32 pages (`CURSOR_STACK`): a deeper tree fails every search
    /// with `MDB_CURSOR_FULL` and leaves the transaction unusable.
    private static let maximumDepth = 32

    private static let duplicateSortFlag: UInt16 = 0x04 // MDB_DUPSORT, in a database record
    /// The flags a database record of a Trellis file may carry: `MDB_INTEGERKEY` and
    /// `MDB_DUPSORT`, the only ones Trellis creates databases with. LMDB keeps unknown flags
    /// when it opens the database but compares the record again in each later transaction,
    /// where an extra bit (such as its own `MDB_VALID`, 0x8000) fails every read with
    /// `MDB_INCOMPATIBLE`; with `MDB_REVERSEKEY` added its searches miss keys its scans find.
    private static let databaseFlags: UInt16 = 0x0C

    /// A database record (`MDB_db`): its key size for fixed-size duplicates, its key order and
    /// its root.
    private struct Database {
        let flags: UInt16
        let fixedKeySize: Int
        let order: KeyOrder
        let allowsDuplicates: Bool
        let entries: UInt64
        let root: UInt64
        /// Its branch, leaf and overflow page counts.
        let pages: [UInt64]

        init(_ bytes: UnsafeRawBufferPointer) {
            fixedKeySize = Int(bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
            flags = bytes.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
            order = KeyOrder(databaseFlags: flags)
            allowsDuplicates = flags & TreeVerifier.duplicateSortFlag != 0
            entries = bytes.loadUnaligned(fromByteOffset: 32, as: UInt64.self)
            root = bytes.loadUnaligned(fromByteOffset: 40, as: UInt64.self)
            pages = [8, 16, 24].map { bytes.loadUnaligned(fromByteOffset: $0, as: UInt64.self) }
        }
    }

    /// The keys a page's subtree may hold: from `lower` (included) to `upper` (excluded); nil is
    /// unbounded.
    private struct KeyRange {
        var lower: UnsafeRawBufferPointer?
        var upper: UnsafeRawBufferPointer?
    }

    /// Which tree a page belongs to, which decides the node flags its leaves may carry.
    private enum TreeKind: Equatable {
        /// The free-page list: plain values (page lists).
        case free
        /// The main tree: named databases (sub-database records), or plain values.
        case main
        /// A named database; with `duplicates` (`MDB_DUPSORT`) its values may be sub-pages or
        /// sub-databases of duplicates.
        case user(duplicates: Bool)
        /// The duplicates of one key: keys only.
        case duplicates
    }

    // MARK: - Walking

    private mutating func walk(_ header: FileHeader) throws(Damage) {
        // Free-list keys are transaction numbers; the main tree's keys are database names.
        try tree(root: header.freeRoot, kind: .free, fixedKeySize: 0, order: .integer)
        try tree(root: header.mainRoot, kind: .main, fixedKeySize: 0, order: .bytes)
    }

    private mutating func tree(root: UInt64, kind: TreeKind, fixedKeySize: Int, order: KeyOrder) throws(Damage) {
        if root == Self.invalidPage { return }
        try walkPage(root, depth: 0, kind: kind, fixedKeySize: fixedKeySize, order: order,
                     range: KeyRange(lower: nil, upper: nil))
    }

    private mutating func walkPage(_ number: UInt64, depth: Int, kind: TreeKind, fixedKeySize: Int, order: KeyOrder,
                                   range: KeyRange) throws(Damage)
    {
        guard depth < Self.maximumDepth else {
            throw Damage(reason: "a B-tree is deeper than \(Self.maximumDepth) levels")
        }
        let bytes = try read(number)
        let flags = bytes.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
        let isBranch = flags & PageFormat.branchFlag != 0, isLeaf = flags & PageFormat.leafFlag != 0
        guard isBranch != isLeaf, flags & (PageFormat.overflowFlag | PageFormat.subpageFlag) == 0 else {
            throw Damage(reason: "page \(number) is not a B-tree page (flags \(flags))")
        }
        if flags & PageFormat.leaf2Flag != 0 {
            guard isLeaf, fixedKeySize > 0 else {
                throw Damage(reason: "page \(number) has fixed-size keys out of place")
            }
            try Self.checkFixedKeys(bytes, 0..<pageSize, keySize: fixedKeySize, page: number)
            return
        }
        let table = try NodeTable(bytes, in: 0..<pageSize, page: number)
        var previous: UnsafeRawBufferPointer?
        for index in 0..<table.count {
            let node = try table.node(index)
            // Keys strictly increase, from the range's lower bound; a branch's first key is
            // implicit (the lower bound itself).
            if !(isBranch && index == 0) {
                try checkOrder(node.key, after: previous ?? range.lower, isFirst: previous == nil, order: order,
                               page: number)
                previous = node.key
            }
            if isBranch {
                let upper = index == table.count - 1 ? range.upper : try table.node(index + 1).key
                try walkPage(node.header.childPage, depth: depth + 1, kind: kind, fixedKeySize: fixedKeySize,
                             order: order, range: KeyRange(lower: index == 0 ? range.lower : node.key, upper: upper))
            } else {
                try leaf(node.header, at: node.offset, end: pageSize, in: bytes, page: number, kind: kind,
                         fixedKeySize: fixedKeySize)
            }
        }
        if let upper = range.upper, let last = previous, order.isBefore(last, upper) != true {
            throw Damage(reason: "page \(number) has a key beyond its parent's range")
        }
    }

    /// One key against the one before it (or, for a page's first key, the lower bound its
    /// parent gives it). Out of order, LMDB's searches miss keys that a scan finds.
    private func checkOrder(_ key: UnsafeRawBufferPointer, after previous: UnsafeRawBufferPointer?, isFirst: Bool,
                            order: KeyOrder, page number: UInt64) throws(Damage)
    {
        guard let previous else { return }
        if case .unchecked = order { return }
        if isFirst {
            // The lower bound itself may be the first key.
            guard order.isBefore(key, previous) == false else {
                throw Damage(reason: "page \(number) has a key below its parent's range")
            }
        } else if order.isBefore(previous, key) != true {
            throw Damage(reason: "page \(number) has keys out of order")
        }
    }

    /// One leaf node: its value inside the page, or its overflow run, or its sub-database or
    /// sub-page.
    private mutating func leaf(_ header: NodeHeader, at offset: Int, end: Int, in bytes: UnsafeRawBufferPointer,
                               page number: UInt64, kind: TreeKind, fixedKeySize: Int) throws(Damage)
    {
        let dataStart = offset + PageFormat.nodeHeaderSize + header.keySize
        // LMDB follows these flags wherever it finds them: a sub-database or duplicates flag
        // where the database has none would send it to a page that is not one.
        let kindFlags = header.flags & (PageFormat.subDatabaseNode | PageFormat.duplicatesNode)
        let allowed: Bool = switch kind {
        case .main: kindFlags == 0 || kindFlags == PageFormat.subDatabaseNode
        case .user(duplicates: true): kindFlags != PageFormat.subDatabaseNode
        case .user(duplicates: false), .free, .duplicates: kindFlags == 0
        }
        guard allowed, header.flags & ~(PageFormat.bigDataNode | PageFormat.subDatabaseNode | PageFormat.duplicatesNode) == 0,
              kindFlags == 0 || header.flags & PageFormat.bigDataNode == 0
        else { throw Damage(reason: "page \(number) has a node with flags \(header.flags) out of place") }
        if header.flags & PageFormat.bigDataNode != 0 {
            guard dataStart + 8 <= end else { throw Damage(reason: "page \(number) has a node reaching past its end") }
            let first = bytes.loadUnaligned(fromByteOffset: dataStart, as: UInt64.self)
            try overflow(first, dataSize: header.dataSize, from: number)
            return
        }
        guard dataStart + header.dataSize <= end else {
            throw Damage(reason: "page \(number) has a node reaching past its end")
        }
        let data = dataStart..<(dataStart + header.dataSize)
        if header.flags & PageFormat.subDatabaseNode != 0 {
            guard data.count == Self.databaseRecordSize else {
                throw Damage(reason: "page \(number) has a sub-database record of \(data.count) bytes")
            }
            let database = Database(UnsafeRawBufferPointer(rebasing: bytes[data]))
            guard database.flags & ~Self.databaseFlags == 0 else {
                throw Damage(reason: "page \(number) gives a database the flags \(database.flags), which Trellis never sets")
            }
            // Page counts size the file's data (compaction): each must fit in the file.
            guard database.pages.allSatisfy({ $0 <= UInt64(lastPage) }) else {
                throw Damage(reason: "page \(number) gives a database more pages than the file holds")
            }
            // Every entry takes at least a 10-byte node of the file (callers size buffers by it).
            guard database.entries <= UInt64(file.count / 10) else {
                throw Damage(reason: "page \(number) gives a database \(database.entries) entries, more than the file "
                    + "holds")
            }
            let subKind: TreeKind = kind == .main ? .user(duplicates: database.allowsDuplicates) : .duplicates
            try tree(root: database.root, kind: subKind, fixedKeySize: database.fixedKeySize,
                     order: kind == .main ? database.order : .unchecked)
        } else if header.flags & PageFormat.duplicatesNode != 0 {
            try subpage(bytes, data, page: number)
        } else if kind == .free {
            try freeList(bytes, data, page: number)
        }
    }

    /// Duplicates kept inside the node: a small page of their own.
    private func subpage(_ bytes: UnsafeRawBufferPointer, _ data: Range<Int>, page: UInt64) throws(Damage) {
        guard data.count >= PageFormat.headerSize else {
            throw Damage(reason: "page \(page) has a truncated duplicate sub-page")
        }
        let flags = bytes.loadUnaligned(fromByteOffset: data.lowerBound + 10, as: UInt16.self)
        guard flags & PageFormat.leafFlag != 0, flags & PageFormat.subpageFlag != 0 else {
            throw Damage(reason: "page \(page) has a duplicate sub-page with flags \(flags)")
        }
        if flags & PageFormat.leaf2Flag != 0 {
            // A sub-page of fixed-size duplicates keeps their size in its header's pad field.
            let keySize = Int(bytes.loadUnaligned(fromByteOffset: data.lowerBound + 8, as: UInt16.self))
            try Self.checkFixedKeys(bytes, data, keySize: keySize, page: page)
        } else {
            let table = try NodeTable(bytes, in: data, page: page)
            for index in 0..<table.count where try table.node(index).header.flags != 0 {
                throw Damage(reason: "page \(page) has a duplicate with node flags")
            }
        }
    }

    private mutating func overflow(_ first: UInt64, dataSize: Int, from page: UInt64) throws(Damage) {
        let bytes = try read(first)
        let flags = bytes.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
        let pages = Int(bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard flags & PageFormat.overflowFlag != 0, pages >= 1, Int(first) + pages - 1 <= lastPage,
              dataSize <= pages * pageSize - PageFormat.headerSize
        else { throw Damage(reason: "page \(page) has a value whose overflow pages at \(first) are damaged") }
        for extra in 1..<pages { try mark(first + UInt64(extra)) }
    }

    private func freeList(_ bytes: UnsafeRawBufferPointer, _ data: Range<Int>, page: UInt64) throws(Damage) {
        guard data.count >= 8, data.count % 8 == 0 else { throw Damage(reason: "page \(page) has a damaged free list") }
        let lastPage = UInt64(self.lastPage)
        let count = bytes.loadUnaligned(fromByteOffset: data.lowerBound, as: UInt64.self)
        guard count <= UInt64(data.count / 8 - 1) else { throw Damage(reason: "page \(page) has a damaged free list") }
        for index in 0..<Int(count) {
            let free = bytes.loadUnaligned(fromByteOffset: data.lowerBound + 8 + index * 8, as: UInt64.self)
            if free < 2 || free > lastPage {
                throw Damage(reason: "page \(page) lists free page \(free), outside the file")
            }
        }
    }

    // MARK: - Pages and nodes

    /// Page `number` (once: a page reached twice means the tree is damaged).
    private mutating func read(_ number: UInt64) throws(Damage) -> UnsafeRawBufferPointer {
        try mark(number)
        let page = UnsafeRawBufferPointer(rebasing: file[(Int(number) * pageSize)..<((Int(number) + 1) * pageSize)])
        let named = page.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        guard named == number else { throw Damage(reason: "page \(number) says it is page \(named)") }
        return page
    }

    private mutating func mark(_ number: UInt64) throws(Damage) {
        guard number >= 2, number <= UInt64(lastPage) else {
            throw Damage(reason: "a link to page \(number), outside the newest commit (pages 2-\(lastPage))")
        }
        let word = Int(number / 64), bit = UInt64(1) << (number % 64)
        guard visited[word] & bit == 0 else { throw Damage(reason: "page \(number) is reached twice") }
        visited[word] |= bit
    }

    private struct NodeHeader {
        let low: UInt16, high: UInt16, flags: UInt16, keySize: Int
        var dataSize: Int { Int(low) | Int(high) << 16 }
        var childPage: UInt64 { UInt64(low) | UInt64(high) << 16 | UInt64(flags) << 32 }
    }

    private static func nodeHeader(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> NodeHeader {
        NodeHeader(low: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self),
                   high: bytes.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self),
                   flags: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self),
                   keySize: Int(bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self)))
    }

    /// The node table of the (sub-)page occupying `range` of `bytes`, checked as each node is
    /// asked for: it lies between the table and the page's end, and so does its key. No
    /// allocation: a walk visits every node of the file.
    private struct NodeTable {
        let bytes: UnsafeRawBufferPointer
        let range: Range<Int>
        let upper: Int
        let count: Int
        let page: UInt64

        init(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>, page: UInt64) throws(Damage) {
            let lower = Int(bytes.loadUnaligned(fromByteOffset: range.lowerBound + 12, as: UInt16.self))
            let upper = Int(bytes.loadUnaligned(fromByteOffset: range.lowerBound + 14, as: UInt16.self))
            guard lower >= PageFormat.headerSize, lower <= upper, upper <= range.count,
                  (lower - PageFormat.headerSize) % 2 == 0
            else { throw Damage(reason: "page \(page) has a damaged node table (lower \(lower), upper \(upper))") }
            self.bytes = bytes
            self.range = range
            self.upper = upper
            self.page = page
            count = (lower - PageFormat.headerSize) / 2
        }

        /// Node `index`: its offset in `bytes`, header and key.
        func node(_ index: Int) throws(Damage) -> (offset: Int, header: NodeHeader, key: UnsafeRawBufferPointer) {
            let relative = Int(bytes.loadUnaligned(fromByteOffset: range.lowerBound + PageFormat.headerSize + index * 2,
                                                   as: UInt16.self))
            guard relative >= upper, relative + PageFormat.nodeHeaderSize <= range.count else {
                throw Damage(reason: "page \(page) has a node at offset \(relative), outside its node space")
            }
            let offset = range.lowerBound + relative
            let header = TreeVerifier.nodeHeader(bytes, at: offset)
            let keyStart = offset + PageFormat.nodeHeaderSize
            guard keyStart + header.keySize <= range.upperBound else {
                throw Damage(reason: "page \(page) has a key reaching past its end")
            }
            return (offset, header, UnsafeRawBufferPointer(rebasing: bytes[keyStart..<(keyStart + header.keySize)]))
        }
    }

    /// Fixed-size keys packed after the header (`MDB_DUPFIXED`).
    private static func checkFixedKeys(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, keySize: Int,
                                       page: UInt64) throws(Damage)
    {
        let lower = Int(bytes.loadUnaligned(fromByteOffset: range.lowerBound + 12, as: UInt16.self))
        guard lower >= PageFormat.headerSize, keySize > 0,
              PageFormat.headerSize + (lower - PageFormat.headerSize) / 2 * keySize <= range.count
        else {
            throw Damage(reason: "page \(page) has damaged fixed-size keys")
        }
    }
}
#endif

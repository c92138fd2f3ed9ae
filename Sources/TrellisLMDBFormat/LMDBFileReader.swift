/// Reads a file written by LMDB 0.9 (64-bit): every database and entry of its newest commit,
/// with no LMDB code. Trellis versions before TrellisStorage stored their data this way.
///
/// Every length, offset, page number, flag, key order and count read from the file is checked
/// before it is used, so a damaged file gives `LMDBFormatError` (`damagedFile(page:)`), never a
/// trap or a read outside the file. Values are lent in place from a read-only map of the file;
/// the file must not change while a reader is open (the conversion holds LMDB's own lock).
///
/// ```swift
/// let reader = try LMDBFileReader(path: "/data/app.realm")
/// for database in try reader.namedDatabases() {
///     try reader.forEachEntry(in: database) { key, value in /* … */ }
/// }
/// ```
public final class LMDBFileReader {
    /// The file's path.
    public let path: String
    /// The page size the file was written with.
    public let pageSize: Int
    /// The newest commit's transaction number (the meta page read).
    public let transactionID: UInt64
    /// The highest page number the newest commit uses.
    public let lastPage: UInt64
    /// The main database.
    public let mainDatabase: LMDBDatabase
    private let map: UpgradePlatform.MappedFile

    /// Opens the file and reads its meta pages: the newer valid one (magic, version, page size,
    /// flags, root and last page inside the file) is used.
    ///
    /// - Throws: `LMDBFormatError` `notLMDBFile` when neither meta page is LMDB's,
    ///   `damagedFile(page:)` when the file cannot hold what its newest meta page says, `io`.
    public init(path: String) throws {
        self.path = path
        guard let head = UpgradePlatform.prefix(path: path, count: LMDBLayout.metaSize) else {
            throw LMDBFormatError.io("open", path: path, errno: 2)
        }
        guard let fileSize = UpgradePlatform.size(path: path) else {
            throw LMDBFormatError.io("stat", path: path, errno: 2)
        }
        let meta = try Self.newestMeta(path: path, head: head, fileSize: fileSize)
        pageSize = meta.pageSize
        transactionID = meta.transaction
        lastPage = meta.lastPage
        mainDatabase = LMDBDatabase(nameBytes: [], isMain: true, record: meta.main)
        // The header check made sure the file holds every page of the commit.
        map = try UpgradePlatform.MappedFile(path: path, length: (Int(meta.lastPage) + 1) * meta.pageSize)
        guard map.bytes.count == (Int(meta.lastPage) + 1) * meta.pageSize else {
            throw LMDBFormatError.damaged(path, page: meta.lastPage, "the file is shorter than its last page")
        }
    }

    deinit { map.close() }

    /// Unmaps the file. Values lent earlier are invalid afterwards.
    public func close() { map.close() }

    /// Whether the file at `path` has an LMDB meta page (page 0, or page 1 at any possible page
    /// size when page 0 is damaged); it may still be damaged.
    public static func looksLikeLMDB(path: String) -> Bool {
        guard let head = UpgradePlatform.prefix(path: path, count: 65536 + LMDBLayout.metaSize) else { return false }
        func hasMagic(at page: Int) -> Bool {
            guard page + LMDBLayout.metaSize <= head.count else { return false }
            return head.withUnsafeBytes { bytes in
                UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: page + LMDBLayout.metaMagicOffset, as: UInt32.self))
                    == LMDBLayout.magic
            }
        }
        return hasMagic(at: 0) || (9...16).contains { hasMagic(at: 1 << $0) }
    }

    // MARK: - Databases

    /// Every named database, in the main database's (byte) order. Walks the main database,
    /// checking its pages.
    public func namedDatabases() throws -> [LMDBDatabase] {
        var databases: [LMDBDatabase] = []
        try walk(mainDatabase) { key, value, flags, page in
            guard flags & LMDBLayout.subDatabaseNode != 0 else { return }
            guard value.count == LMDBLayout.databaseRecordSize else {
                throw LMDBFormatError.damaged(path, page: page, "a database record of \(value.count) bytes")
            }
            let record = DatabaseRecord(value, at: 0)
            databases.append(LMDBDatabase(nameBytes: Array(key), isMain: false, record: record))
        }
        return databases
    }

    /// The entries of the main database that are not named databases (Trellis writes none).
    public func plainMainEntryCount() throws -> Int {
        var count = 0
        try walk(mainDatabase) { _, _, flags, _ in
            if flags & LMDBLayout.subDatabaseNode == 0 { count += 1 }
        }
        return count
    }

    /// Calls `body` with every entry of `database` in key order: the key and the value, lent
    /// from the map (valid only inside `body`). For the main database, only its plain entries
    /// (not the named databases' records).
    ///
    /// The walk checks the whole tree: page numbers inside the commit and reached once, pages
    /// that name themselves, branch and leaf structure, every node and value inside its page or
    /// overflow run, keys in strictly increasing order within their parent's range, every leaf
    /// at the recorded depth, and the record's entry and page counts.
    ///
    /// - Throws: `unsupportedDatabase` for sorted duplicates or reversed keys (which no Trellis
    ///   version created), `damagedFile(page:)`, or what `body` throws.
    public func forEachEntry(in database: LMDBDatabase,
                             _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws
    {
        try walk(database) { key, value, flags, _ in
            if database.isMain && flags & LMDBLayout.subDatabaseNode != 0 { return }
            try body(key, value)
        }
    }

    private func walk(_ database: LMDBDatabase,
                      _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UInt16, UInt64) throws -> Void) throws
    {
        if database.hasSortedDuplicates || database.hasReversedKeys
            || database.flags & (LMDBLayout.fixedDuplicates | LMDBLayout.integerDuplicates | LMDBLayout.reverseDuplicates) != 0
        {
            let what = database.hasReversedKeys && !database.hasSortedDuplicates ? "reversed keys (MDB_REVERSEKEY)"
                : "sorted duplicate values (MDB_DUPSORT)"
            throw LMDBFormatError(.unsupportedDatabase(name: database.displayName),
                                  "The database '\(database.displayName)' of '\(path)' has \(what), which no Trellis "
                                      + "version created and the conversion does not carry over; nothing was converted. "
                                      + "Copy its entries out with LMDB's tools (mdb_dump) first.")
        }
        guard database.flags & ~LMDBLayout.databaseFlags == 0 else {
            throw LMDBFormatError.damaged(path, page: 0, "the database '\(database.displayName)' has the unknown "
                                              + "flags \(database.flags)")
        }
        var walk = TreeWalk(file: map.bytes, path: path, pageSize: pageSize, lastPage: lastPage,
                            database: database)
        try walk.run(body)
    }

    // MARK: - Meta pages

    struct Meta {
        let pageSize: Int
        let lastPage: UInt64
        let transaction: UInt64
        let main: DatabaseRecord
    }

    /// The newer of the two meta pages that are valid.
    static func newestMeta(path: String, head: [UInt8], fileSize: Int) throws -> Meta {
        guard head.count == LMDBLayout.metaSize else {
            throw LMDBFormatError(.notLMDBFile, "'\(path)' is not an LMDB-format Trellis file (it is too short).")
        }
        // The page size is in meta page 0 (the free database's pad); if that page is damaged,
        // page 1 is looked for at each possible page size.
        let firstSize = head.withUnsafeBytes {
            Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: LMDBLayout.metaFreeDatabaseOffset, as: UInt32.self)))
        }
        var candidates: [(page: Int, bytes: [UInt8])] = [(0, head)]
        let sizes = isPossiblePageSize(firstSize) ? [firstSize] : (9...16).map { 1 << $0 }
        for size in sizes {
            guard let bytes = read(path: path, at: size, count: LMDBLayout.metaSize), bytes.count == LMDBLayout.metaSize
            else { continue }
            candidates.append((1, bytes))
            if sizes.count == 1 { break }
        }
        var valid: [Meta] = []
        var problems: [String] = []
        var sawMagic = false
        for candidate in candidates {
            switch checkMeta(candidate.bytes, page: candidate.page, fileSize: fileSize) {
            case .valid(let meta): valid.append(meta)
            case .invalid(let problem): sawMagic = true; problems.append(problem)
            case .notMeta: break
            }
        }
        guard let newest = valid.max(by: { $0.transaction < $1.transaction }) else {
            if sawMagic {
                throw LMDBFormatError.damaged(path, page: 0, "no valid meta page: " + problems.joined(separator: "; "))
            }
            throw LMDBFormatError(.notLMDBFile, "'\(path)' is not an LMDB-format Trellis file (no LMDB meta page).")
        }
        return newest
    }

    private static func isPossiblePageSize(_ size: Int) -> Bool {
        size >= 512 && size <= 65536 && size.nonzeroBitCount == 1
    }

    private static func read(path: String, at offset: Int, count: Int) -> [UInt8]? {
        guard let bytes = UpgradePlatform.prefix(path: path, count: offset + count), bytes.count == offset + count else {
            return nil
        }
        return Array(bytes[offset...])
    }

    private enum MetaCheck {
        case valid(Meta)
        case invalid(String)
        case notMeta
    }

    private static func checkMeta(_ bytes: [UInt8], page: Int, fileSize: Int) -> MetaCheck {
        bytes.withUnsafeBytes { raw in
            func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
                T(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            guard load(LMDBLayout.metaMagicOffset, UInt32.self) == LMDBLayout.magic else { return .notMeta }
            let version = load(LMDBLayout.metaVersionOffset, UInt32.self)
            guard version == LMDBLayout.dataVersion else {
                return .invalid("meta page \(page) has format version \(version), not LMDB 0.9's \(LMDBLayout.dataVersion)")
            }
            guard load(0, UInt64.self) == UInt64(page),
                  load(10, UInt16.self) & LMDBLayout.kindFlags == LMDBLayout.metaPage
            else { return .invalid("meta page \(page) does not name itself a meta page") }
            let pageSize = Int(load(LMDBLayout.metaFreeDatabaseOffset, UInt32.self))
            guard isPossiblePageSize(pageSize) else { return .invalid("meta page \(page) gives the page size \(pageSize)") }
            let transaction = load(LMDBLayout.metaTransactionOffset, UInt64.self)
            // LMDB writes transaction t to meta page t & 1 (both hold 0 in a new file).
            guard transaction == 0 || Int(transaction & 1) == page else {
                return .invalid("meta page \(page) holds transaction \(transaction), which belongs on the other page")
            }
            let lastPage = load(LMDBLayout.metaLastPageOffset, UInt64.self)
            let pages = UInt64(fileSize / pageSize)
            guard lastPage >= 1, lastPage < pages else {
                return .invalid("meta page \(page) counts \(lastPage &+ 1) pages, the file holds \(pages)")
            }
            let main = DatabaseRecord(raw, at: LMDBLayout.metaMainDatabaseOffset)
            guard main.root == LMDBLayout.noPage || (main.root >= 2 && main.root <= lastPage) else {
                return .invalid("meta page \(page) gives the main database the root page \(main.root)")
            }
            // The main database holds names in byte order, one value each.
            guard main.flags & LMDBLayout.databaseFlags == 0 else {
                return .invalid("meta page \(page) gives the main database the flags \(main.flags)")
            }
            return .valid(Meta(pageSize: pageSize, lastPage: lastPage, transaction: transaction, main: main))
        }
    }
}

/// LMDB 0.9's on-disk format (64-bit builds, little-endian), as far as the reader needs it.
/// Learned from LMDB's `mdb.c` and Trellis's own in-place readers of its pages
/// (`Sources/Trellis/Storage/PageFormat.swift`, `TreeVerifier.swift`); no LMDB code.
///
/// - A file is a sequence of pages of `pageSize` bytes; page `n` starts at `n * pageSize`.
///   Pages 0 and 1 are the meta pages; commits alternate between them (transaction `t` is
///   written to page `t & 1`), and a reader uses the one with the newer transaction.
/// - Every page starts with a 16-byte header: its own number (8), a pad (2), flags (2), then
///   the lower and upper bounds of its free space (2 + 2), or for an overflow run the number
///   of its pages (4).
/// - Branch and leaf pages hold a table of 2-byte node offsets after the header
///   (`(lower - 16) / 2` of them), in key order; each node is an 8-byte header (data size, or
///   a branch's child page number, in three 16-bit words; flags; key size) then the key, then
///   (in leaves) the value, or the first page of the value's overflow run.
enum LMDBLayout {
    static let pageHeaderSize = 16
    static let nodeHeaderSize = 8
    static let magic: UInt32 = 0xBEEF_C0DE
    /// `MDB_DATA_VERSION` of LMDB 0.9.
    static let dataVersion: UInt32 = 1
    /// The root of an empty database (`P_INVALID`).
    static let noPage = UInt64.max
    /// LMDB's cursors hold at most 32 pages (`CURSOR_STACK`): no tree is deeper.
    static let maximumDepth = 32
    /// `MDB_MAXKEYSIZE` of a default build.
    static let maximumKeySize = 511

    // Page flags.
    static let branchPage: UInt16 = 0x01
    static let leafPage: UInt16 = 0x02
    static let overflowPage: UInt16 = 0x04
    static let metaPage: UInt16 = 0x08
    static let fixedKeysPage: UInt16 = 0x20
    static let subPage: UInt16 = 0x40
    /// The flags that say what a page is (the others are LMDB's in-memory marks).
    static let kindFlags: UInt16 = branchPage | leafPage | overflowPage | metaPage | fixedKeysPage | subPage

    // Node flags.
    static let bigDataNode: UInt16 = 0x01
    static let subDatabaseNode: UInt16 = 0x02
    static let duplicatesNode: UInt16 = 0x04

    // Database flags (`MDB_db.md_flags`).
    static let reverseKeys: UInt16 = 0x02
    static let sortedDuplicates: UInt16 = 0x04
    static let integerKeys: UInt16 = 0x08
    static let fixedDuplicates: UInt16 = 0x10
    static let integerDuplicates: UInt16 = 0x20
    static let reverseDuplicates: UInt16 = 0x40
    static let databaseFlags: UInt16 = 0x7E

    // A meta page: the page header, then MDB_meta: magic (4), version (4), map address (8),
    // map size (8), the free-page and main database records (48 each), last page (8),
    // transaction (8).
    static let metaMagicOffset = 16
    static let metaVersionOffset = 20
    static let metaFreeDatabaseOffset = 40
    static let metaMainDatabaseOffset = 88
    static let metaLastPageOffset = 136
    static let metaTransactionOffset = 144
    static let metaSize = 152

    /// A database record (`MDB_db`): pad (4; the free database's holds the page size), flags
    /// (2), depth (2), branch, leaf and overflow page counts, entries, root (8 each).
    static let databaseRecordSize = 48
}

/// A database record of an LMDB file, as stored in a meta page (main database) or a leaf of the
/// main database (named database).
struct DatabaseRecord: Equatable {
    let pad: UInt32
    let flags: UInt16
    let depth: Int
    let branchPages: UInt64
    let leafPages: UInt64
    let overflowPages: UInt64
    let entries: UInt64
    let root: UInt64

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        func load<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + at, as: T.self))
        }
        pad = load(0, UInt32.self)
        flags = load(4, UInt16.self)
        depth = Int(load(6, UInt16.self))
        branchPages = load(8, UInt64.self)
        leafPages = load(16, UInt64.self)
        overflowPages = load(24, UInt64.self)
        entries = load(32, UInt64.self)
        root = load(40, UInt64.self)
    }
}

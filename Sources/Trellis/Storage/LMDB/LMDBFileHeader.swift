// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import Foundation

/// What the two LMDB meta pages at the start of a file say, read with plain file I/O before
/// the file is mapped.
///
/// LMDB trusts its file: a file cut short after its last commit is mapped, and the first read
/// of a page past the end kills the process with SIGBUS. Reading the header first turns that
/// into an error.
struct FileHeader {
    /// The page size the file was written with.
    let pageSize: Int
    /// The highest page number the newest commit uses.
    let lastPage: Int
    /// The newest commit's transaction number.
    let transaction: UInt64
    /// The root pages of the newest commit's free-page and main trees (`UInt64.max`: empty).
    let freeRoot: UInt64
    let mainRoot: UInt64

    /// The smallest file that holds every page of the newest commit (`Int.max` for a page
    /// number no file can reach).
    var requiredSize: Int {
        let pages = lastPage.addingReportingOverflow(1)
        let bytes = pages.partialValue.multipliedReportingOverflow(by: pageSize)
        return pages.overflow || bytes.overflow || lastPage < 0 ? Int.max : bytes.partialValue
    }

    /// What the start of a file is.
    enum Reading {
        /// Not an LMDB file (LMDB reports it as invalid).
        case foreign
        /// An LMDB header LMDB itself would trust but must not: it would divide by a page size
        /// of 0 or map the file with an impossible one.
        case damaged(String)
        case header(FileHeader)
    }

    /// Reads and checks the header of the file at `path`: the meta page LMDB will use, the one
    /// with the newer transaction.
    static func inspect(path: String) -> Reading {
        guard let handle = FileHandle(forReadingAtPath: path) else { return .foreign }
        defer { try? handle.close() }
        guard let first = try? handle.read(upToCount: 256), first.count >= transactionOffset + 8,
              let meta0 = Meta(first)
        else { return .foreign }
        guard meta0.pageSizeIsPossible else { return .damaged("its header gives an impossible page size") }
        var newest = meta0
        if (try? handle.seek(toOffset: UInt64(meta0.pageSize))) != nil,
           let second = try? handle.read(upToCount: 256), let meta1 = Meta(second)
        {
            // LMDB reads the meta page the newest transaction number's parity names (commits
            // alternate between the two): the newest meta must be on that page, or LMDB would
            // use the other one's roots.
            let transaction = max(meta0.transaction, meta1.transaction)
            newest = transaction & 1 == 0 ? meta0 : meta1
            if newest.transaction != transaction {
                return .damaged("its newest header (transaction \(transaction)) is on the wrong meta page")
            }
        }
        if let problem = newest.problem { return .damaged(problem) }
        return .header(FileHeader(pageSize: meta0.pageSize, lastPage: newest.lastPage, transaction: newest.transaction,
                                  freeRoot: newest.roots[0], mainRoot: newest.roots[1]))
    }

    private static let magic: UInt32 = 0xBEEF_C0DE
    // Offsets in a meta page (64-bit LMDB): a 16-byte page header, then MDB_meta.
    private static let magicOffset = 16
    private static let pageSizeOffset = 40 // mm_dbs[FREE_DBI].md_pad holds the page size
    private static let lastPageOffset = 136
    // mm_dbs[i].md_root: the root pages of the free-page and main trees (48-byte MDB_db each).
    private static let rootOffsets = [40 + 40, 40 + 48 + 40]
    // mm_dbs[i].md_flags. The free-page tree's also holds the environment's flags (LMDB's
    // `mm_flags`), so only its database bits are checked.
    private static let flagsOffsets = [40 + 4, 40 + 48 + 4]
    private static let transactionOffset = 144

    /// One meta page, with what is wrong with it, if anything.
    private struct Meta {
        let pageSize: Int
        let lastPage: Int
        let transaction: UInt64
        let roots: [UInt64]
        /// The database flags (`MDB_REVERSEKEY` … `MDB_REVERSEDUP`) of the free-page and main trees.
        let databaseFlags: [UInt16]

        var pageSizeIsPossible: Bool { pageSize >= 512 && pageSize <= 65536 && pageSize.nonzeroBitCount == 1 }

        /// Why LMDB must not use this meta page; nil when it may.
        var problem: String? {
            if !pageSizeIsPossible { return "its header gives an impossible page size" }
            // Debian's LMDB (0.9.24) follows a root page number without checking it against the
            // last page, and reads past the end of the file (SIGBUS).
            for root in roots where root != UInt64.max && (root < 2 || root > UInt64(max(lastPage, 0))) {
                return "its header gives the impossible root page \(root) (the last page is \(lastPage))"
            }
            // LMDB keeps its free pages by integer key; Trellis's main tree holds database names,
            // in byte order, and never duplicates. LMDB follows other flags: with MDB_DUPSORT or
            // MDB_INTEGERKEY on the main tree it finds none of the databases, and the file would
            // read as empty.
            if databaseFlags != [0x08, 0] {
                return "its header gives the free-page and main trees the flags \(databaseFlags)"
            }
            return nil
        }

        init?(_ bytes: Data) {
            guard bytes.count >= FileHeader.transactionOffset + 8 else { return nil }
            func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
                bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
            }
            guard load(FileHeader.magicOffset, UInt32.self) == FileHeader.magic else { return nil }
            pageSize = Int(load(FileHeader.pageSizeOffset, UInt32.self))
            lastPage = Int(truncatingIfNeeded: load(FileHeader.lastPageOffset, UInt64.self))
            transaction = load(FileHeader.transactionOffset, UInt64.self)
            roots = FileHeader.rootOffsets.map { load($0, UInt64.self) }
            databaseFlags = FileHeader.flagsOffsets.map { load($0, UInt16.self) & 0x7E }
        }
    }
}
#endif

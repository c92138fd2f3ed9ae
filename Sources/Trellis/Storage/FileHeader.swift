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

    /// The smallest file that holds every page of the newest commit.
    var requiredSize: Int { (lastPage + 1) * pageSize }

    private static let magic: UInt32 = 0xBEEF_C0DE
    // Offsets in a meta page (64-bit LMDB): a 16-byte page header, then MDB_meta.
    private static let magicOffset = 16
    private static let pageSizeOffset = 40 // mm_dbs[FREE_DBI].md_pad holds the page size
    private static let lastPageOffset = 136
    private static let transactionOffset = 144

    /// Reads the header of the file at `path`; nil when it does not start like an LMDB file
    /// (LMDB then reports it as invalid) or cannot be read.
    static func read(path: String) -> FileHeader? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let first = try? handle.read(upToCount: 4096), let meta0 = Meta(first) else { return nil }
        var newest = meta0
        if (try? handle.seek(toOffset: UInt64(meta0.pageSize))) != nil,
           let second = try? handle.read(upToCount: 256), let meta1 = Meta(second), meta1.transaction > meta0.transaction
        {
            newest = meta1
        }
        return FileHeader(pageSize: meta0.pageSize, lastPage: newest.lastPage)
    }

    private struct Meta {
        let pageSize: Int
        let lastPage: Int
        let transaction: UInt64

        init?(_ bytes: Data) {
            guard bytes.count >= FileHeader.transactionOffset + 8 else { return nil }
            func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
                bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
            }
            guard load(FileHeader.magicOffset, UInt32.self) == FileHeader.magic else { return nil }
            let pageSize = Int(load(FileHeader.pageSizeOffset, UInt32.self))
            guard pageSize >= 512, pageSize.nonzeroBitCount == 1 else { return nil }
            self.pageSize = pageSize
            lastPage = Int(truncatingIfNeeded: load(FileHeader.lastPageOffset, UInt64.self))
            transaction = load(FileHeader.transactionOffset, UInt64.self)
        }
    }
}

// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
/// The parts of LMDB 0.9's page format (64-bit) that Trellis reads itself: ``TreeVerifier``
/// checks a file's pages before LMDB maps it; ``TreePage`` and ``TreeSearch`` read pages in place.
enum PageFormat {
    /// A page's header: page number (8 bytes), pad (2), flags (2), lower and upper bounds of the
    /// free space (2 + 2); the node table follows.
    static let headerSize = 16
    /// A node's header: data size (low and high 16 bits, or a child page number), flags, key size.
    static let nodeHeaderSize = 8

    // Page flags.
    static let branchFlag: UInt16 = 0x01
    static let leafFlag: UInt16 = 0x02
    static let overflowFlag: UInt16 = 0x04
    static let leaf2Flag: UInt16 = 0x20
    static let subpageFlag: UInt16 = 0x40

    // Node flags.
    /// The value is on overflow pages; the node holds their first page number.
    static let bigDataNode: UInt16 = 0x01
    static let subDatabaseNode: UInt16 = 0x02
    static let duplicatesNode: UInt16 = 0x04
}
#endif

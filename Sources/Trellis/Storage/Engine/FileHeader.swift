// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import TrellisStorage

/// What the start of a file says, read with plain file I/O before the engine opens it: a
/// TrellisStorage file, a file of an earlier Trellis (LMDB's format), or something else.
struct FileHeader {
    /// The smallest file that holds a TrellisStorage file's header and meta slots.
    let requiredSize: Int

    /// What the start of a file is.
    enum Reading {
        /// Not a Trellis file of either format.
        case foreign
        /// A header that cannot be right (not used by this build: the engine checks its own).
        case damaged(String)
        /// A TrellisStorage file.
        case header(FileHeader)
        /// A file written by a Trellis built on LMDB (its meta page's magic): it must be
        /// converted (`trellis upgrade FILE`) before this build can open it.
        case lmdbFormat
    }

    /// Bytes of a TrellisStorage file's header and meta slots (plain pages).
    static let smallestFileSize = 3 * StorageLimits.pageSize

    /// "TRLSTORE" read little-endian: the first 8 bytes of a TrellisStorage file.
    private static let storageMagic: UInt64 = 0x4552_4F54_534C_5254
    /// LMDB's magic, at byte 16 of its first meta page.
    private static let lmdbMagic: UInt32 = 0xBEEF_C0DE

    /// Reads the start of the file at `path`.
    static func inspect(path: String) -> Reading {
        guard let handle = FileHandle(forReadingAtPath: path) else { return .foreign }
        defer { try? handle.close() }
        guard let start = try? handle.read(upToCount: 32), start.count >= 20 else { return .foreign }
        let magic = start.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self) }
        if UInt64(littleEndian: magic) == storageMagic {
            return .header(FileHeader(requiredSize: smallestFileSize))
        }
        let lmdb = start.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt32.self) }
        if lmdb == lmdbMagic { return .lmdbFormat }
        return .foreign
    }
}
#endif

// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import Foundation

/// How an LMDB database orders its keys, so that a walk over its pages can check the order:
/// byte-wise (the default), or as native unsigned integers (`MDB_INTEGERKEY`).
enum KeyOrder {
    case bytes
    case integer
    /// An order the walk does not check (`MDB_REVERSEKEY`).
    case unchecked

    private static let reverseKeyFlag: UInt16 = 0x02
    private static let integerKeyFlag: UInt16 = 0x08

    /// The order of a database with these `MDB_db` flags.
    init(databaseFlags flags: UInt16) {
        if flags & Self.reverseKeyFlag != 0 {
            self = .unchecked
        } else if flags & Self.integerKeyFlag != 0 {
            self = .integer
        } else {
            self = .bytes
        }
    }

    /// Whether `a` sorts before `b`; nil when the keys cannot be compared (an integer key that
    /// is neither 4 nor 8 bytes long, or keys of different lengths).
    func isBefore(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool? {
        switch self {
        case .unchecked:
            return true
        case .integer:
            guard a.count == b.count else { return nil }
            switch a.count {
            case 8: return a.loadUnaligned(as: UInt64.self) < b.loadUnaligned(as: UInt64.self)
            case 4: return a.loadUnaligned(as: UInt32.self) < b.loadUnaligned(as: UInt32.self)
            default: return nil
            }
        case .bytes:
            return Self.compareBytes(a, b) < 0
        }
    }

    /// LMDB's default order (`mdb_cmp_memn`): the shared bytes compared as unsigned, then the
    /// shorter key first. Negative, zero or positive, as `a` sorts before, with or after `b`.
    @inline(__always)
    static func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let shared = min(a.count, b.count)
        // Eight bytes at a time, read as big-endian words so that they compare as the bytes do:
        // keys are short, and a call to memcmp costs more than comparing them here.
        var offset = 0
        while offset &+ 8 <= shared {
            let left = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let right = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            if left != right { return left < right ? -1 : 1 }
            offset &+= 8
        }
        while offset < shared {
            let left = a[offset], right = b[offset]
            if left != right { return left < right ? -1 : 1 }
            offset &+= 1
        }
        return a.count &- b.count
    }
}
#endif

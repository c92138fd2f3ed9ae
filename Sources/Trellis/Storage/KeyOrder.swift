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
            let shared = min(a.count, b.count)
            if shared > 0, let left = a.baseAddress, let right = b.baseAddress {
                let difference = memcmp(left, right, shared)
                if difference != 0 { return difference < 0 }
            }
            return a.count < b.count
        }
    }
}

// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import TrellisStorage

/// A leaf page a read snapshot kept for the database it belongs to (``Transaction/get(_:nearIntegerKey:)``).
struct KeptLeaf<Leaf> {
    let database: DatabaseHandle
    var leaf: Leaf
}

extension LeafLookup {
    /// `.some(value)` when the page found the key, `.some(nil)` when the key is in its range and
    /// absent (no page holds it), nil when the tree must answer.
    @inline(__always)
    var answer: UnsafeRawBufferPointer?? {
        switch self {
        case .found(let value): return .some(value)
        case .absent: return .some(nil)
        case .elsewhere: return nil
        }
    }
}
#endif

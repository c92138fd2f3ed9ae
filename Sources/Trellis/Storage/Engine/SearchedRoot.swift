// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import TrellisStorage

/// How often a read snapshot searched one tree by key with no order to the keys (primary-key
/// lookups, ``Transaction/get(_:searchingKey:)``), and the tree's root read into a ``RootIndex``
/// once it was searched ``searchesBeforeIndexing`` times: later searches start one level down.
/// A snapshot that searches a tree once or twice pays nothing for it.
struct SearchedRoot {
    private(set) var searches = 0
    private(set) var index: RootIndex?

    /// Searches of one tree in one snapshot after which its root is indexed: reading a root of
    /// a hundred entries costs about what eight searches save.
    static let searchesBeforeIndexing = 8

    /// Counts a search of `access`'s tree, reading its root into an index on the
    /// ``searchesBeforeIndexing``th (none when the root does not qualify, or is damaged: the
    /// search itself then reports the damage).
    mutating func count(_ access: TreeAccess) {
        guard searches < Self.searchesBeforeIndexing else { return }
        searches &+= 1
        if searches == Self.searchesBeforeIndexing { index = try? access.makeRootIndex() }
    }
}
#endif

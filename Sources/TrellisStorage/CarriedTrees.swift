/// The trees a write transaction of this process committed, handed to the next one (issue 37,
/// docs/STORAGE.md 13.3 "Session 35"): a small commit's next write finds them without looking them
/// up in the descriptor cache (a hashed name under a lock) and without making their state and page
/// memory again (a `TreeState`, its `TreePages` and their arrays, made and freed per tree per
/// transaction), ~2K instructions a tree.
///
/// They are the commit's own view of the trees, so they are used only by a write transaction
/// whose snapshot is that very commit: the same number and the same catalog root (page and
/// checksum; a number alone can come back, when a commit whose sync failed is taken back). The
/// catalog holds every tree's root with its checksum, so the same catalog means the same trees.
/// Another process's commit, recovery, or a commit that failed leaves a different snapshot, and
/// the trees are looked up as before. Only a commit that published carries its trees; a
/// transaction that aborts drops what it took. Used by the writer only, under the writer gate.
struct CarriedTrees {
    /// Trees carried at most (a transaction that used more carries none), and spare page buffers
    /// kept per tree (the rest go back to the pool).
    static let limit = 16
    static let keptBuffers = 4

    let txnID: UInt64
    let catalog: PageReference?
    /// The catalog's state (its page memory kept too).
    let catalogState: TreeState
    let trees: [TreeState]

    /// Whether `snapshot` is the commit that carried the trees.
    func isCommit(of snapshot: Snapshot) -> Bool {
        txnID == snapshot.meta.txnID && catalog == snapshot.meta.catalog
    }
}

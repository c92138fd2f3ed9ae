/// Objects a write transaction of this process leaves for the next one instead of freeing them
/// (issue 37: a small commit made and freed ~17 objects and arrays). Only what holds nothing of
/// its transaction once emptied is kept here, and it is emptied when taken, so a write
/// transaction never sees what the one before put in it. Used by the writer only, under the
/// writer gate (as `CarriedTrees`).
struct WriterSpares {
    /// The freed-pages list of the last write transaction that committed.
    var freedPages: FreedPages?

    /// The list a write transaction records the pages it frees in: the last commit's, emptied
    /// (its capacity kept), or a new one.
    mutating func takeFreedPages() -> FreedPages {
        guard let freed = freedPages else { return FreedPages() }
        freedPages = nil
        freed.pages.removeAll(keepingCapacity: true)
        return freed
    }
}

/// A second read transaction on the commit another one reads: what a reference handed to
/// another thread keeps so that it can be resolved as of the version it was made at (Trellis's
/// `ThreadSafeReference`, realm-core's duplicated transaction).
extension StorageEnvironment {
    /// Starts a read transaction on the commit `other` reads, however many commits came since.
    ///
    /// The new transaction has its own reader slot, so it keeps the commit's pages reserved
    /// after `other` ends. `other` must be a live read transaction of this environment.
    public func beginRead(sameCommitAs other: ReadTransaction) throws -> ReadTransaction {
        guard other.snapshot.pager === pager else {
            throw StorageError.misuse("a read transaction of another environment cannot be duplicated")
        }
        let slot = try readers.takeSlot()
        do {
            // `other` pins the commit until this returns, so no writer can have freed its pages
            // (publishing the same number in a second slot moves no writer's oldest reader).
            // The table lock keeps the writers' scan out while the slot changes.
            try readers.withLock {
                guard !other.hasEnded else {
                    throw StorageError.misuse("a read transaction was duplicated after it ended")
                }
                readers.pin(slot, to: other.txnID)
            }
            return ReadTransaction(readers: readers, descriptors: descriptors, snapshot: other.snapshot, slot: slot,
                                   epoch: pager.beginUse())
        } catch {
            readers.release(slot)
            throw error
        }
    }
}

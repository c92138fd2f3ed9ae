/// The file's change log: every commit stores what it changed under its version, so any Realm
/// of any process can find out what changed between two versions it read.
extension RealmCore {
    /// How many commits' records the file keeps. A Realm that falls further behind than this
    /// gets a change set marked incomplete (every object may have changed).
    static let keptChangeRecords = 4096
    static let trimBatch = 512

    /// Stores the current write transaction's changes under the version it will commit as.
    func persistChangeRecord(_ txn: Transaction) throws {
        guard let database = file.changes, !recordedChanges.isEmpty else { return }
        let bytes = ChangeRecordEncoding.encode(recordedChanges)
        try bytes.withUnsafeBytes { try txn.put(database, integerKey: UInt64(txn.version), value: $0) }
        // Trimmed in batches, so most commits touch only the newest page of the log.
        guard txn.entryCount(database) > Self.keptChangeRecords + Self.trimBatch else { return }
        var oldest = [UInt64]()
        if let cursor = txn.existingCursor(database) {
            var entry = cursor.first()
            while let (key, _) = entry, oldest.count < Self.trimBatch {
                oldest.append(Cursor.integerKey(key))
                entry = cursor.next()
            }
        }
        for key in oldest { _ = try txn.delete(database, integerKey: key) }
    }

    /// What the commits after `version` up to the snapshot `txn` reads changed.
    func changes(since version: Int, in txn: Transaction) -> ChangeSet {
        var set = ChangeSet()
        let newest = txn.version
        guard newest > version else { return set }
        guard let database = file.changes, let cursor = txn.existingCursor(database) else {
            set.isComplete = false
            return set
        }
        var expected = version + 1
        var entry = withUnsafeBytes(of: UInt64(expected)) { cursor.seek(atLeast: $0) }
        while let (rawKey, bytes) = entry {
            let recorded = Int(Cursor.integerKey(rawKey))
            if recorded > newest { break }
            // A commit without a record (a schema change, an older writer): anything may differ.
            if recorded != expected { set.isComplete = false }
            guard let commit = ChangeRecordEncoding.decode(bytes) else {
                set.isComplete = false
                break
            }
            set.append(commit)
            expected = recorded + 1
            entry = cursor.next()
        }
        if expected <= newest { set.isComplete = false }
        return set
    }

    // MARK: - Recording

    /// A change to a collection entry: its owner's column was modified.
    func recordCollectionChange(_ entryKey: [UInt8]) {
        guard entryKey.count >= CollectionKey.ownerSize else { return }
        entryKey.withUnsafeBytes { bytes in
            let tableId = BigEndian.read(bytes, at: 0, as: UInt32.self)
            let key = BigEndian.read(bytes, at: 4, as: UInt64.self)
            let column = Int(BigEndian.read(bytes, at: 12, as: UInt16.self))
            recordedChanges.modified(tableId, key, column: column)
        }
    }
}

import Foundation


/// The file's change log: every commit stores what it changed under its version, so any Realm
/// of any process can find out what changed between two versions it read.
///
/// The log is bounded by size and by age, not by a count of commits: it keeps at most
/// ``ChangeLogLimits/byteBudget`` bytes of records and none older than
/// ``ChangeLogLimits/maximumAge`` — except those an observer of this process still needs,
/// up to ``ChangeLogLimits/hardByteLimit``. A Realm that falls behind what is kept (an observer
/// in another process, whose needs this process cannot know, or one past the hard limit) gets
/// a change set marked incomplete and compares its collections whole: correct, only slower.
///
/// Its size is kept in a header (``ChangeLogHeader``, in `meta`), with a checkpoint of
/// (version, time) about once a minute for the age bound, so trimming never scans the log to
/// decide and runs in batches.
extension RealmCore {
    /// Stores the current write transaction's changes under the version it will commit as,
    /// and trims the log when it is over its bounds.
    func persistChangeRecord(_ txn: Transaction) throws {
        guard let database = file.changes, !recordedChanges.isEmpty else { return }
        let version = txn.version
        // As this core's own last commit stored it when `txn` is based on that commit and this
        // write changed no schema (a commit that adds a class writes a header too).
        var header = if let committed = committedLogHeader, committed.version == version - 1, pendingCatalog == nil {
            committed.header
        } else {
            try ChangeLogHeader.current(txn, meta: file.meta, changes: database)
        }
        header.totalBytes += try ChangeRecordEncoding.withEncoded(recordedChanges) { bytes in
            try txn.put(database, integerKey: UInt64(version), value: bytes)
            return bytes.count
        }
        if header.oldestVersion == nil { header.oldestVersion = version }
        let now = Date().timeIntervalSince1970
        if header.checkpoints.last.map({ now - $0.time >= ChangeLogLimits.checkpointInterval }) ?? true {
            header.checkpoints.append((version: version, time: now))
        }
        try trim(&header, txn, database, now: now, newest: version)
        try header.write(txn, meta: file.meta)
        pendingLogHeader = header
    }

    /// Deletes the oldest records while the log is over its size budget (down to three
    /// quarters of it) or holds records older than the age bound, keeping what this process's
    /// observers need unless the log is over the hard limit.
    private func trim(_ header: inout ChangeLogHeader, _ txn: Transaction, _ database: DatabaseHandle,
                      now: Double, newest: Int) throws
    {
        let limits = file.changeLogLimits
        let expired = header.checkpoints.last { now - $0.time > limits.maximumAge }?.version ?? 0
        let oversize = header.totalBytes > limits.byteBudget + limits.byteBudget / 4
        guard oversize || expired > (header.oldestVersion ?? Int.max) else { return }
        let needed = file.observation.oldestObservedVersion
        var doomed = [UInt64]()
        var freed = 0
        guard let cursor = txn.existingCursor(database) else { return }
        var entry = withUnsafeBytes(of: UInt64(1)) { cursor.seek(atLeast: $0) }
        while let (rawKey, value) = entry {
            let key = Int(Cursor.integerKey(rawKey))
            if key >= newest { break }
            let remaining = header.totalBytes - freed
            let overBudget = remaining > limits.byteBudget * 3 / 4
            let tooOld = key < expired
            guard overBudget || tooOld else { break }
            // Records after an observer's version are what it will ask for next.
            if let needed, key > needed, remaining <= limits.hardByteLimit { break }
            doomed.append(UInt64(key))
            freed += value.count
            entry = cursor.next()
        }
        for key in doomed { _ = try txn.delete(database, integerKey: key) }
        // Never below zero: an older Trellis that wrote this file kept its own header (2 below).
        header.totalBytes = max(0, header.totalBytes - freed)
        if let last = doomed.last {
            header.oldestVersion = Int(last) + 1
            header.checkpoints.removeAll { $0.version <= Int(last) }
        }
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
        var entry = withUnsafeBytes(of: UInt64(max(expected, 1))) { cursor.seek(atLeast: $0) }
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
    func recordCollectionChange(_ entryKey: UnsafeRawBufferPointer) {
        guard entryKey.count >= CollectionKey.ownerSize else { return }
        let tableId = BigEndian.read(entryKey, at: 0, as: UInt32.self)
        let key = BigEndian.read(entryKey, at: 4, as: UInt64.self)
        let column = Int(BigEndian.read(entryKey, at: 12, as: UInt16.self))
        recordedChanges.modified(tableId, key, column: column)
    }
}

/// The bounds of the change log.
struct ChangeLogLimits: Sendable {
    /// Bytes of records kept (trimmed to three quarters of it once a quarter over).
    var byteBudget = 2 << 20
    /// Bytes kept at most, even for an observer of this process that is behind.
    var hardByteLimit = 32 << 20
    /// Records older than this (seconds) are dropped.
    var maximumAge: Double = 15 * 60

    /// How often (seconds) the header notes a (version, time) checkpoint.
    static let checkpointInterval: Double = 60
}

/// The change log's header: the records' total size, the oldest version kept, and (version,
/// time) checkpoints.
///
/// It is kept in `meta` under ``metaKey``, beside the object-key counters, which a commit that
/// adds objects writes too: a small commit then rewrites one leaf for both, and the log's tree
/// only the leaf its record goes to. Files written before session 33 keep it under key 0 of
/// `changes` (no commit has version 0): the first commit that finds it there moves it. An older
/// Trellis writing a file after a newer one finds no header of its own, measures the log and
/// keeps one under key 0 again; the `meta` one then counts too few bytes until trimming has
/// dropped the records it did not count (it never goes below zero), and is moved from key 0
/// only when `meta` has none. The bounds are only looser meanwhile, never the records.
struct ChangeLogHeader {
    var totalBytes = 0
    var oldestVersion: Int?
    var checkpoints: [(version: Int, time: Double)] = []

    /// The header's key in `meta`.
    static let metaKey = Array("changes.header".utf8)

    /// The header of the log `changes` as `txn` sees it: from `meta`; else the one an older file
    /// keeps under key 0 of `changes`, taken out of it in a write transaction; else measured.
    static func current(_ txn: Transaction, meta: DatabaseHandle, changes: DatabaseHandle) throws -> ChangeLogHeader {
        if let header = read(txn, meta: meta) { return header }
        guard let legacy = txn.get(changes, integerKey: 0).map(decode) else { return measuring(txn, changes) }
        if !txn.isReadOnly { try txn.delete(changes, integerKey: 0) }
        return legacy ?? measuring(txn, changes)
    }

    /// The header stored in `meta`, or nil when there is none (or it is damaged).
    static func read(_ txn: Transaction, meta: DatabaseHandle) -> ChangeLogHeader? {
        metaKey.withUnsafeBytes { txn.get(meta, key: $0) }.flatMap(decode)
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer) -> ChangeLogHeader? {
        guard bytes.count >= 20 else { return nil }
        func load<T>(_ offset: Int, _: T.Type) -> T { bytes.loadUnaligned(fromByteOffset: offset, as: T.self) }
        var header = ChangeLogHeader()
        header.totalBytes = Int(UInt64(littleEndian: load(0, UInt64.self)))
        let oldest = Int(UInt64(littleEndian: load(8, UInt64.self)))
        header.oldestVersion = oldest == 0 ? nil : oldest
        let count = Int(UInt32(littleEndian: load(16, UInt32.self)))
        guard bytes.count >= 20 + count * 16 else { return nil }
        header.checkpoints.reserveCapacity(count)
        for index in 0..<count {
            let base = 20 + index * 16
            header.checkpoints.append((Int(UInt64(littleEndian: load(base, UInt64.self))),
                                       Double(bitPattern: UInt64(littleEndian: load(base + 8, UInt64.self)))))
        }
        return header
    }

    /// A header for a log written before headers existed: its size measured once (from key 1 on:
    /// key 0 is an older file's header, never a record).
    static func measuring(_ txn: Transaction, _ database: DatabaseHandle) -> ChangeLogHeader {
        var header = ChangeLogHeader()
        guard let cursor = txn.existingCursor(database) else { return header }
        var entry = withUnsafeBytes(of: UInt64(1)) { cursor.seek(atLeast: $0) }
        while let (key, value) = entry {
            if header.oldestVersion == nil { header.oldestVersion = Int(Cursor.integerKey(key)) }
            header.totalBytes += value.count
            entry = cursor.next()
        }
        return header
    }

    func write(_ txn: Transaction, meta: DatabaseHandle) throws {
        try LittleEndianWriter.withBytes(count: 20 + 16 * checkpoints.count, { out in
            out.put(UInt64(totalBytes))
            out.put(UInt64(oldestVersion ?? 0))
            out.put(UInt32(checkpoints.count))
            for checkpoint in checkpoints {
                out.put(UInt64(checkpoint.version))
                out.put(checkpoint.time.bitPattern)
            }
        }) { bytes in try Self.metaKey.withUnsafeBytes { _ = try txn.put(meta, key: $0, value: bytes) } }
    }
}

extension FileState {
    /// Records that the commit `txn` will make changes no object: a schema change that only adds
    /// classes (another thread or process opening the file with more classes). Without a record
    /// that version would read as "anything may differ", and every observer across it would
    /// report every element of its collection as modified.
    func persistNoObjectChangesRecord(_ txn: Transaction, addedTable tableId: UInt32) throws {
        guard let database = changes else { return }
        var header = try ChangeLogHeader.current(txn, meta: meta, changes: database)
        let bytes = ChangeRecordEncoding.noObjectChanges(in: tableId)
        let version = txn.version
        try bytes.withUnsafeBytes { try txn.put(database, integerKey: UInt64(version), value: $0) }
        header.totalBytes += bytes.count
        if header.oldestVersion == nil { header.oldestVersion = version }
        try header.write(txn, meta: meta)
    }
}

import TrellisStorage

/// Converts a Trellis file of the LMDB format (every Trellis version before TrellisStorage) into
/// a TrellisStorage file with the same trees, keys and values, in place, without LMDB.
///
/// The protocol (docs/STORAGE.md, "Files of earlier versions"), for a file `F`:
/// 1. Take LMDB's own lock on `F-lock` exclusively: no other process has `F` open, and LMDB
///    processes that try wait.
/// 2. Read `F` once with ``LMDBFileReader`` and write every database into a new TrellisStorage
///    file `F.lmdb-converting` (one tree per named database, integer-key databases as
///    integer-ordered trees); commit durably and close it.
/// 3. Verify it: reopen it with TrellisStorage and compare every tree (names, key order, entry
///    count, every key and value) with `F`.
/// 4. Keep the original: `F.lmdb-backup` becomes a second name (a hard link; a synced copy
///    where links are not supported) of `F`; sync the folder.
/// 5. Rename `F.lmdb-converting` over `F` (atomic); sync the folder.
/// 6. Remove `F.lmdb-backup`; sync the folder.
///
/// `F` is a complete file in one format or the other at every moment. A crash before step 5
/// leaves the LMDB file; the next upgrade removes the leftovers and starts again. A crash after
/// it leaves the converted, verified file and the backup; the next upgrade compares them again
/// and removes the backup. Nothing is written to `F` itself.
public enum LMDBUpgrade {
    /// The suffix of the original kept during a conversion.
    public static let backupSuffix = ".lmdb-backup"
    /// The suffix of the new file while it is written.
    public static let convertingSuffix = ".lmdb-converting"
    /// The tree that receives the main database's own entries, if it has any (Trellis never
    /// wrote any; other LMDB files may).
    public static let mainDatabaseTreeName = "lmdb-main-database"
    /// Bytes of values written between the relaxed commits of the new file (its memory use).
    static let bytesPerCommit = 32 << 20

    /// What the file at a path is.
    public enum FileState: Sendable, Equatable {
        /// No file.
        case missing
        /// An LMDB-format file: it needs converting. (A conversion may have been interrupted
        /// before the new file replaced it; its leftovers are removed by the next one.)
        case lmdb
        /// A TrellisStorage file whose conversion has not finished: the backup is still beside
        /// it. The file itself is complete and verified; the next upgrade removes the backup.
        case convertedWithBackup
        /// A TrellisStorage file.
        case trellisStorage
        /// Neither format.
        case unknown
    }

    /// Where a conversion is, for progress reports (and the crash tests, which stop a process
    /// at each of these).
    public enum Step: Sendable, Equatable {
        /// Entries copied so far (reported every 64 entries and at the end of each tree).
        case copying(tree: String, entries: UInt64)
        /// The new file is written and durable.
        case written
        /// The new file holds exactly what the original holds.
        case verified
        /// The backup name of the original exists.
        case backupMade
        /// The new file has replaced the original.
        case replaced
        /// The backup is removed: the conversion is over.
        case finished
    }

    /// What an upgrade did.
    public struct Report: Sendable, Equatable {
        /// What the upgrade did.
        public enum Outcome: Sendable, Equatable {
            /// The file was already a TrellisStorage file; nothing was done.
            case alreadyCurrent
            /// The LMDB file was converted.
            case converted
            /// An earlier conversion had replaced the file; its backup was checked and removed.
            case finishedEarlierConversion
        }

        public var outcome: Outcome
        /// Trees in the converted file.
        public var trees: Int
        /// Entries in all of them.
        public var entries: UInt64
        /// The size of the LMDB file and of the new one (0 when not known).
        public var bytesBefore: Int
        public var bytesAfter: Int
    }

    /// The state of the file at `path`.
    public static func state(ofFileAt path: String) -> FileState {
        guard UpgradePlatform.exists(path) else { return .missing }
        if isTrellisStorageFile(path) {
            return UpgradePlatform.exists(path + backupSuffix) ? .convertedWithBackup : .trellisStorage
        }
        return LMDBFileReader.looksLikeLMDB(path: path) ? .lmdb : .unknown
    }

    /// Whether the file at `path` starts with TrellisStorage's header magic.
    static func isTrellisStorageFile(_ path: String) -> Bool {
        guard let head = UpgradePlatform.prefix(path: path, count: 8), head.count == 8 else { return false }
        return head == Array("TRLSTORE".utf8)
    }

    /// Converts the LMDB-format file at `path` to TrellisStorage, or finishes a conversion that
    /// was interrupted; does nothing to a TrellisStorage file without a backup.
    ///
    /// - Parameter progress: called at each ``Step``, on the calling thread.
    /// - Throws: `LMDBFormatError`: `damagedFile(page:)` (nothing converted; the file is left as
    ///   it was), `unsupportedDatabase`, `fileInUse`, `verificationFailed`, `unexpectedFiles`,
    ///   `notLMDBFile`, `io`; `StorageError` when the new file cannot be written (a full disk).
    ///   The original is intact after any error.
    @discardableResult
    public static func upgrade(path: String, progress: (Step) -> Void = { _ in }) throws -> Report {
        switch state(ofFileAt: path) {
        case .trellisStorage:
            return Report(outcome: .alreadyCurrent, trees: 0, entries: 0, bytesBefore: 0,
                          bytesAfter: UpgradePlatform.size(path: path) ?? 0)
        case .missing:
            if UpgradePlatform.exists(path + backupSuffix) {
                throw LMDBFormatError(.unexpectedFiles,
                                      "'\(path)' is missing but its conversion backup '\(path + backupSuffix)' is "
                                          + "there: a conversion never removes the file. Rename the backup to '\(path)' "
                                          + "and open it again.")
            }
            throw LMDBFormatError.io("open", path: path, errno: 2)
        case .unknown:
            throw LMDBFormatError(.notLMDBFile,
                                  "'\(path)' is neither a TrellisStorage file nor an LMDB-format Trellis file; nothing "
                                      + "was converted. Check the path.")
        case .convertedWithBackup:
            return try finishEarlierConversion(path: path, progress: progress)
        case .lmdb:
            return try convert(path: path, progress: progress)
        }
    }

    private static func exclusiveUse(of path: String) throws -> UpgradePlatform.ExclusiveUse {
        guard let lock = try UpgradePlatform.ExclusiveUse(lockPath: path + "-lock") else {
            throw LMDBFormatError(.fileInUse,
                                  "'\(path)' is open in another process (an earlier Trellis version): it can be "
                                      + "converted only while no other process has it open. Close the other process "
                                      + "and try again.")
        }
        return lock
    }

    private static func convert(path: String, progress: (Step) -> Void) throws -> Report {
        let lock = try exclusiveUse(of: path)
        defer { lock.release() }
        // Another process may have converted the file while this one waited.
        guard state(ofFileAt: path) == .lmdb else { return try upgrade(path: path, progress: progress) }
        let converting = path + convertingSuffix, backup = path + backupSuffix
        // Leftovers of an attempt that stopped before the new file replaced the original.
        try removeNewFile(converting)
        try UpgradePlatform.remove(backup)

        let reader = try LMDBFileReader(path: path)
        defer { reader.close() }
        let plan = try ConversionPlan(reader: reader)
        do {
            let copied = try plan.copy(to: converting, progress: progress)
            progress(.written)
            try plan.verify(convertedFile: converting)
            progress(.verified)
            try UpgradePlatform.remove(converting + "-lock")
            try UpgradePlatform.linkOrCopy(path, to: backup)
            try UpgradePlatform.syncDirectory(of: path)
            progress(.backupMade)
            try UpgradePlatform.rename(converting, to: path)
            try UpgradePlatform.syncDirectory(of: path)
            progress(.replaced)
            let bytesBefore = UpgradePlatform.size(path: backup) ?? 0
            try UpgradePlatform.remove(backup)
            try UpgradePlatform.syncDirectory(of: path)
            progress(.finished)
            return Report(outcome: .converted, trees: plan.trees.count, entries: copied, bytesBefore: bytesBefore,
                          bytesAfter: UpgradePlatform.size(path: path) ?? 0)
        } catch {
            // Before the rename the original is untouched: take the new file away. After it,
            // the converted file and the backup stay for the next upgrade to finish.
            if state(ofFileAt: path) == .lmdb {
                try? removeNewFile(converting)
                try? UpgradePlatform.remove(backup)
            }
            throw error
        }
    }

    /// The file was replaced by its verified conversion, and the process stopped before the
    /// backup was removed: compare them again, then remove the backup.
    private static func finishEarlierConversion(path: String, progress: (Step) -> Void) throws -> Report {
        // No lock: the file is a TrellisStorage file (its engine takes care of other processes),
        // and the backup is only read, then removed (another process finishing at the same
        // time removes it too, which is no error).
        let backup = path + backupSuffix
        let reader: LMDBFileReader
        do {
            reader = try LMDBFileReader(path: backup)
        } catch let error as LMDBFormatError where !UpgradePlatform.exists(backup) {
            _ = error  // finished by another process meanwhile
            return try upgrade(path: path, progress: progress)
        }
        defer { reader.close() }
        let plan = try ConversionPlan(reader: reader)
        try plan.verify(convertedFile: path)
        progress(.verified)
        let bytesBefore = UpgradePlatform.size(path: backup) ?? 0
        try UpgradePlatform.remove(backup)
        try UpgradePlatform.remove(backup + "-lock")
        try UpgradePlatform.remove(path + convertingSuffix + "-lock")
        try UpgradePlatform.syncDirectory(of: path)
        progress(.finished)
        return Report(outcome: .finishedEarlierConversion, trees: plan.trees.count,
                      entries: plan.trees.reduce(0) { $0 + $1.entries }, bytesBefore: bytesBefore,
                      bytesAfter: UpgradePlatform.size(path: path) ?? 0)
    }

    private static func removeNewFile(_ converting: String) throws {
        try UpgradePlatform.remove(converting)
        try UpgradePlatform.remove(converting + "-lock")
    }
}

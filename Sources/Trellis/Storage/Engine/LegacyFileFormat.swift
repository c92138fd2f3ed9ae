// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import Synchronization
import TrellisLMDBFormat

/// Files written by a Trellis built on LMDB, met by the TrellisStorage build when it opens them.
///
/// Issue 37: the first writable open converts such a file in one pass with `LMDBUpgrade` (an
/// LMDB page-format reader written here, no LMDB library), keeping the original as
/// `<name>.lmdb-backup` until the converted file is committed and verified; a crash at any
/// point leaves one of the two intact, and the next open finishes the conversion. A read-only
/// open of an LMDB-format file fails with ``Realm/Error/Code/fileFormatUpgradeRequired``, whose
/// message names `trellis upgrade FILE` (a read-only open never writes).
enum LegacyFileFormat {
    /// One conversion at a time in this process: `LMDBUpgrade` excludes other processes with
    /// LMDB's lock on `<name>-lock`, a POSIX lock, which threads of one process share.
    private static let conversions = Mutex<Void>(())

    /// How long an open waits for another process that holds an LMDB-format file (converting it,
    /// or an earlier Trellis version using it) before failing with `fileLocked`.
    static let inUsePatience: TimeInterval = 10

    /// Called before the engine opens `path` when no environment of this process has it open:
    /// converts an LMDB-format file (or finishes an interrupted conversion) on a writable open,
    /// refuses one on a read-only open. Does nothing to a TrellisStorage file without a backup.
    static func prepare(path: String, readOnly: Bool) throws {
        switch LMDBUpgrade.state(ofFileAt: path) {
        case .missing, .trellisStorage, .unknown:
            return
        case .convertedWithBackup:
            // Complete and verified: a read-only open reads it; a writable one removes the backup.
            if readOnly { return }
        case .lmdb:
            if readOnly { throw upgradeRequired(path) }
        }
        let deadline = Date().addingTimeInterval(inUsePatience)
        while true {
            do {
                try conversions.withLock { _ in _ = try LMDBUpgrade.upgrade(path: path) }
                return
            } catch let error as LMDBFormatError where error.code == .fileInUse && Date() < deadline {
                usleep(20_000)
            } catch let error as LMDBFormatError {
                throw realmError(error, path: path)
            } catch let error as Realm.Error {
                throw error
            } catch {
                // The engine's errors writing the new file (a full disk): the original is intact.
                throw RealmErrors.opening(path, StorageError.wrapping(error, operation: "converting '\(path)'"))
            }
        }
    }

    static func upgradeRequired(_ path: String) -> Realm.Error {
        Realm.Error(.fileFormatUpgradeRequired, "'\(path)' was written by an earlier Trellis (LMDB file format) and "
            + "must be converted before a read-only open: run `trellis upgrade \(path)` (the original is kept as "
            + "'\(path).lmdb-backup' until the converted file is verified), or open it once writable, which converts "
            + "it.", fileURL: path)
    }

    /// The Realm error for a conversion that failed (the original is intact after any of them).
    static func realmError(_ error: LMDBFormatError, path: String) -> Realm.Error {
        let prefix = "Converting '\(path)' from the LMDB file format of an earlier Trellis failed: "
        switch error.code {
        case .damagedFile:
            return Realm.Error(.corruptFile, prefix + error.message, fileURL: path)
        case .fileInUse:
            return Realm.Error(.fileLocked, prefix + error.message, fileURL: path)
        case .io(_, let code) where code == ENOSPC:
            return Realm.Error(.diskFull, prefix + error.message, fileURL: path)
        case .io(_, let code) where code == EACCES || code == EPERM || code == EROFS:
            return Realm.Error(.filePermissionDenied, prefix + error.message, fileURL: path)
        case .upgradeRequired:
            return upgradeRequired(path)
        case .notLMDBFile, .unsupportedDatabase, .io, .verificationFailed, .unexpectedFiles:
            return Realm.Error(.fileFormatUpgradeRequired, prefix + error.message, fileURL: path)
        }
    }
}
#endif

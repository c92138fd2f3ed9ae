// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation

/// Files written by a Trellis built on LMDB, met by the TrellisStorage build when it opens them.
///
/// The hook of issue 37: a writable open converts such a file in place (the original kept as
/// `<name>.lmdb-backup`), a read-only open reads it or fails naming `trellis upgrade FILE`.
/// Until the converter (an LMDB page-format reader, no LMDB library) is part of Trellis, both
/// fail with ``Realm/Error/Code/fileFormatUpgradeRequired``, which says how to convert the file.
enum LegacyFileFormat {
    /// Called for a file whose header is LMDB's, before the engine opens it.
    static func open(path: String, readOnly: Bool) throws {
        throw upgradeRequired(path)
    }

    static func upgradeRequired(_ path: String) -> Realm.Error {
        Realm.Error(.fileFormatUpgradeRequired, "'\(path)' was written by an earlier Trellis (LMDB file format), which "
            + "this build cannot open. Convert it with `trellis upgrade \(path)` (the original is kept as "
            + "'\(path).lmdb-backup'), then open it again.", fileURL: path)
    }
}
#endif

import Foundation

/// Realm's `encryptionKey` rules (docs/STORAGE.md, section 12, for the file format).
///
/// A key is 64 bytes; any other length is a programmer's mistake and stops the program with
/// Realm's message (as `RLMRealmValidatedEncryptionKey` does). Files are encrypted only in the
/// TrellisStorage build (the default): LMDB cannot encrypt its pages, so the LMDB build
/// (`TRELLIS_STORAGE_ENGINE=lmdb`) refuses a valid key with a typed error.
enum EncryptionKey {
    /// The length of a key.
    static let length = 64

    /// The key's bytes, or nil without a key; traps for a key that is not 64 bytes long.
    static func validated(_ key: Data?) -> [UInt8]? {
        guard let key else { return nil }
        guard key.count == length else { throwRealmException("Encryption key must be exactly 64 bytes long") }
        return [UInt8](key)
    }

    /// Whether this build encrypts files.
    static var isSupported: Bool {
        #if TRELLIS_LMDB
        false
        #else
        true
        #endif
    }

    /// Checks a key given for `path`: the bytes to open or write the file with (nil: plain).
    /// Throws `.fail` in the LMDB build, which cannot encrypt.
    static func forFile(_ key: Data?, path: String) throws -> [UInt8]? {
        guard let bytes = validated(key) else { return nil }
        guard isSupported else {
            throw Realm.Error(.fail, "Encryption is not supported by Trellis built on LMDB. Remove encryptionKey "
                + "from the configuration of '\(path)', or build Trellis without TRELLIS_STORAGE_ENGINE=lmdb "
                + "(the default build, on TrellisStorage, encrypts files).", fileURL: path)
        }
        return bytes
    }

    /// Realm's error for a key that does not open a file (wrong key, no key for an encrypted
    /// file, a key for a plain one), with the engine's finding.
    static func decryptionFailed(_ path: String, detail: String) -> Realm.Error {
        Realm.Error(.invalidDatabase, "Failed to open Realm file at path '\(path)': Realm file decryption failed "
            + "(\(detail)). Open it with the encryptionKey it was written with (none for a file written without one).",
                    fileURL: path)
    }

    /// Realm's error for a second open of `path` in this process with another key than the one
    /// it is open with (RealmCoordinator's check: one key per open file).
    static func mismatched(_ path: String) -> Realm.Error {
        Realm.Error(.fail, "Realm at path '\(path)' already opened with different encryption key", fileURL: path)
    }
}

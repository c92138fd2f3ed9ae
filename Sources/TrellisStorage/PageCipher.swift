import Crypto
import Foundation

/// Authenticated encryption of pages: AES-256-GCM per page, keys derived from a 64-byte user
/// key and the file's salt with HKDF-SHA256 (docs/STORAGE.md, section 12).
///
/// An encrypted page is 4,128 bytes in the file: nonce (12), tag (16), reserved (4), then the
/// ciphertext of the page's 4,096 bytes. The additional authenticated data is the page number.
final class PageCipher: Sendable {
    /// Bytes in front of each encrypted page: nonce, tag, reserved.
    static let envelopeSize = 32
    /// A page's size in an encrypted file.
    static let physicalPageSize = StorageLimits.encryptedPageSize
    /// The length of a user key (Realm's `encryptionKey`).
    static let keyLength = 64
    /// The header's cipher field: AES-256-GCM pages, HKDF-SHA256 keys.
    static let cipherID: UInt32 = 1
    static let saltLength = 32
    private static let nonceLength = 12
    private static let tagLength = 16

    private let pageKey: SymmetricKey
    private let checkKey: SymmetricKey
    /// The file's salt.
    let salt: [UInt8]

    /// The cipher of a file whose header holds `salt`, for the user key `key` (64 bytes).
    init(key: [UInt8], salt: [UInt8]) throws {
        guard key.count == Self.keyLength else {
            throw StorageError(.wrongEncryptionKey, "TrellisStorage: an encryption key has \(Self.keyLength) bytes; "
                + "this one has \(key.count).")
        }
        let material = SymmetricKey(data: key)
        self.salt = salt
        pageKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: material, salt: salt,
                                         info: Array("TrellisStorage page key v1".utf8), outputByteCount: 32)
        checkKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: material, salt: salt,
                                          info: Array("TrellisStorage key check v1".utf8), outputByteCount: 32)
    }

    /// A cipher with a new random salt, for a new file.
    static func forNewFile(key: [UInt8]) throws -> PageCipher {
        var generator = SystemRandomNumberGenerator()
        return try PageCipher(key: key, salt: (0..<saltLength).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    // MARK: - Header

    /// Writes the encryption fields of a version-2 header (bytes 24..<96) after bytes 0..<24.
    func encodeHeaderFields(into page: UnsafeMutableRawPointer) {
        page.storeLE(Self.cipherID, at: 24)
        page.storeLE(UInt32(0), at: 28)
        salt.withUnsafeBytes { UnsafeMutableRawBufferPointer(start: page + 32, count: Self.saltLength).copyMemory(from: $0) }
        let check = keyCheck(page)
        check.withUnsafeBytes { UnsafeMutableRawBufferPointer(start: page + 64, count: 32).copyMemory(from: $0) }
    }

    private func keyCheck(_ page: UnsafeRawPointer) -> HMAC<SHA256>.MAC {
        HMAC<SHA256>.authenticationCode(for: UnsafeRawBufferPointer(start: page, count: 64), using: checkKey)
    }

    /// The cipher for a version-2 header, when `key` is the file's key.
    static func opening(header page: UnsafeRawPointer, key: [UInt8], path: String) throws -> PageCipher {
        let cipher = page.loadLE(UInt32.self, at: 24)
        guard cipher == cipherID else {
            throw StorageError(.incompatibleFile, "TrellisStorage: '\(path)' is encrypted with cipher \(cipher); this "
                + "build knows cipher \(cipherID) (AES-256-GCM).")
        }
        let salt = Array(UnsafeRawBufferPointer(start: page + 32, count: saltLength))
        let opened = try PageCipher(key: key, salt: salt)
        let stored = UnsafeRawBufferPointer(start: page + 64, count: 32)
        guard HMAC<SHA256>.isValidAuthenticationCode(stored, authenticating: UnsafeRawBufferPointer(start: page, count: 64),
                                                     using: opened.checkKey)
        else {
            throw StorageError(.wrongEncryptionKey, "TrellisStorage: the encryption key does not open '\(path)' (its key "
                + "check value does not match: the key is wrong, or the file's header is damaged). Open it with "
                + "the key it was written with.")
        }
        return opened
    }

    // MARK: - Pages

    /// Encrypts the 4,096 bytes at `plaintext` (page `number`) into the 4,128 bytes at `physical`.
    func seal(_ plaintext: UnsafeRawPointer, page number: UInt64, into physical: UnsafeMutableRawPointer) throws {
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(UnsafeRawBufferPointer(start: plaintext, count: Layout.pageSize), using: pageKey,
                                   nonce: AES.GCM.Nonce(), authenticating: Self.associatedData(number))
        } catch {
            throw StorageError(.io(operation: "encrypt", errno: 0),
                               "TrellisStorage: encrypting page \(number) failed (\(error)). The transaction was abandoned; "
                                   + "the file is at its last commit.")
        }
        box.nonce.withUnsafeBytes { UnsafeMutableRawBufferPointer(start: physical, count: Self.nonceLength).copyMemory(from: $0) }
        box.tag.withUnsafeBytes { UnsafeMutableRawBufferPointer(start: physical + Self.nonceLength, count: Self.tagLength).copyMemory(from: $0) }
        physical.storeLE(UInt32(0), at: 28)
        box.ciphertext.withUnsafeBytes {
            UnsafeMutableRawBufferPointer(start: physical + Self.envelopeSize, count: Layout.pageSize).copyMemory(from: $0)
        }
    }

    /// Decrypts the 4,128 bytes at `physical` (page `number`) into the 4,096 bytes at
    /// `plaintext`; false when the page fails authentication (damaged, torn, never written, or
    /// not this file's page `number`).
    func open(_ physical: UnsafeRawPointer, page number: UInt64, into plaintext: UnsafeMutableRawPointer) -> Bool {
        // The reserved bytes are not authenticated by the tag: any change to them is refused too.
        guard physical.loadLE(UInt32.self, at: 28) == 0 else { return false }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: UnsafeRawBufferPointer(start: physical, count: Self.nonceLength)),
                ciphertext: UnsafeRawBufferPointer(start: physical + Self.envelopeSize, count: Layout.pageSize),
                tag: UnsafeRawBufferPointer(start: physical + Self.nonceLength, count: Self.tagLength))
            let opened = try AES.GCM.open(box, using: pageKey, authenticating: Self.associatedData(number))
            guard opened.count == Layout.pageSize else { return false }
            opened.withUnsafeBytes { UnsafeMutableRawBufferPointer(start: plaintext, count: Layout.pageSize).copyMemory(from: $0) }
            return true
        } catch {
            return false
        }
    }

    private static func associatedData(_ number: UInt64) -> [UInt8] {
        withUnsafeBytes(of: number.littleEndian) { Array($0) }
    }
}

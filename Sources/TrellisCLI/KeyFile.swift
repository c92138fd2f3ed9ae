import ArgumentParser
import Foundation
import Trellis

/// `--key-file PATH`: the 64-byte encryption key of an encrypted database (issue 38), read from
/// a file that holds it as 128 hexadecimal characters (upper or lower case; spaces and line
/// breaks anywhere are ignored). The key is never given on the command line itself, where
/// other users could read it in the process list and it would stay in the shell's history.
struct KeyFileOption: ParsableArguments {
    @Option(name: .customLong("key-file"), help: ArgumentHelp(
        "A file holding the database's encryption key as 128 hexadecimal characters.",
        discussion: "For a database written with Realm.Configuration.encryptionKey (Trellis built on "
            + "TrellisStorage). The key is read from the file, never from the command line.",
        valueName: "path"))
    var path: String?

    /// The key's 64 bytes, or nil without `--key-file`.
    func key() throws -> Data? {
        guard let path else { return nil }
        return try KeyFile.read(path)
    }

    /// Runs `body` (which opens `database` with ``key()``), turning a key that does not open the
    /// database into a ``KeyFileError`` that says which option to change.
    func opening<T>(_ database: URL, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as Realm.Error where error.code == .invalidDatabase
            && error.message.contains(KeyFile.decryptionFailure)
        {
            let detail = KeyFile.detail(of: error.message)
            if let path {
                throw KeyFileError.doesNotOpen(database: database.path, keyFile: KeyFile.absolute(path).path,
                                               detail: detail)
            }
            throw KeyFileError.keyNeeded(database: database.path, detail: detail)
        }
    }
}

/// What is wrong with a `--key-file` or the key it holds: one line saying what failed, where,
/// and how to fix it (never the key's characters).
enum KeyFileError: Error {
    /// The key file cannot be read (missing, a folder, unreadable).
    case unreadable(keyFile: String, reason: String)
    /// It holds `count` hexadecimal characters instead of 128.
    case wrongLength(keyFile: String, count: Int)
    /// Its character number `position` (from 1, spaces and line breaks not counted) is not a
    /// hexadecimal digit.
    case notHexadecimal(keyFile: String, position: Int)
    /// The key does not open the database: a wrong key, or a key for an unencrypted file.
    case doesNotOpen(database: String, keyFile: String, detail: String)
    /// The database is encrypted and no `--key-file` was given.
    case keyNeeded(database: String, detail: String)

    var message: String {
        let format = "The key file must hold the key as 128 hexadecimal characters (64 bytes), such as "
            + "`xxd -p -c 64` prints them."
        switch self {
        case .unreadable(let keyFile, let reason):
            return "cannot read the key file '\(keyFile)': \(reason). Give --key-file the path of the file that "
                + "holds the database's encryption key."
        case .wrongLength(let keyFile, let count):
            return "cannot use the key file '\(keyFile)': it holds \(count) hexadecimal characters, and an encryption "
                + "key is 128. \(format)"
        case .notHexadecimal(let keyFile, let position):
            return "cannot use the key file '\(keyFile)': its character \(position) is not a hexadecimal digit "
                + "(0-9, a-f). \(format)"
        case .doesNotOpen(let database, let keyFile, let detail):
            return "cannot open the database '\(database)' with the key in '\(keyFile)': the key does not decrypt it "
                + "(\(detail)). Give --key-file the key the database was written with, or no --key-file for an "
                + "unencrypted database."
        case .keyNeeded(let database, let detail):
            return "cannot open the database '\(database)': it is encrypted (\(detail)). Give its key with "
                + "--key-file PATH, a file holding the key as 128 hexadecimal characters."
        }
    }
}

enum KeyFile {
    /// The words of Realm's error for a key that does not open a file.
    static let decryptionFailure = "Realm file decryption failed"

    /// The 64 bytes a key file holds.
    static func read(_ path: String) throws -> Data {
        let url = absolute(path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw KeyFileError.unreadable(keyFile: url.path, reason: "no such file")
        }
        if isDirectory.boolValue { throw KeyFileError.unreadable(keyFile: url.path, reason: "it is a folder, not a file") }
        // By the mode bits, as `CommandFiles` judges permissions: root could read it anyway.
        if let mode = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.posixPermissions] as? Int,
           mode & 0o444 == 0
        {
            let digits = String(mode & 0o777, radix: 8)
            throw KeyFileError.unreadable(keyFile: url.path, reason: "permission denied (mode "
                + String(repeating: "0", count: max(0, 3 - digits.count)) + digits + ")")
        }
        let contents: Data
        do {
            contents = try Data(contentsOf: url)
        } catch {
            throw KeyFileError.unreadable(keyFile: url.path, reason: FileProblem(error).reason)
        }
        return try key(fromHexadecimal: contents, keyFile: url.path)
    }

    /// The key's bytes from the file's text: 128 hexadecimal digits, whitespace ignored.
    static func key(fromHexadecimal text: Data, keyFile: String) throws -> Data {
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C]
        var digits = [UInt8]()
        digits.reserveCapacity(128)
        for byte in text where !whitespace.contains(byte) {
            guard let value = hexadecimalValue(byte) else {
                throw KeyFileError.notHexadecimal(keyFile: keyFile, position: digits.count + 1)
            }
            digits.append(value)
        }
        guard digits.count == 128 else { throw KeyFileError.wrongLength(keyFile: keyFile, count: digits.count) }
        return Data(stride(from: 0, to: 128, by: 2).map { digits[$0] << 4 | digits[$0 + 1] })
    }

    /// The Realm error's finding: what its message says between "decryption failed (" and its
    /// advice, or the whole message.
    static func detail(of message: String) -> String {
        guard let start = message.range(of: decryptionFailure + " ("),
              let end = message.range(of: "). Open it with", options: .backwards),
              start.upperBound <= end.lowerBound
        else { return message }
        return String(message[start.upperBound..<end.lowerBound])
    }

    static func absolute(_ path: String) -> URL {
        URL(fileURLWithPath: path).standardizedFileURL
    }

    private static func hexadecimalValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

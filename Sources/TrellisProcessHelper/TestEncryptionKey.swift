import Foundation
import Trellis

/// The encryption key the tests give helper processes in `TRELLIS_TEST_ENCRYPTION_KEY` (128 hex
/// characters), applied to every configuration the helper opens; none without it.
enum TestEncryptionKey {
    static let key: Data? = {
        guard let hex = ProcessInfo.processInfo.environment["TRELLIS_TEST_ENCRYPTION_KEY"] else { return nil }
        let characters = Array(hex.utf8)
        let bytes = stride(from: 0, to: characters.count - 1, by: 2).compactMap {
            UInt8(String(decoding: characters[$0...($0 + 1)], as: UTF8.self), radix: 16)
        }
        return Data(bytes)
    }()

    /// `configuration` with the tests' key.
    static func applied(to configuration: Realm.Configuration) -> Realm.Configuration {
        var keyed = configuration
        keyed.encryptionKey = key
        return keyed
    }
}

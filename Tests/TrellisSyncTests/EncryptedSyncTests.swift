import Foundation
import Testing
import Trellis
import TrellisSync

#if !TRELLIS_LMDB
/// Issue 38: a synced Realm with `encryptionKey` (Trellis built on TrellisStorage). The sync
/// state (outbox, mirror, subscriptions) lives in the Realm file, so it is encrypted with it.
@Suite(.serialized) struct EncryptedSyncTests {
    static let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 9) })

    /// The regular files under `folder`, recursively.
    static func files(under folder: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        return (enumerator?.allObjects as? [URL] ?? []).filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
    }

    /// The names of `needles` found in any file under `folder`.
    static func found(_ needles: [String], under folder: URL) throws -> [String] {
        var found = [String]()
        for file in files(under: folder) {
            let bytes = try Data(contentsOf: file)
            for needle in needles where bytes.range(of: Data(needle.utf8)) != nil {
                found.append("\(needle) in \(file.lastPathComponent)")
            }
        }
        return found
    }

    @Test func anEncryptedSyncedRealmOpensSyncsAndItsFilesHoldNoPlaintext() async throws {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server, encryptionKey: Self.key)
        let plain = try await Device(server: fixture.server)

        // Uploaded from the encrypted file.
        try device.write { realm in realm.add(SyncDog(value: ["name": "Uploaded secret Rex", "age": 7])) }
        try await device.sync()
        #expect(try PostgresFixture.psql(fixture.database,
                                         "SELECT count(*) FROM \"SyncDog\" WHERE doc->>'name' = 'Uploaded secret Rex'") == "1")
        // Downloaded into it.
        try plain.write { realm in realm.add(SyncDog(value: ["name": "Downloaded secret Fido", "age": 9])) }
        try await plain.sync()
        #expect(try await eventually(.seconds(30)) {
            try device.run { $0.objects(SyncDog.self).filter("name == 'Downloaded secret Fido'").count } == 1
        })
        // Written while offline: it waits in the outbox, inside the encrypted file.
        try device.session.suspend()
        try device.write { realm in realm.add(SyncDog(value: ["name": "Pending secret Max", "age": 11])) }

        let needles = ["Uploaded secret Rex", "Downloaded secret Fido", "Pending secret Max", "SyncDog", "meta/clientId"]
        // The control: the plain device's file holds what it synced, so the scan finds it.
        try await plain.sync()
        #expect(try await eventually(.seconds(30)) {
            try Self.found(["Uploaded secret Rex", "SyncDog"], under: plain.directory).count >= 2
        })
        let leaked = try Self.found(needles, under: device.directory)
        #expect(leaked.isEmpty, "plain text in the encrypted device's files: \(leaked)")

        // The outbox survives and uploads once the session resumes.
        try device.session.resume()
        try await device.sync()
        #expect(try PostgresFixture.psql(fixture.database,
                                         "SELECT count(*) FROM \"SyncDog\" WHERE doc->>'name' = 'Pending secret Max'") == "1")
        #expect(try Self.found(needles, under: device.directory).isEmpty)

        // The file is the key's only: without it (or with another) it does not open.
        var withoutKey = device.configuration
        withoutKey.encryptionKey = nil
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: withoutKey) }
        var otherKey = device.configuration
        otherKey.encryptionKey = Data(repeating: 3, count: 64)
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: otherKey) }
        #expect(try device.run { $0.objects(SyncDog.self).count } == 3)
        await plain.close()
        await device.close()
    }
}
#endif

import Foundation
import Testing
@testable import Trellis

/// Realm's `encryptionKey` (issue 38; realm-swift's EncryptionTests contract). Files are
/// encrypted in the TrellisStorage build only; the LMDB build refuses a key
/// (BadInputTests.anEncryptionKeyIsATypedError). A key that is not 64 bytes traps in both.
@Suite struct EncryptionKeyLengthTests {
    @Test func aKeyThatIsNot64BytesTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
            var configuration = Realm.Configuration(fileURL: url, objectTypes: [Dog.self])
            configuration.encryptionKey = Data(repeating: 1, count: 32)
            _ = try? Realm(configuration: configuration)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Encryption key must be exactly 64 bytes long"))
    }

    /// realm-swift's EncryptionTests.testBadEncryptionKeys: an empty key for writeCopy traps too.
    @Test func writeCopyWithAKeyThatIsNot64BytesTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID())")
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("a.realm"),
                                                    objectTypes: [Dog.self])
            let realm = try? Realm(configuration: configuration)
            try? realm?.writeCopy(toFile: folder.appendingPathComponent("b.realm"), encryptionKey: Data())
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Encryption key must be exactly 64 bytes long"))
    }
}

#if !TRELLIS_LMDB
@Suite(.serialized) struct EncryptionTests {
    let folder = TemporaryFolder()
    static let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) })
    static let otherKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 3 &+ 2) })

    func configuration(_ key: Data?, name: String = "test.realm") -> Realm.Configuration {
        var configuration = folder.configuration([Dog.self], name: name)
        configuration.encryptionKey = key
        return configuration
    }

    /// Writes `count` dogs to the file of `configuration` and closes it.
    func addDogs(_ count: Int, to configuration: Realm.Configuration) throws {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for index in 0..<count { realm.add(Dog(value: ["name": "Secret dog \(index) Rex", "age": index])) }
        }
    }

    func dogCount(_ configuration: Realm.Configuration) throws -> Int {
        try Realm(configuration: configuration).objects(Dog.self).count
    }

    func decryptionError(_ configuration: Realm.Configuration) throws -> Realm.Error {
        try #require(throws: Realm.Error.self) { _ = try Realm(configuration: configuration) }
    }

    @Test func reopeningWithTheSameKeyWorks() throws {
        try addDogs(3, to: configuration(Self.key))
        #expect(try dogCount(configuration(Self.key)) == 3)
    }

    @Test func reopeningWithoutTheKeyIsRealmsDecryptionError() throws {
        try addDogs(1, to: configuration(Self.key))
        let error = try decryptionError(configuration(nil))
        #expect(error.code == .invalidDatabase)
        #expect(error.message.contains("Realm file decryption failed"))
        #expect(error.message.contains("is encrypted"))
    }

    @Test func reopeningWithAWrongKeyIsRealmsDecryptionErrorNeverGarbage() throws {
        try addDogs(1, to: configuration(Self.key))
        let error = try decryptionError(configuration(Self.otherKey))
        #expect(error.code == .invalidDatabase)
        #expect(error.message.contains("Realm file decryption failed"))
        // The refused open changed nothing.
        #expect(try dogCount(configuration(Self.key)) == 1)
    }

    @Test func openingAPlainFileWithAKeyIsRealmsDecryptionError() throws {
        try addDogs(1, to: configuration(nil))
        let error = try decryptionError(configuration(Self.key))
        #expect(error.code == .invalidDatabase)
        #expect(error.message.contains("Realm file decryption failed"))
        #expect(try dogCount(configuration(nil)) == 1)
    }

    @Test func aSecondOpenWithAnotherKeyWhileOpenIsRealmsMismatchError() throws {
        let realm = try Realm(configuration: configuration(Self.key))
        let error = try #require(throws: Realm.Error.self) { _ = try Realm(configuration: configuration(Self.otherKey)) }
        #expect(error.message.contains("already opened with different encryption key"))
        withExtendedLifetime(realm) {}
    }

    /// No stored string is in the encrypted file's bytes: the values (a whole dog's name), the
    /// class's table name and the schema's JSON naming the class and its properties, each of them
    /// found by the same scan in a plain file of the same dogs.
    ///
    /// The needles are long enough that ciphertext cannot hold one by chance: a given `k`-byte
    /// string occurs in `n` random bytes with probability at most `n / 256^k`, and the test
    /// checks that the sum over the needles is under one in a million for this file's size. (The
    /// 3-byte needles "Dog" and "Rex" it used before occur by chance in ~n / 2^23 of such files:
    /// a few percent of files of a few hundred KiB, which made the test fail now and then.)
    @Test func noStoredStringAppearsInTheFile() throws {
        try addDogs(200, to: configuration(Self.key))
        try addDogs(200, to: configuration(nil, name: "plain.realm"))
        let plain = try Data(contentsOf: folder.file("plain.realm"))
        let encrypted = try Data(contentsOf: folder.file())
        let needles = ["Secret dog 17 Rex", "Secret dog", "t.Dog", #""name":"Dog""#, #""name":"name""#,
                       #""name":"breed""#]
        let chance = needles.reduce(0.0) { $0 + Double(encrypted.count) / pow(256.0, Double($1.utf8.count)) }
        #expect(chance < 1e-6, "needles too short for a \(encrypted.count)-byte file: \(chance)")
        for needle in needles {
            #expect(plain.range(of: Data(needle.utf8)) != nil, "the scan finds \(needle) in a plain file")
            #expect(encrypted.range(of: Data(needle.utf8)) == nil, "\(needle) in the encrypted file")
        }
    }

    @Test func writeCopyChangesRemovesOrAddsTheKey() throws {
        try addDogs(2, to: configuration(Self.key))
        do {
            let realm = try Realm(configuration: configuration(Self.key))
            try realm.writeCopy(toFile: folder.file("rekeyed.realm"), encryptionKey: Self.otherKey)
            try realm.writeCopy(toFile: folder.file("decrypted.realm"))
        }
        #expect(try dogCount(configuration(Self.otherKey, name: "rekeyed.realm")) == 2)
        #expect(try decryptionError(configuration(Self.key, name: "rekeyed.realm")).code == .invalidDatabase)
        #expect(try dogCount(configuration(nil, name: "decrypted.realm")) == 2)
        // And a plain Realm's encrypted copy.
        do {
            let realm = try Realm(configuration: configuration(nil, name: "decrypted.realm"))
            try realm.writeCopy(toFile: folder.file("encrypted.realm"), encryptionKey: Self.key)
        }
        #expect(try dogCount(configuration(Self.key, name: "encrypted.realm")) == 2)
        #expect(try decryptionError(configuration(nil, name: "encrypted.realm")).code == .invalidDatabase)
    }

    /// realm-swift's testWriteCopyForConfigurationAndKey: the destination configuration's key.
    @Test func writeCopyForAConfigurationUsesItsKey() throws {
        try addDogs(2, to: configuration(Self.key))
        let destination = configuration(Self.otherKey, name: "destination.realm")
        try Realm(configuration: configuration(Self.key)).writeCopy(configuration: destination)
        #expect(try dogCount(destination) == 2)
        #expect(try decryptionError(configuration(Self.key, name: "destination.realm")).code == .invalidDatabase)
    }

    /// realm-swift's testWritingCopyUsesWriteTransactionInProgress, on an encrypted file.
    @Test func writeCopyInsideAWriteTransactionCopiesItsChangesEncrypted() throws {
        let realm = try Realm(configuration: configuration(Self.key))
        try realm.write {
            realm.add(Dog(value: ["name": "Uncommitted secret", "age": 1]))
            try realm.writeCopy(toFile: folder.file("in-write.realm"), encryptionKey: Self.key)
        }
        #expect(try dogCount(configuration(Self.key, name: "in-write.realm")) == 1)
        #expect(try Data(contentsOf: folder.file("in-write.realm")).range(of: Data("Uncommitted secret".utf8)) == nil)
    }

    /// realm-swift's EncryptionTests.testImplicitMigration: opening without the key fails before
    /// the migration block runs; with it the open migrates.
    @Test func openingMigratesAnEncryptedFileOnlyWithItsKey() throws {
        try addDogs(2, to: configuration(Self.key))
        let ran = LockedBox(0)
        var migrating = configuration(nil)
        migrating.schemaVersion = 1
        migrating.migrationBlock = { migration, _ in
            ran.mutate { $0 += 1 }
            migration.enumerateObjects(ofType: "Dog") { _, new in new?["age"] = 41 }
        }
        #expect(try decryptionError(migrating).code == .invalidDatabase)
        #expect(ran.get() == 0)
        migrating.encryptionKey = Self.key
        let realm = try Realm(configuration: migrating)
        #expect(ran.get() == 1)
        #expect(realm.objects(Dog.self).map(\.age) == [41, 41])
        #expect(try schemaVersionAtURL(folder.file(), encryptionKey: Self.key) == 1)
    }

    @Test func schemaVersionAtURLTakesTheKey() throws {
        var keyed = configuration(Self.key)
        keyed.schemaVersion = 4
        try addDogs(1, to: keyed)
        #expect(try schemaVersionAtURL(folder.file(), encryptionKey: Self.key) == 4)
        #expect(throws: Realm.Error.self) { _ = try schemaVersionAtURL(folder.file()) }
        #expect(throws: Realm.Error.self) { _ = try schemaVersionAtURL(folder.file(), encryptionKey: Self.otherKey) }
    }

    @Test func aMigrationRunsOnAnEncryptedFileWithItsKey() throws {
        try addDogs(2, to: configuration(Self.key))
        let ran = LockedBox(false)
        var migrating = configuration(Self.key)
        migrating.schemaVersion = 1
        migrating.migrationBlock = { migration, old in
            ran.set(true)
            migration.enumerateObjects(ofType: "Dog") { _, new in new?["age"] = 40 }
        }
        #expect(throws: Realm.Error.self) {
            var withoutKey = migrating
            withoutKey.encryptionKey = nil
            try Realm.performMigration(for: withoutKey)
        }
        #expect(!ran.get())
        try Realm.performMigration(for: migrating)
        #expect(ran.get())
        let realm = try Realm(configuration: migrating)
        #expect(realm.objects(Dog.self).allSatisfy { $0.age == 40 })
    }

    @Test func compactionOnLaunchKeepsTheFileEncrypted() throws {
        try addDogs(300, to: configuration(Self.key))
        do {
            let realm = try Realm(configuration: configuration(Self.key))
            try realm.write { realm.delete(realm.objects(Dog.self).filter("age >= 10")) }
        }
        let before = try FileManager.default.attributesOfItem(atPath: folder.file().path)[.size] as? Int ?? 0
        var compacting = configuration(Self.key)
        let asked = LockedBox(false)
        compacting.shouldCompactOnLaunch = { _, _ in
            asked.set(true)
            return true
        }
        #expect(try dogCount(compacting) == 10)
        #expect(asked.get())
        let after = try FileManager.default.attributesOfItem(atPath: folder.file().path)[.size] as? Int ?? 0
        #expect(after <= before)
        #expect(try decryptionError(configuration(nil)).code == .invalidDatabase)
        #expect(try dogCount(configuration(Self.key)) == 10)
    }

    @Test func anotherProcessWritesAndReadsWithTheKey() throws {
        try addDogs(1, to: configuration(Self.key))
        let hex = [UInt8](Self.key).map { String(format: "%02x", $0) }.joined()
        func helper(_ arguments: [String]) throws -> String {
            try runHelper(arguments, environment: ["TRELLIS_TEST_ENCRYPTION_KEY": hex])
        }
        // This process keeps the file open while the other one writes.
        let realm = try Realm(configuration: configuration(Self.key))
        #expect(realm.objects(Dog.self).count == 1)
        // ProcessDog lives beside Dog in the file: the helper adds its class.
        #expect(try helper(["write", folder.file().path, "5"]) == "wrote 5")
        #expect(try helper(["count", folder.file().path]) == "5")
        realm.refresh()
        #expect(realm.objects(Dog.self).count == 1)
        // Without the key the helper fails.
        #expect(try runHelper(["count", folder.file().path]).isEmpty)
    }
}
#endif

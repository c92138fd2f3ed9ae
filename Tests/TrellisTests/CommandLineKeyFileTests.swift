import Foundation
import Testing
import Trellis

/// `trellis inspect|query|export|import|schema export --key-file PATH` (issue 38): the key of an
/// encrypted file as 128 hexadecimal characters in a file, never on the command line.
extension CommandLineTests {
    static let fileKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) })
    static let otherFileKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) })

    /// A key file holding `key` as hexadecimal text laid out as `layout` says.
    func keyFile(_ key: Data, name: String = "key.hex", layout: (String) -> String = { $0 + "\n" }) throws -> URL {
        let url = folder.file(name)
        try Data(layout(key.map { String(format: "%02x", $0) }.joined()).utf8).write(to: url)
        return url
    }

    /// The commands that open a database, each with the arguments it needs around the file.
    func openingCommands(_ database: URL) -> [[String]] {
        [["inspect", database.path], ["query", database.path, "Dog"], ["export", database.path, "--ejson"],
         ["schema", "export", database.path, "--app-services"]]
    }

    @Test func keyFileProblemsAreOneLineErrorsThatNeverShowTheKey() throws {
        let database = try atlasFile()
        let missing = folder.file("missing.hex").path
        let short = try keyFile(Self.fileKey.prefix(32), name: "short.hex")
        let long = try keyFile(Self.fileKey + Data([1]), name: "long.hex")
        let notHex = try keyFile(Self.fileKey, name: "not-hex.hex") { "\($0.prefix(10))zz\($0.dropFirst(12))" }
        let unreadable = try keyFile(Self.fileKey, name: "unreadable.hex")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: unreadable.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: unreadable.path) }
        let hexKey = Self.fileKey.map { String(format: "%02x", $0) }.joined()

        for command in openingCommands(database) + [["import", database.path, folder.url.path, "--ejson"]] {
            try expectFileError(command + ["--key-file", missing],
                                "cannot read the key file '\(missing)': no such file. Give --key-file the path")
            try expectFileError(command + ["--key-file", folder.url.path], "cannot read the key file "
                + "'\(folder.url.path)': it is a folder, not a file.")
            try expectFileError(command + ["--key-file", unreadable.path], "cannot read the key file "
                + "'\(unreadable.path)': permission denied (mode 000).")
            try expectFileError(command + ["--key-file", short.path], "cannot use the key file '\(short.path)': it "
                + "holds 64 hexadecimal characters, and an encryption key is 128.")
            try expectFileError(command + ["--key-file", long.path], "cannot use the key file '\(long.path)': it "
                + "holds 130 hexadecimal characters, and an encryption key is 128.")
            let run = try runTrellis(command + ["--key-file", notHex.path])
            #expect(run.status == 1)
            #expect(run.stderr.contains("cannot use the key file '\(notHex.path)': its character 11 is not a "
                + "hexadecimal digit (0-9, a-f)."), "\(run.stderr)")
            #expect(!run.stderr.contains(hexKey.prefix(10)) && !run.stderr.contains("zz"), "the key in \(run.stderr)")
        }
    }

    @Test func theKeyIsNeverAnArgumentOfItsOwn() throws {
        let database = try atlasFile()
        let hexKey = Self.fileKey.map { String(format: "%02x", $0) }.joined()
        for option in ["--key", "--encryption-key"] {
            let run = try runTrellis(["inspect", database.path, option, hexKey])
            #expect(run.status == 64, "\(option): \(run.stderr)")
        }
    }

    #if TRELLIS_LMDB
    @Test func aKeyFileOnTheLMDBBuildSaysEncryptionNeedsTheTrellisStorageBuild() throws {
        let database = try atlasFile()
        let key = try keyFile(Self.fileKey)
        for command in openingCommands(database) {
            try expectFileError(command + ["--key-file", key.path], "Encryption is not supported by Trellis built on LMDB")
        }
    }
    #else
    /// The Atlas seed's file, encrypted with `key`.
    func encryptedAtlasFile(_ key: Data, name: String = "encrypted.realm") throws -> URL {
        try atlasFile(name: name, encryptionKey: key)
    }

    @Test func everyCommandReadsAndWritesAnEncryptedFileWithItsKeyFile() throws {
        let database = try encryptedAtlasFile(Self.fileKey)
        // Upper case, split over lines, spaces and tabs around: all accepted.
        let key = try keyFile(Self.fileKey) { hex in
            "  " + stride(from: 0, to: 128, by: 32).map { offset in
                String(hex.dropFirst(offset).prefix(32)).uppercased()
            }.joined(separator: "\n\t") + "\r\n\n"
        }
        let inspect = try runTrellis(["inspect", database.path, "--key-file", key.path])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout.contains("  Dog: 1 objects"))
        let query = try runTrellis(["query", database.path, "Dog", "age == 3", "--key-file", key.path])
        #expect(query.status == 0, "\(query.stderr)")
        #expect(query.stdout.contains(#""name":"Rex""#))
        let schema = try runTrellis(["schema", "export", database.path, "--app-services", "--key-file", key.path])
        #expect(schema.status == 0, "\(schema.stderr)")
        #expect(schema.stdout.contains("// Dog/schema.json"))

        let dump = folder.url.appendingPathComponent("dump")
        let export = try runTrellis(["export", database.path, "--ejson", "--out", dump.path, "--key-file", key.path])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try String(contentsOf: dump.appendingPathComponent("Person.json"), encoding: .utf8)
            .contains(#""city":"London""#))

        // Imported into another encrypted file, with its own key.
        let target = folder.file("target.realm")
        try onOtherThread {
            var configuration = Realm.Configuration(fileURL: target, objectTypes: AtlasSeed.types)
            configuration.encryptionKey = Self.otherFileKey
            _ = try Realm(configuration: configuration)
        }
        let otherKey = try keyFile(Self.otherFileKey, name: "other.hex")
        let imported = try runTrellis(["import", target.path, dump.path, "--ejson", "--key-file", otherKey.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Imported 2 documents of 3 classes"))
        try onOtherThread {
            var configuration = Realm.Configuration(fileURL: target, objectTypes: AtlasSeed.types)
            configuration.encryptionKey = Self.otherFileKey
            let realm = try Realm(configuration: configuration)
            #expect(realm.objects(AtlasSeed.Person.self).first?.dog?.name == "Rex")
        }
        // Still encrypted: nothing the import wrote is in the file in plain text.
        #expect(try Data(contentsOf: target).range(of: Data("London".utf8)) == nil)
    }

    @Test func aWrongKeyOrNoKeyFileIsAOneLineErrorAndChangesNothing() throws {
        let database = try encryptedAtlasFile(Self.fileKey)
        let plain = try atlasFile()
        let wrong = try keyFile(Self.otherFileKey, name: "wrong.hex")
        let before = try Data(contentsOf: database), plainBefore = try Data(contentsOf: plain)

        for command in openingCommands(database) {
            try expectFileError(command + ["--key-file", wrong.path], "cannot open the database '\(database.path)' "
                + "with the key in '\(wrong.path)': the key does not decrypt it (")
            try expectFileError(command, "cannot open the database '\(database.path)': it is encrypted (")
            try expectFileError(command, "Give its key with --key-file PATH")
        }
        for command in openingCommands(plain) {
            try expectFileError(command + ["--key-file", wrong.path], "cannot open the database '\(plain.path)' with "
                + "the key in '\(wrong.path)': the key does not decrypt it (")
        }
        let dump = folder.url.appendingPathComponent("dump")
        #expect(try runTrellis(["export", plain.path, "--ejson", "--out", dump.path]).status == 0)
        try expectFileError(["import", database.path, dump.path, "--ejson", "--key-file", wrong.path],
                            "cannot open the database '\(database.path)' with the key in '\(wrong.path)'")
        try expectFileError(["import", database.path, dump.path, "--ejson"],
                            "cannot open the database '\(database.path)': it is encrypted (")
        #expect(try Data(contentsOf: database) == before)
        #expect(try Data(contentsOf: plain) == plainBefore)
    }
    #endif
}

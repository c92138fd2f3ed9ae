import Foundation
import Trellis

// The crash test's other victims (Tests/TrellisTests/CrashTests.swift): a reader, a migration,
// a `writeCopy` and an Extended JSON import, each killed with SIGKILL at a random moment, and
// the checks that run after each kill.

/// The migration test's objects: version 1 holds `value` 0..<N; the migration to version 2
/// adds 1,000,000 to every value, deletes every tenth object and creates a marker.
final class MigrationItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var tags: List<Int>
    @Persisted var note: CrashAddress?
}

/// The import test's objects.
final class ImportItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var block = 0
    @Persisted var name = ""
    @Persisted var tags: List<Int>
}

enum CrashScenarios {
    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    static func report(_ values: [String: Any]) throws {
        FileHandle.standardOutput.write(try JSONSerialization.data(withJSONObject: values, options: [.sortedKeys]) + Data("\n".utf8))
    }

    // MARK: - A reader

    /// Reads the crash test's file until killed: every snapshot must be whole (each group's
    /// people and dogs as its marker says), while frozen versions pile up (each holds a reader
    /// slot and pins its pages: what a killed reader must not keep doing).
    static func read(path: String) throws {
        let realm = try CrashWorkload.open(path, verifying: false)
        var frozen = [Realm]()
        say("reading")
        while true {
            realm.refresh()
            for marker in realm.objects(CrashMarker.self) {
                let group = marker.group
                let people = realm.objects(CrashPerson.self).where { $0.group == group }.count
                if people != marker.people { say("problem group \(group): \(people) people, marker says \(marker.people)") }
            }
            frozen.append(realm.freeze())
            if frozen.count > 8 { frozen.removeFirst() }
            usleep(2000)
        }
    }

    // MARK: - A migration

    static func migrationConfiguration(_ path: String, version: UInt64) -> Realm.Configuration {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path),
                                                objectTypes: [MigrationItem.self, CrashAddress.self])
        configuration.schemaVersion = version
        configuration.migrationBlock = { migration, oldVersion in
            guard oldVersion < 2 else { return }
            say("migrating")
            migration.enumerateObjects(ofType: "MigrationItem") { old, new in
                guard let old, let new, let value = old["value"] as? Int else { return }
                if value % 10 == 0 {
                    migration.delete(new)
                } else {
                    new["value"] = value + 1_000_000
                }
            }
            _ = migration.create("MigrationItem", value: ["id": -1, "value": -1])
        }
        return configuration
    }

    /// Writes version 1 with `count` objects.
    static func prepareMigration(path: String, count: Int) throws {
        let realm = try Realm(configuration: migrationConfiguration(path, version: 1))
        try realm.write {
            for index in 0..<count {
                let item = MigrationItem(value: ["id": index, "value": index, "tags": [index, index + 1]])
                item.note = CrashAddress(value: ["street": "\(index)"])
                realm.add(item)
            }
        }
    }

    /// Opens at version 2 (migrating); prints "migrated".
    static func migrate(path: String) throws {
        _ = try Realm(configuration: migrationConfiguration(path, version: 2))
        say("migrated")
    }

    /// Prints `{"version": v, "problems": […]}`: version 1 whole, or version 2 whole.
    static func checkMigration(path: String, count: Int) throws {
        let version = try schemaVersionAtURL(URL(fileURLWithPath: path))
        let realm = try Realm(configuration: migrationConfiguration(path, version: version))
        var problems = realm._consistencyProblems()
        let items = realm.objects(MigrationItem.self)
        if version == 1 {
            if items.count != count { problems.append("version 1 holds \(items.count) objects, not \(count)") }
            if items.contains(where: { $0.value != $0.id }) { problems.append("version 1 holds migrated values") }
        } else {
            let expected = count - (count + 9) / 10 + 1
            if items.count != expected { problems.append("version 2 holds \(items.count) objects, not \(expected)") }
            if realm.object(ofType: MigrationItem.self, forPrimaryKey: -1) == nil { problems.append("no marker") }
            if items.contains(where: { $0.id >= 0 && $0.value != $0.id + 1_000_000 }) {
                problems.append("version 2 holds values that were not migrated")
            }
        }
        if items.contains(where: { $0.id >= 0 && ($0.note?.street != "\($0.id)" || Array($0.tags) != [$0.id, $0.id + 1]) }) {
            problems.append("an object lost its embedded object or list")
        }
        try report(["version": Int(version), "problems": problems])
    }

    // MARK: - writeCopy

    /// Copies the crash test's file; prints "copied".
    static func copy(path: String, to destination: String) throws {
        let realm = try CrashWorkload.open(path, verifying: false)
        try realm.writeCopy(toFile: URL(fileURLWithPath: destination))
        say("copied")
    }

    /// Prints `{"copy": "none"|"whole", "problems": […]}`: no file at the destination, or a
    /// file that holds what the source holds.
    static func checkCopy(path: String, destination: String) throws {
        guard FileManager.default.fileExists(atPath: destination) else {
            try report(["copy": "none", "problems": [String]()])
            return
        }
        let source = try CrashWorkload.open(path)
        let copy = try CrashWorkload.open(destination)
        var problems = copy._consistencyProblems()
        func summary(_ realm: Realm) -> [Int] {
            [realm.objects(CrashMarker.self).count, realm.objects(CrashPerson.self).count,
             realm.objects(CrashDog.self).count, realm.objects(CrashDeletion.self).count]
        }
        if summary(source) != summary(copy) { problems.append("the copy holds \(summary(copy)), the file \(summary(source))") }
        try report(["copy": "whole", "problems": problems])
    }

    // MARK: - Extended JSON import

    /// Makes the import file (its schema, no objects) and `<folder>/ImportItem.json` for
    /// block `block`: `count` documents with ids block * count ..< (block + 1) * count.
    static func prepareImport(path: String, folder: String, block: Int, count: Int) throws {
        if !FileManager.default.fileExists(atPath: path) {
            _ = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ImportItem.self]))
        }
        var lines = [String]()
        for id in block * count..<(block + 1) * count {
            lines.append(#"{"id":{"$numberLong":"\#(id)"},"block":{"$numberLong":"\#(block)"},"#
                + #""name":"item \#(id)","tags":[{"$numberLong":"\#(id)"},{"$numberLong":"1"}]}"#)
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: folder + "/ImportItem.json"))
    }

    /// Imports the folder's documents through the stored schema (as `trellis import`); prints
    /// "imported N".
    static func importDocuments(path: String, folder: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/ImportItem.json"))
        let documents = data.split(separator: UInt8(ascii: "\n")).map { Data($0) }
        say("importing")
        let count = try ExtendedJSON.importDocuments(["ImportItem": documents], intoFile: URL(fileURLWithPath: path),
                                                     ignoringUnknownProperties: false)
        say("imported \(count)")
    }

    /// Prints `{"blocks": {block: objects}, "problems": […]}`: every block must be whole.
    static func checkImport(path: String, count: Int) throws {
        let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ImportItem.self]))
        var problems = realm._consistencyProblems()
        var blocks = [String: Int]()
        for item in realm.objects(ImportItem.self) {
            blocks[String(item.block), default: 0] += 1
            if item.name != "item \(item.id)" || Array(item.tags) != [item.id, 1] { problems.append("item \(item.id) is wrong") }
        }
        for (block, objects) in blocks where objects != count {
            problems.append("block \(block) holds \(objects) of \(count) objects")
        }
        try report(["blocks": blocks, "problems": problems])
    }
}

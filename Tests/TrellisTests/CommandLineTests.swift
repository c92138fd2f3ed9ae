import Foundation
import Testing
import Trellis

/// The `trellis` executable (built beside the tests), run as a user would: stdout, stderr and
/// exit codes.
@Suite struct CommandLineTests {
    let folder = TemporaryFolder()

    /// A file with the seed's Atlas models (every class has a primary key), encrypted with
    /// `encryptionKey` when one is given.
    func atlasFile(name: String = "atlas.realm", encryptionKey: Data? = nil) throws -> URL {
        let url = folder.file(name)
        try onOtherThread {
            var configuration = Realm.Configuration(fileURL: url, objectTypes: AtlasSeed.types)
            configuration.encryptionKey = encryptionKey
            let realm = try Realm(configuration: configuration)
            try realm.write {
                let person = AtlasSeed.Person(value: ["name": "Ada", "address": ["city": "London"]])
                person.dog = AtlasSeed.Dog(value: ["name": "Rex", "age": 3])
                person.dogs.append(person.dog!)
                realm.add(person)
            }
        }
        return url
    }

    @Test func demoWritesReopensAndPrintsTheSchema() throws {
        let run = try runTrellis(["demo", "--dir", folder.url.path])
        #expect(run.status == 0)
        #expect(run.stdout.contains("Person Tim lives in Oslo and has Rex, age 3; dogs: Tim's puppy, Rex; clubs: Sprinters"))
        #expect(run.stdout.contains("App Services schema of these models"))
        #expect(run.stdout.contains("Dog/schema.json:"))
        #expect(run.stderr.isEmpty)
    }

    @Test func inspectListsClassesCountsPropertiesAndSizes() throws {
        let run = try runTrellis(["inspect", try atlasFile().path])
        #expect(run.status == 0)
        #expect(run.stdout.contains("Schema version: 0"))
        #expect(run.stdout.contains("  Dog: 1 objects"))
        #expect(run.stdout.contains("  Address (embedded): 1 objects"))
        #expect(run.stdout.contains("    dogs: list<Dog>"))
        #expect(run.stdout.contains("    dog: link<Dog>?"))
        #expect(run.stdout.contains("    person: linking objects<Person>.dogs"))
        #expect(run.stdout.contains("    _id: object id, primary key"))
        #expect(run.stdout.contains("bytes on disk"))
    }

    @Test func missingOrForeignFilesAreOneLineErrorsWithExitCode1() throws {
        let missing = try runTrellis(["inspect", folder.file("missing.realm").path])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("trellis: error: ") && missing.stderr.filter { $0 == "\n" }.count == 1)
        #expect(missing.stderr.contains("missing.realm': no such file."))
        let foreign = folder.file("foreign.realm")
        try Data(repeating: 7, count: 8192).write(to: foreign)
        let run = try runTrellis(["inspect", foreign.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("is not a Trellis database"))
        #expect(try Data(contentsOf: foreign) == Data(repeating: 7, count: 8192))
    }

    @Test func schemaExportWritesTheAppServicesLayoutAndCodegenReadsItBack() throws {
        let out = folder.url.appendingPathComponent("app-services")
        let export = try runTrellis(["schema", "export", try atlasFile().path, "--app-services", "--out", out.path])
        #expect(export.status == 0, "\(export.stderr)")
        let personSchema = try Data(contentsOf: out.appendingPathComponent("Person/schema.json"))
        let expected = try AppServicesSchema(objectTypes: AtlasSeed.types).jsonSchema(for: "Person")
        #expect(personSchema == expected)
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("Dog/relationships.json").path))
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("Address").path))
        let codegen = try runTrellis(["schema", "codegen", out.path, "--swift"])
        #expect(codegen.status == 0)
        #expect(codegen.stdout.contains("class Person: Object {"))
        #expect(codegen.stdout.contains("    @Persisted var dogs: List<Dog>"))
        #expect(codegen.stdout.contains("class Address: EmbeddedObject {"))
    }

    @Test func schemaExportOfAnUnexportableFileFailsWithoutPartialOutput() throws {
        let demoFolder = folder.url.appendingPathComponent("demo")
        _ = try runTrellis(["demo", "--dir", demoFolder.path])
        let out = folder.url.appendingPathComponent("partial")
        let run = try runTrellis(["schema", "export", demoFolder.appendingPathComponent("demo.realm").path,
                               "--app-services", "--out", out.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("'DogClub.members' links to 'Person', which has no primary key"))
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test func badArgumentsPrintUsageWithAUsageExitCode() throws {
        let run = try runTrellis(["schema", "export", "x.realm"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("--app-services"))
        let help = try runTrellis(["inspect", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: trellis inspect <file>"))
    }

    @Test func exportWritesOneExtendedJSONDocumentPerLinePerClass() throws {
        let url = try atlasFile()
        let out = folder.url.appendingPathComponent("ejson")
        let run = try runTrellis(["export", url.path, "--ejson", "--out", out.path])
        #expect(run.status == 0, "\(run.stderr)")
        let people = try String(contentsOf: out.appendingPathComponent("Person.json"), encoding: .utf8)
        #expect(people.split(separator: "\n").count == 1)
        #expect(people.contains(#""address":{"city":"London""#))
        #expect(people.contains(#""dogs":[{"$oid":""#))
        #expect(!people.contains("clubs"))
    }

    @Test func queryPrintsMatchingObjectsOfAFileWithoutItsModels() throws {
        // The demo's file: this process never declares its Person/Dog/DogClub classes.
        let run = try runTrellis(["demo", "--dir", folder.url.path])
        #expect(run.status == 0)
        let file = folder.url.appendingPathComponent("demo.realm").path
        let query = try runTrellis(["query", file, "Person", "dog.age >= 3 AND dogs.@count == 2",
                                 "--sort", "name", "--descending"])
        #expect(query.status == 0, "\(query.stderr)")
        let lines = query.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains(#""name":"Tim""#) == true)
        #expect(lines.last?.contains(#""name":"Ana""#) == true)
        #expect(query.stderr == "2 Person objects\n")

        let json = try runTrellis(["query", file, "Dog", "--sort", "age", "--limit", "1", "--json"])
        #expect(json.status == 0)
        let dogs = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(dogs.count == 1)
        #expect(dogs.first?["age"] as? [String: String] == ["$numberLong": "0"])
    }

    @Test func queryWithABadPredicateSaysWhereWithExitCode2() throws {
        let url = try atlasFile()
        let syntax = try runTrellis(["query", url.path, "Dog", "age > > 3"])
        #expect(syntax.status == 2)
        #expect(syntax.stderr == "trellis: error: Invalid predicate 'age > > 3' at offset 6: "
            + "expected a property name or a value but found '>'.\n")
        let unknown = try runTrellis(["query", url.path, "Dog", "agee > 3"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("No property 'agee' on 'Dog'. Did you mean 'age'?"))
        let noClass = try runTrellis(["query", url.path, "Cat"])
        #expect(noClass.status == 1)
        #expect(noClass.stderr.contains("has no class 'Cat'"))
        #expect(syntax.stdout.isEmpty && unknown.stdout.isEmpty && noClass.stdout.isEmpty)
    }

    @Test func everyCommandWorksOnAFileThatWasMigratedAndLeavesItsVersion() throws {
        let source = try atlasFile()
        // Migrate to schema version 3 with a block that renames the person.
        try onOtherThread {
            let configuration = Realm.Configuration(fileURL: source, schemaVersion: 3, migrationBlock: { migration, _ in
                migration.enumerateObjects(ofType: "Person") { _, new in new?["name"] = "Ada Lovelace" }
            }, objectTypes: AtlasSeed.types)
            _ = try Realm(configuration: configuration)
        }
        let migrated = try Data(contentsOf: source)
        let inspect = try runTrellis(["inspect", source.path])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout.contains("Schema version: 3"))
        let query = try runTrellis(["query", source.path, "Person", "name BEGINSWITH 'Ada'"])
        #expect(query.status == 0, "\(query.stderr)")
        #expect(query.stdout.contains("Ada Lovelace"))
        let dump = folder.url.appendingPathComponent("dump3")
        let export = try runTrellis(["export", source.path, "--ejson", "--out", dump.path])
        #expect(export.status == 0, "\(export.stderr)")
        let schema = try runTrellis(["schema", "export", source.path, "--app-services", "--out", folder.url.appendingPathComponent("schema3").path])
        #expect(schema.status == 0, "\(schema.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("schema3/Person/schema.json").path))
        // The reading commands opened it read-only: not a byte changed.
        #expect(try Data(contentsOf: source) == migrated)
        // Import into another migrated file, then check both keep version 3.
        let target = folder.file("target3.realm")
        try onOtherThread {
            _ = try Realm(configuration: .init(fileURL: target, schemaVersion: 3, objectTypes: AtlasSeed.types))
        }
        let imported = try runTrellis(["import", target.path, dump.path, "--ejson"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Imported 2 documents"))
        for url in [source, target] {
            let again = try runTrellis(["inspect", url.path])
            #expect(again.stdout.contains("Schema version: 3"), "\(url.lastPathComponent)")
            #expect(try schemaVersionAtURL(url) == 3, "\(url.lastPathComponent)")
        }
        // The app still opens both at version 3, without a migration.
        let names = try onOtherThread {
            try Realm(configuration: .init(fileURL: target, schemaVersion: 3, objectTypes: AtlasSeed.types))
                .objects(AtlasSeed.Person.self).map(\.name)
        }
        #expect(names == ["Ada Lovelace"])
    }

    @Test func outputPathProblemsAreOneLineErrors() throws {
        let source = try atlasFile()
        let missing = try runTrellis(["export", source.path, "--ejson", "--out", "/proc/nope"])
        #expect(missing.status == 1)
        // /proc is read-only (mode 555): said before trying, so also to root.
        #expect(missing.stderr == "trellis: error: cannot create the --out folder '/proc/nope': '/proc' is read-only "
            + "(mode 555). Choose a folder you can write to.\n")
        let blocker = folder.file("blocker")
        try Data().write(to: blocker)
        let inTheWay = try runTrellis(["export", source.path, "--ejson", "--out", blocker.path])
        #expect(inTheWay.status == 1)
        #expect(inTheWay.stderr.hasPrefix("trellis: error: cannot write into the --out folder '\(blocker.path)': it is a "
            + "file, not a folder."))
        let schema = try runTrellis(["schema", "export", source.path, "--app-services", "--out", "/proc/x"])
        #expect(schema.status == 1)
        #expect(schema.stderr.split(separator: "\n").count == 1)
        #expect(!schema.stderr.contains("NSCocoaErrorDomain"))
    }

    @Test func importWritesExportedDocumentsIntoAnotherFileWithoutModels() throws {
        let source = try atlasFile()
        let dump = folder.url.appendingPathComponent("dump")
        #expect(try runTrellis(["export", source.path, "--ejson", "--out", dump.path]).status == 0)
        let target = folder.file("copy.realm")
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types)) }

        let run = try runTrellis(["import", target.path, dump.path, "--ejson"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Imported 2 documents of 3 classes into"))
        let again = folder.url.appendingPathComponent("again")
        #expect(try runTrellis(["export", target.path, "--ejson", "--out", again.path]).status == 0)
        for name in ["Person.json", "Dog.json", "DogClub.json"] {
            #expect(try Data(contentsOf: again.appendingPathComponent(name)) == Data(contentsOf: dump.appendingPathComponent(name)))
        }
    }

    @Test func importFailuresAreOneLineAndLeaveTheFileAsItWas() throws {
        let source = try atlasFile()
        let dump = folder.url.appendingPathComponent("dump")
        #expect(try runTrellis(["export", source.path, "--ejson", "--out", dump.path]).status == 0)
        try FileManager.default.removeItem(at: dump.appendingPathComponent("Dog.json"))
        let target = folder.file("copy.realm")
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types)) }
        let before = try Data(contentsOf: target)

        let dangling = try runTrellis(["import", target.path, dump.path, "--ejson"])
        #expect(dangling.status == 1)
        #expect(dangling.stderr.hasPrefix("trellis: error: In document 1 of 'Person' (line 1 of Person.json): "
            + "'Person.dog' links to the 'Dog' with primary key "))
        #expect(dangling.stderr.split(separator: "\n").count == 1)
        #expect(try Data(contentsOf: target) == before)

        let missing = try runTrellis(["import", folder.file("none.realm").path, dump.path, "--ejson"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("none.realm': no such file. Import needs an existing Trellis file"))
        let notAFolder = try runTrellis(["import", target.path, folder.file("nothing").path, "--ejson"])
        #expect(notAFolder.status == 1)
        #expect(notAFolder.stderr.contains("cannot read <Class>.json files from '\(folder.file("nothing").path)': no "
            + "such folder."))
    }

    @Test func longExportsAndImportsDrawAProgressBarOnStandardError() throws {
        let source = folder.file("many.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: source, objectTypes: AtlasSeed.types))
            try realm.write {
                for index in 0..<1_200 { realm.add(AtlasSeed.Dog(value: ["_id": ObjectId.generate(), "name": "dog \(index)", "age": index % 15])) }
            }
        }
        let dump = folder.url.appendingPathComponent("dump")
        let export = try runTrellis(["export", source.path, "--ejson", "--out", dump.path],
                                 environment: ["TRELLIS_PROGRESS": "1"])
        #expect(export.status == 0)
        #expect(export.stderr.hasPrefix("\rExporting [       "))
        #expect(export.stderr.hasSuffix("\rExporting [##############################] 100% 1200/1200\n"))
        let target = folder.file("copy.realm")
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types)) }
        let imported = try runTrellis(["import", target.path, dump.path, "--ejson"], environment: ["TRELLIS_PROGRESS": "1"])
        #expect(imported.status == 0)
        #expect(imported.stderr.hasSuffix("] 100% 1200/1200\n"))
        // Not a terminal and not asked for: no bar.
        #expect(try runTrellis(["export", source.path, "--ejson", "--out", dump.path]).stderr.isEmpty)
    }
}

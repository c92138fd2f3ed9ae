import Foundation
import Testing
import Trellis

/// The `trellis` commands' file problems: one line, `trellis: error: <what failed> '<where>':
/// <why>. <how to fix>`, exit code 1, and no partial output.
extension CommandLineTests {
    /// Runs `trellis` and checks the one-line error: exit code 1, nothing on standard output
    /// but what a command prints before it fails, and the expected text.
    func expectFileError(_ arguments: [String], _ expected: String,
                         sourceLocation: SourceLocation = #_sourceLocation) throws
    {
        let run = try runTrellis(arguments)
        let command = arguments.joined(separator: " ")
        #expect(run.status == 1, "\(command)", sourceLocation: sourceLocation)
        #expect(run.stderr.hasPrefix("trellis: error: "), "\(command): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.filter { $0 == "\n" }.count == 1, "\(command): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains(expected), "\(command): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(!run.stderr.contains("NSCocoaErrorDomain") && !run.stderr.contains("Error Domain"),
                "\(command): \(run.stderr)", sourceLocation: sourceLocation)
    }

    @Test func everyInputPathProblemIsAOneLineErrorSayingWhatWhereAndHow() throws {
        let source = try atlasFile()
        let missing = folder.file("missing.realm").path
        let unreadable = folder.file("unreadable.realm")
        try Data(contentsOf: source).write(to: unreadable)
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: unreadable.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: unreadable.path) }
        let dir = folder.url.path

        for command in [["inspect"], ["query"], ["export"], ["schema", "export"]] {
            let extra = command == ["query"] ? ["Dog"] : command == ["export"] ? ["--ejson"]
                : command == ["inspect"] ? [] : ["--app-services"]
            try expectFileError(command + [missing] + extra,
                                "cannot open the database '\(missing)': no such file. Check the path")
            try expectFileError(command + [dir] + extra,
                                "cannot open the database '\(dir)': it is a folder, not a file. Give the path of a file.")
            try expectFileError(command + [unreadable.path] + extra, "cannot open the database '\(unreadable.path)': "
                + "permission denied (mode 000). Make it readable (chmod u+r).")
        }

        try expectFileError(["schema", "codegen", missing, "--swift"], "cannot read '\(missing)': no such file.")
        let empty = folder.url.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try expectFileError(["schema", "codegen", empty.path, "--swift"],
                            "cannot read <Class>/schema.json files from '\(empty.path)': the folder holds none.")
        let notJSON = folder.file("schema.json")
        try Data("not json".utf8).write(to: notJSON)
        try expectFileError(["schema", "codegen", notJSON.path, "--swift"],
                            "cannot read the schema '\(notJSON.path)': it is not a JSON object.")
    }

    @Test func everyImportPathProblemIsAOneLineErrorAndLeavesTheFileAsItWas() throws {
        let source = try atlasFile()
        let dump = folder.url.appendingPathComponent("dump")
        #expect(try runTrellis(["export", source.path, "--ejson", "--out", dump.path]).status == 0)
        let target = folder.file("target.realm")
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types)) }
        let before = try Data(contentsOf: target)

        let missing = folder.file("missing.realm").path
        try expectFileError(["import", missing, dump.path, "--ejson"],
                            "cannot import into '\(missing)': no such file. Import needs an existing Trellis file")
        try expectFileError(["import", folder.url.path, dump.path, "--ejson"],
                            "cannot import into '\(folder.url.path)': it is a folder, not a file.")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: target.path)
        try expectFileError(["import", target.path, dump.path, "--ejson"], "cannot import into '\(target.path)': "
            + "the file is read-only (mode 444). Make it writable (chmod u+w), or import into a copy.")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)

        let noFolder = folder.url.appendingPathComponent("nowhere").path
        try expectFileError(["import", target.path, noFolder, "--ejson"],
                            "cannot read <Class>.json files from '\(noFolder)': no such folder.")
        try expectFileError(["import", target.path, source.path, "--ejson"],
                            "cannot read <Class>.json files from '\(source.path)': it is a file, not a folder.")
        let unreadable = dump.appendingPathComponent("Dog.json")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: unreadable.path)
        try expectFileError(["import", target.path, dump.path, "--ejson"],
                            "cannot read '\(unreadable.path)': permission denied (mode 000).")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: unreadable.path)
        #expect(try Data(contentsOf: target) == before)
    }

    @Test func everyOutputPathProblemIsAOneLineErrorWithoutPartialOutput() throws {
        let source = try atlasFile()
        let aFile = folder.file("a-file")
        try Data().write(to: aFile)
        let readOnly = folder.url.appendingPathComponent("read-only")
        try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: readOnly.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: readOnly.path) }

        for (command, option) in [(["export", source.path, "--ejson"], "--out"),
                                  (["schema", "export", source.path, "--app-services"], "--out"),
                                  (["demo"], "--dir")]
        {
            try expectFileError(command + [option, aFile.path], "cannot write into the \(option) folder "
                + "'\(aFile.path)': it is a file, not a folder.")
            try expectFileError(command + [option, aFile.appendingPathComponent("sub").path],
                                "cannot create the \(option) folder '\(aFile.path)/sub': '\(aFile.path)' is a file, "
                                    + "not a folder.")
            try expectFileError(command + [option, readOnly.path], "cannot write into the \(option) folder "
                + "'\(readOnly.path)': it is read-only (mode 555). Make it writable (chmod u+w), or choose another folder.")
            try expectFileError(command + [option, readOnly.appendingPathComponent("sub").path],
                                "cannot create the \(option) folder '\(readOnly.path)/sub': '\(readOnly.path)' is "
                                    + "read-only (mode 555).")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: readOnly.path).isEmpty)

        // A folder where Person.json goes stops the export before any file is written.
        let out = folder.url.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out.appendingPathComponent("Person.json"),
                                                withIntermediateDirectories: true)
        try expectFileError(["export", source.path, "--ejson", "--out", out.path],
                            "cannot write '\(out.path)/Person.json': a folder is in the way.")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["Person.json"])
    }

    @Test func importRefusesAPropertyTheClassDoesNotHaveUnlessIgnoreUnknown() throws {
        let source = try atlasFile()
        let dump = folder.url.appendingPathComponent("dump")
        #expect(try runTrellis(["export", source.path, "--ejson", "--out", dump.path]).status == 0)
        // Line 3 of Dog.json (after a blank line) has a property Dog does not have.
        let dogs = dump.appendingPathComponent("Dog.json")
        let rex = try String(contentsOf: dogs, encoding: .utf8).trimmingCharacters(in: .newlines)
        let fido = #"{"_id":{"$oid":"5f1b000000000000000000f1"},"name":"Fido","colour":"brown"}"#
        try Data("\(rex)\n\n\(fido)\n".utf8).write(to: dogs)
        let target = folder.file("target.realm")
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types)) }
        let before = try Data(contentsOf: target)

        try expectFileError(["import", target.path, dump.path, "--ejson"], "In document 3 of 'Dog' (line 3 of "
            + "Dog.json): 'Dog' has no property 'colour'. Remove it from the document, or import with --ignore-unknown")
        #expect(try Data(contentsOf: target) == before)

        let run = try runTrellis(["import", target.path, dump.path, "--ejson", "--ignore-unknown"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Imported 3 documents"))
        let names = try onOtherThread {
            try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types))
                .objects(AtlasSeed.Dog.self).map(\.name).sorted()
        }
        #expect(names == ["Fido", "Rex"])
        let help = try runTrellis(["import", "--help"])
        #expect(help.stdout.contains("--ignore-unknown"))
        #expect(help.stdout.contains("Drop document properties the class does not have."))
    }
}

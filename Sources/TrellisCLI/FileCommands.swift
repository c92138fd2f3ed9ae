import ArgumentParser
import Foundation
import Trellis

/// Runs a command's body; a Trellis error becomes one line on standard error and exit code 1.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as Realm.Error where error.code == .invalidQuery {
        // The first line says what is wrong and where; the rest only draws the position.
        fail(String(error.message.split(separator: "\n").first ?? ""), exitCode: 2)
    } catch let error as Realm.Error {
        fail(error.message)
    } catch let error as CommandError {
        fail(error.message)
    } catch let error as ExitCode {
        throw error
    } catch {
        fail(FileProblem.describe(error))
    }
}

/// One readable line for a file-system error (Foundation's own text is a dump of its error).
enum FileProblem {
    static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        let path = (nsError.userInfo[NSFilePathErrorKey] as? String)
            ?? (nsError.userInfo[NSURLErrorKey] as? URL)?.path ?? "the output"
        let reason: String
        let advice: String
        switch CocoaError.Code(rawValue: nsError.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile:
            (reason, advice) = ("no such file or folder", "Check that the folder exists.")
        case .fileWriteFileExists:
            (reason, advice) = ("a file is in the way", "Choose another path, or remove it.")
        case .fileWriteNoPermission, .fileReadNoPermission, .fileWriteVolumeReadOnly:
            (reason, advice) = ("permission denied", "Choose a folder you can write to.")
        case .fileWriteOutOfSpace:
            (reason, advice) = ("the disk is full", "Free space on the disk and try again.")
        default:
            (reason, advice) = (nsError.localizedDescription, "Check the path.")
        }
        return "cannot use '\(path)': \(reason). \(advice)"
    }
}

/// One line on standard error, then exit: 1 for a file problem, 2 for a bad predicate.
private func fail(_ message: String, exitCode: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("trellis: \(message.replacingOccurrences(of: "\n", with: " "))\n".utf8))
    exit(exitCode)
}

/// A problem of the command itself (a missing input file), reported like a Trellis error.
struct CommandError: Error {
    let message: String
}

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a database file's classes, object counts, properties, sizes and schema version.",
        discussion: "Works on any Trellis file, without its model classes. The file is opened read-only.")

    @Argument(help: "The database file.")
    var file: String

    func run() throws {
        try reportingErrors {
            let inspection = try FileInspection(fileURL: URL(fileURLWithPath: file))
            print("File: \(inspection.path)")
            print("Size: \(inspection.fileSize) bytes on disk, \(inspection.usedSize) bytes used")
            print("Schema version: \(inspection.schemaVersion)")
            print("Classes: \(inspection.classes.count)")
            for summary in inspection.classes {
                let kind = summary.schema.isEmbedded ? " (embedded)" : ""
                print("  \(summary.schema.className)\(kind): \(summary.objectCount) objects")
                for property in summary.schema.properties + summary.schema.computedProperties {
                    print("    \(property.name): \(Self.describe(property))")
                }
            }
        }
    }

    /// `string`, `int?`, `list<Dog>`, `linking objects<Person>.dogs`, with `primary key` / `indexed`.
    static func describe(_ property: Property) -> String {
        var base = property.type == .object || property.type == .linkingObjects
            ? property.objectClassName ?? "?" : property.type.description
        if property.type == .linkingObjects { base = "linking objects<\(base)>.\(property.linkOriginPropertyName ?? "?")" }
        let isCollection = property.isArray || property.isSet || property.isMap
        if property.type == .object, !isCollection { base = "link<\(base)>" }
        if property.isOptional, property.type != .linkingObjects { base += "?" }
        if property.isArray { base = "list<\(base)>" }
        if property.isSet { base = "set<\(base)>" }
        if property.isMap { base = "map<string, \(base)>" }
        if property.isPrimary { base += ", primary key" } else if property.isIndexed { base += ", indexed" }
        return base
    }
}

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Convert between Trellis schemas and App Services / Atlas JSON schemas.",
        subcommands: [Export.self, Codegen.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the App Services schema of a database file.",
            discussion: """
                Writes <Class>/schema.json and <Class>/relationships.json for every top-level class, the \
                layout of App Services' data_sources/<service>/<db>/<collection>/. Without --out, prints them.
                """)

        @Argument(help: "The database file.")
        var file: String
        @Flag(help: "App Services / Atlas JSON schema (the only format).")
        var appServices = false
        @Option(help: "Folder to write into (created if missing).")
        var out: String?
        @Option(help: "The data source named in relationship refs.")
        var dataSource = "mongodb-atlas"
        @Option(help: "The database named in relationship refs.")
        var database = "app"

        func validate() throws {
            guard appServices else { throw ValidationError("Say which format: --app-services.") }
        }

        func run() throws {
            try reportingErrors {
                let schema = AppServicesSchema(schema: try FileInspection(fileURL: URL(fileURLWithPath: file)).schema)
                // Everything is built before anything is written: an error leaves no partial output.
                let documents = try schema.collectionClassNames.map { name in
                    (name, [
                        ("schema.json", try schema.jsonSchema(for: name)),
                        ("relationships.json", try schema.relationships(for: name, dataSource: dataSource,
                                                                        database: database)),
                    ])
                }
                for (name, files) in documents {
                    for (fileName, data) in files {
                        if let out {
                            let folder = URL(fileURLWithPath: out).appendingPathComponent(name)
                            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                            try data.write(to: folder.appendingPathComponent(fileName))
                        } else {
                            print("// \(name)/\(fileName)")
                            print(String(decoding: data, as: UTF8.self), terminator: "")
                        }
                    }
                }
                if let out { print("Wrote \(schema.collectionClassNames.count) collections to \(out)") }
            }
        }
    }

    struct Codegen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print Swift model source for App Services schemas.",
            discussion: """
                Each argument is a schema.json file or a folder holding <Class>/schema.json (and \
                <Class>/relationships.json) as `trellis schema export --out` writes them.
                """)

        @Argument(help: "schema.json files or folders.")
        var paths: [String]
        @Flag(help: "Swift model classes (the only format).")
        var swift = false

        func validate() throws {
            guard swift else { throw ValidationError("Say which format: --swift.") }
            guard !paths.isEmpty else { throw ValidationError("Give at least one schema file or folder.") }
        }

        func run() throws {
            try reportingErrors {
                var schemas = [Data]()
                var relationships = [String: Data]()
                for path in paths {
                    for schemaFile in try Self.schemaFiles(path) {
                        let data = try Self.read(schemaFile)
                        schemas.append(data)
                        let sibling = schemaFile.deletingLastPathComponent().appendingPathComponent("relationships.json")
                        if let title = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["title"] as? String,
                           let links = try? Data(contentsOf: sibling)
                        {
                            relationships[title] = links
                        }
                    }
                }
                print(try AppServicesSchema.swiftModels(schemas: schemas, relationships: relationships), terminator: "")
            }
        }

        static func schemaFiles(_ path: String) throws -> [URL] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CommandError(message: "'\(path)' does not exist.")
            }
            let url = URL(fileURLWithPath: path)
            guard isDirectory.boolValue else { return [url] }
            let entries = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            return entries.map { url.appendingPathComponent($0).appendingPathComponent("schema.json") }
                .filter { FileManager.default.fileExists(atPath: $0.path) }
        }

        static func read(_ url: URL) throws -> Data {
            do { return try Data(contentsOf: url) } catch {
                throw CommandError(message: "Cannot read '\(url.path)': \(error.localizedDescription)")
            }
        }
    }
}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every object of a database file as MongoDB Extended JSON (canonical).",
        discussion: """
            One document per line per top-level class (<Class>.json, the format mongoimport reads): links \
            as the target's primary key, embedded objects as sub-documents. Works without the model classes.
            """)

    @Argument(help: "The database file.")
    var file: String
    @Flag(help: "MongoDB Extended JSON (the only format).")
    var ejson = false
    @Option(help: "Folder to write <Class>.json files into (created if missing). Without it, prints them.")
    var out: String?

    func validate() throws {
        guard ejson else { throw ValidationError("Say which format: --ejson.") }
    }

    func run() throws {
        try reportingErrors {
            var bar = ProgressBar("Exporting")
            let documents = try ExtendedJSON.documents(inFile: URL(fileURLWithPath: file)) { bar.update($0, of: $1) }
            for name in documents.keys.sorted() {
                let lines = (documents[name] ?? []).map { String(decoding: $0, as: UTF8.self) + "\n" }.joined()
                if let out {
                    let folder = URL(fileURLWithPath: out)
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    try Data(lines.utf8).write(to: folder.appendingPathComponent("\(name).json"))
                } else {
                    print("// \(name)")
                    print(lines, terminator: "")
                }
            }
            if let out { print("Wrote \(documents.values.map(\.count).reduce(0, +)) documents to \(out)") }
        }
    }
}

import ArgumentParser
import Foundation
import Trellis

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a database file's classes, object counts, properties, sizes and schema version.",
        discussion: "Works on any Trellis file, without its model classes. The file is opened read-only.")

    @Argument(help: "The database file.")
    var file: String
    @OptionGroup var keyFile: KeyFileOption

    func run() throws {
        try reportingErrors {
            let database = try CommandFiles.databaseToRead(file), key = try keyFile.key()
            let inspection = try keyFile.opening(database) { try FileInspection(fileURL: database, encryptionKey: key) }
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

    /// `string`, `int?`, `list<Dog>`, `linking objects<Person>.dogs`, with `primary key` / `indexed`
    /// and `cascade on delete`.
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
        if property.deleteRule == .cascade { base += ", cascade on delete" }
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
        @OptionGroup var keyFile: KeyFileOption

        func validate() throws {
            guard appServices else { throw ValidationError("Say which format: --app-services.") }
        }

        func run() throws {
            try reportingErrors {
                let input = try CommandFiles.databaseToRead(file), key = try keyFile.key()
                let schema = AppServicesSchema(schema: try keyFile.opening(input) {
                    try FileInspection(fileURL: input, encryptionKey: key).schema
                })
                // Everything is built before anything is written: an error leaves no partial output.
                let documents = try schema.collectionClassNames.map { name in
                    (name, [
                        ("schema.json", try schema.jsonSchema(for: name)),
                        ("relationships.json", try schema.relationships(for: name, dataSource: dataSource,
                                                                        database: database)),
                    ])
                }
                let outFolder = try out.map { try CommandFiles.outputFolder($0, option: "--out") }
                if let outFolder {
                    for (name, files) in documents {
                        let folder = outFolder.appendingPathComponent(name)
                        try CommandFiles.checkCanWrite(folder, asFolder: true)
                        for (fileName, _) in files { try CommandFiles.checkCanWrite(folder.appendingPathComponent(fileName)) }
                    }
                }
                for (name, files) in documents {
                    for (fileName, data) in files {
                        if let outFolder {
                            let folder = try CommandFiles.outputFolder(outFolder.appendingPathComponent(name).path,
                                                                       option: "--out")
                            try CommandFiles.write(data, to: folder.appendingPathComponent(fileName))
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
                        let data = try CommandFiles.read(schemaFile)
                        guard let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                            throw CommandError(message: "cannot read the schema '\(schemaFile.path)': it is not a JSON "
                                + "object. Give a schema.json as `trellis schema export --app-services` writes it.")
                        }
                        schemas.append(data)
                        let sibling = schemaFile.deletingLastPathComponent().appendingPathComponent("relationships.json")
                        if let title = document["title"] as? String, let links = try? Data(contentsOf: sibling) {
                            relationships[title] = links
                        }
                    }
                }
                print(try AppServicesSchema.swiftModels(schemas: schemas, relationships: relationships), terminator: "")
            }
        }

        /// The schema file a path names, or the `<Class>/schema.json` files of a folder.
        static func schemaFiles(_ path: String) throws -> [URL] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                return [URL(fileURLWithPath: path).standardizedFileURL]
            }
            let folder = try CommandFiles.folderToRead(path, holding: "<Class>/schema.json files")
            let files = try CommandFiles.contents(of: folder)
                .map { folder.appendingPathComponent($0).appendingPathComponent("schema.json") }
                .filter { FileManager.default.fileExists(atPath: $0.path) }
            guard !files.isEmpty else {
                throw CommandError(message: "cannot read <Class>/schema.json files from '\(folder.path)': the folder "
                    + "holds none. Give a schema.json file, or a folder as `trellis schema export --out` writes it.")
            }
            return files
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
    @OptionGroup var keyFile: KeyFileOption

    func validate() throws {
        guard ejson else { throw ValidationError("Say which format: --ejson.") }
    }

    func run() throws {
        try reportingErrors {
            var bar = ProgressBar("Exporting")
            let database = try CommandFiles.databaseToRead(file), key = try keyFile.key()
            let documents = try keyFile.opening(database) {
                try ExtendedJSON.documents(inFile: database, encryptionKey: key) { bar.update($0, of: $1) }
            }
            // Made once every document is read: a file that cannot be exported leaves no folder.
            let folder = try out.map { try CommandFiles.outputFolder($0, option: "--out") }
            for name in documents.keys {
                try folder.map { try CommandFiles.checkCanWrite($0.appendingPathComponent("\(name).json")) }
            }
            for name in documents.keys.sorted() {
                let lines = (documents[name] ?? []).map { String(decoding: $0, as: UTF8.self) + "\n" }.joined()
                if let folder {
                    try CommandFiles.write(Data(lines.utf8), to: folder.appendingPathComponent("\(name).json"))
                } else {
                    print("// \(name)")
                    print(lines, terminator: "")
                }
            }
            if let out { print("Wrote \(documents.values.map(\.count).reduce(0, +)) documents to \(out)") }
        }
    }
}

import ArgumentParser
import Foundation
import Trellis

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import MongoDB Extended JSON documents into a database file.",
        discussion: """
            Reads <Class>.json files (one canonical Extended JSON document per line, the layout \
            `trellis export --ejson --out` writes and mongoexport writes) from the folder and writes them \
            into the file by the schema stored in it: no model classes needed, and the file keeps its schema \
            version. A document whose primary key \
            is in the file updates that object; others add objects. Links are the target's primary key and \
            may point at objects of the same import. Everything is one write transaction: on any error the \
            file is left as it was. A document property the class does not have is an error unless \
            --ignore-unknown drops it.
            """)

    @Argument(help: "The database file (it must exist: its stored schema says how to store the documents).")
    var file: String

    @Argument(help: "The folder holding <Class>.json files.")
    var folder: String

    @Flag(help: "MongoDB Extended JSON (the only format).")
    var ejson = false

    @Flag(help: ArgumentHelp(
        "Drop document properties the class does not have.",
        discussion: "By default a property the file's class does not have stops the import with an error naming the "
            + "file, line, class and property, and nothing is written: dropping it silently would lose data."))
    var ignoreUnknown = false

    @OptionGroup var keyFile: KeyFileOption

    func validate() throws {
        guard ejson else { throw ValidationError("Say which format: --ejson.") }
    }

    func run() throws {
        try reportingErrors {
            let key = try keyFile.key()
            let documents = try Self.documents(inFolder: folder)
            let database = try CommandFiles.databaseToWrite(file)
            var bar = ProgressBar("Importing")
            let count = try keyFile.opening(database) {
                try ExtendedJSON.importDocuments(documents, intoFile: database, ignoringUnknownProperties: ignoreUnknown,
                                                 encryptionKey: key) { bar.update($0, of: $1) }
            }
            print("Imported \(count) documents of \(documents.count) classes into \(file)")
        }
    }

    /// Class name → its documents, from the folder's `<Class>.json` files: every line, blank
    /// ones too (the import skips them), so that a document's number in an error is its line.
    static func documents(inFolder path: String) throws -> [String: [Data]] {
        let folder = try CommandFiles.folderToRead(path, holding: "<Class>.json files")
        let names = try CommandFiles.contents(of: folder).filter { $0.hasSuffix(".json") }
        guard !names.isEmpty else {
            throw CommandError(message: "cannot read <Class>.json files from '\(folder.path)': the folder holds none. "
                + "Give a folder as `trellis export --ejson --out` writes it.")
        }
        var documents = [String: [Data]]()
        for name in names {
            let url = folder.appendingPathComponent(name)
            var lines = try CommandFiles.read(url).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            if lines.last?.isEmpty == true { lines.removeLast() }
            documents[String(name.dropLast(".json".count))] = lines.map { Data($0) }
        }
        return documents
    }
}

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
            into the file by the schema stored in it: no model classes needed. A document whose primary key \
            is in the file updates that object; others add objects. Links are the target's primary key and \
            may point at objects of the same import. Everything is one write transaction: on any error the \
            file is left as it was.
            """)

    @Argument(help: "The database file (it must exist: its stored schema says how to store the documents).")
    var file: String

    @Argument(help: "The folder holding <Class>.json files.")
    var folder: String

    @Flag(help: "MongoDB Extended JSON (the only format).")
    var ejson = false

    @Flag(help: "Drop document fields the class does not have (by default they stop the import).")
    var ignoreUnknown = false

    func validate() throws {
        guard ejson else { throw ValidationError("Say which format: --ejson.") }
    }

    func run() throws {
        try reportingErrors {
            let documents = try Self.documents(inFolder: folder)
            guard FileManager.default.fileExists(atPath: file) else {
                throw CommandError(message: "'\(file)' does not exist: import needs an existing Trellis file, whose "
                    + "stored schema says how to store the documents.")
            }
            var bar = ProgressBar("Importing")
            let count = try ExtendedJSON.importDocuments(documents, intoFile: URL(fileURLWithPath: file),
                                                         ignoringUnknownProperties: ignoreUnknown) {
                bar.update($0, of: $1)
            }
            print("Imported \(count) documents of \(documents.count) classes into \(file)")
        }
    }

    /// Class name → its documents, from the folder's `<Class>.json` files.
    static func documents(inFolder folder: String) throws -> [String: [Data]] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandError(message: "'\(folder)' is not a folder of <Class>.json files.")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }.sorted()
        guard !names.isEmpty else { throw CommandError(message: "'\(folder)' holds no <Class>.json files.") }
        var documents = [String: [Data]]()
        for name in names {
            let url = URL(fileURLWithPath: folder).appendingPathComponent(name)
            let text: String
            do { text = try String(contentsOf: url, encoding: .utf8) } catch {
                throw CommandError(message: "Cannot read '\(url.path)': \(error.localizedDescription)")
            }
            documents[String(name.dropLast(".json".count))] = text.split(whereSeparator: \.isNewline)
                .filter { !$0.allSatisfy(\.isWhitespace) }.map { Data($0.utf8) }
        }
        return documents
    }
}

import ArgumentParser
import Foundation
import Trellis

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the objects of a class that match a Realm predicate.",
        discussion: """
            Works on any Trellis file, without its model classes: the classes, links and collections \
            come from the schema stored in the file, which is opened read-only. Each object prints as \
            one Extended JSON document per line (links as the target's primary key), or, with --json, \
            all of them as one JSON array. A predicate that does not parse or names an unknown property \
            prints the problem and its position, with exit code 2.

            Example: trellis query app.realm Person "dog.age > 5 AND ANY dogs.name BEGINSWITH 'R'" --sort name
            """)

    @Argument(help: "The database file.")
    var file: String

    @Argument(help: "A top-level class of the file.")
    var className: String

    @Argument(help: "A Realm predicate, for example \"age > 5 AND dog.name == 'Rex'\".")
    var predicate = "TRUEPREDICATE"

    @Option(help: ArgumentHelp("Sort by this property (or to-one key path, such as dog.age).", valueName: "keypath"))
    var sort: String?

    @Flag(help: "Sort in descending order.")
    var descending = false

    @Option(help: "Print at most this many objects.")
    var limit: Int?

    @Flag(help: "Print one JSON array instead of one document per line.")
    var json = false

    @OptionGroup var keyFile: KeyFileOption

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more.") }
        if descending, sort == nil { throw ValidationError("--descending needs --sort.") }
    }

    func run() throws {
        try reportingErrors {
            let database = try CommandFiles.databaseToRead(file), key = try keyFile.key()
            let documents = try keyFile.opening(database) {
                try StoredSchemaQuery.documents(inFile: database, className: className, predicate: predicate,
                                                sortedBy: sort, ascending: !descending, limit: limit,
                                                encryptionKey: key)
            }
            if json {
                let objects = try documents.map { try JSONSerialization.jsonObject(with: $0) }
                let data = try JSONSerialization.data(withJSONObject: objects,
                                                      options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            } else {
                for document in documents { print(String(decoding: document, as: UTF8.self)) }
            }
            FileHandle.standardError.write(Data("\(documents.count) \(className) object\(documents.count == 1 ? "" : "s")\n".utf8))
        }
    }
}

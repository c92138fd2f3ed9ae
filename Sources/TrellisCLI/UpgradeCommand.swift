import ArgumentParser
import Foundation
import TrellisLMDBFormat
import TrellisStorage

struct UpgradeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Convert a file written by an earlier Trellis version (LMDB format) to the current format.",
        discussion: """
            Every tree, key and value is copied in one pass into a new file, which is verified against the \
            original and then put in its place; the original is kept as FILE.lmdb-backup until then. A stopped \
            upgrade (a crash, a kill) leaves the original or the verified new file, and running the command \
            again finishes it. A file already in the current format is left as it is. No other process may \
            have the file open. A writable Realm converts such a file when it opens it; a read-only open needs \
            this command first.
            """)

    @Argument(help: "The database file.")
    var file: String

    func run() throws {
        try reportingErrors {
            let path = URL(fileURLWithPath: file).path
            do {
                let report = try LMDBUpgrade.upgrade(path: path)
                switch report.outcome {
                case .alreadyCurrent:
                    print("\(path) is already in the current format; nothing to do.")
                case .converted:
                    print("Converted \(path): \(report.trees) trees, \(report.entries) entries, "
                        + "\(report.bytesBefore) bytes before, \(report.bytesAfter) after.")
                case .finishedEarlierConversion:
                    print("Finished the interrupted conversion of \(path): the converted file matches the backup, "
                        + "which was removed.")
                }
            } catch let error as LMDBFormatError {
                throw CommandError(message: "cannot upgrade '\(path)': \(error.message)")
            } catch let error as StorageError {
                throw CommandError(message: "cannot upgrade '\(path)': \(error.message) The original file is unchanged.")
            }
        }
    }
}

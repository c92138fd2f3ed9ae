import ArgumentParser
import Foundation
import Trellis

@main
struct TrellisCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trellis",
        abstract: "Inspect, query, export and import Trellis databases; demonstrate the seeds' models.",
        discussion: """
            Errors go to standard error in one line, `trellis: error: <what failed> '<where>': <why>. <how to \
            fix>`; the exit code is 1 for a file problem, 2 for a bad predicate, 64 for bad arguments.
            """,
        subcommands: [Demo.self, Inspect.self, QueryCommand.self, SchemaCommand.self, ExportCommand.self, ImportCommand.self,
                      UpgradeCommand.self]
    )
}


import Foundation

/// What a run of the `trellis` executable printed and how it ended.
struct TrellisCommandRun {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs the `trellis` executable built beside the tests, as a user would, and waits for it.
/// `environment` is added to this process's environment (a key given here wins).
func runTrellis(_ arguments: [String], environment: [String: String] = [:]) throws -> TrellisCommandRun {
    let process = Process()
    process.executableURL = processHelperURL().deletingLastPathComponent().appendingPathComponent("trellis")
    process.arguments = arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    // Both pipes are drained before waiting: a child that fills one would otherwise block.
    let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return TrellisCommandRun(status: process.terminationStatus, stdout: stdout, stderr: stderr)
}

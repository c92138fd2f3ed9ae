import Foundation
import Testing

/// `TrellisProcessHelper hold-readers PATH count`, started and waited for: it has the file at
/// `path` open and holds `count` snapshots (frozen Realms) when this returns, until it is killed.
/// The tests that need another process to have a file open, or to die holding readers, start it
/// here (DeadReaderTests, CompactOnLaunchRaceTests, DeleteFilesProcessTests).
///
/// Expects the helper's first line to be `holding <count>` (it prints it once the snapshots are
/// held): a helper that failed to start or to open the file is reported at the caller's line.
func startHoldingReaders(_ path: String, count: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) throws
    -> Process
{
    let process = Process()
    process.executableURL = processHelperURL()
    process.arguments = ["hold-readers", path, "\(count)"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let line = String(decoding: output.fileHandleForReading.availableDataUntilNewline(), as: UTF8.self)
    #expect(line == "holding \(count)", sourceLocation: sourceLocation)
    return process
}

extension Process {
    /// Kills the process with SIGKILL (as a crash would end it) if it is still running, and waits
    /// for it to end.
    func killAndWait() {
        if isRunning { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }
}

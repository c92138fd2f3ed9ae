import Foundation

/// The `TrellisStorageProcessHelper` processes a test starts, each writing its standard error to
/// its own file (never the test's own output: a helper left running would hold `swift test`'s
/// pipe open). `stopAll()` kills and reaps every one of them; call it in a `defer` so that no
/// test path, failing or not, leaves one running. The helpers also watch the test process and
/// exit when it dies (`ParentWatch` in the helper).
final class HelperProcesses {
    private let directory: String
    private var started: [(process: Process, errorPath: String)] = []
    /// Variables added to every helper's environment (TRELLIS_STORAGE_TEST_KEY: the file's key).
    var environment: [String: String] = [:]

    /// Helpers whose error output goes to files in `directory`.
    init(directory: String) {
        self.directory = directory
    }

    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("TrellisStorageProcessHelper")
    }

    /// Starts the helper with `arguments`.
    func start(_ arguments: [String], output: Pipe? = nil, input: Pipe? = nil) throws -> Process {
        let errorPath = directory + "/helper-\(started.count).stderr"
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["TRELLIS_HELPER_PARENT_PID"] = String(getpid())
        environment.merge(self.environment) { $1 }
        process.environment = environment
        let errorFile = FileHandle(forWritingAtPath: errorPath)
        defer { try? errorFile?.close() }
        process.standardError = errorFile
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        started.append((process, errorPath))
        return process
    }

    /// What `process` wrote to its standard error (its last 2,000 bytes).
    func errorOutput(of process: Process) -> String {
        guard let path = started.first(where: { $0.process === process })?.errorPath,
              let data = FileManager.default.contents(atPath: path)
        else { return "" }
        return String(decoding: data.suffix(2_000), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// How `process` ended, and what it said on standard error.
    func describeExit(of process: Process) -> String {
        let how = process.terminationReason == .uncaughtSignal
            ? "was stopped by signal \(process.terminationStatus)" : "exited with status \(process.terminationStatus)"
        let said = errorOutput(of: process)
        return said.isEmpty ? how : "\(how): \(said)"
    }

    /// Kills `process` with SIGKILL and waits for it.
    func kill(_ process: Process) {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Kills and reaps every helper started.
    func stopAll() {
        for (process, _) in started { kill(process) }
    }
}

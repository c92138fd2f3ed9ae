import Foundation

// The processes the benchmark runs: psql (to make a database per run) and trellis-sync. With
// posix_spawn and waitpid rather than Foundation's Process, as the sync tests do.

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a tool to completion; its standard output, trimmed.
@discardableResult
func runTool(_ path: String, _ arguments: [String]) throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("syncbench-tool-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let out = folder.appendingPathComponent("out").path, err = folder.appendingPathComponent("err").path
    let pid = try spawn(path, arguments, stdout: out, stderr: err)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    guard status == 0 else {
        let errors = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        throw BenchError("\(path) \(arguments.joined(separator: " ")) failed (status \(status)): \(errors)")
    }
    return ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Starts a program with its output in two files; its pid.
func spawn(_ path: String, _ arguments: [String], stdout: String, stderr: String) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
    guard spawned == 0 else { throw BenchError("cannot run \(path): error \(spawned)") }
    return pid
}

/// A new empty database on the PostgreSQL at `base`; its URL.
func makeDatabase(_ base: String, name: String) throws -> String {
    try runTool("/usr/bin/env", ["psql", base, "-v", "ON_ERROR_STOP=1", "-At", "-c", "CREATE DATABASE \(name)"])
    guard let slash = base.lastIndex(of: "/") else { throw BenchError("not a PostgreSQL URL: \(base)") }
    return String(base[...slash]) + name
}

/// A trellis-sync process on a free loopback port, stopped by `stop()` (or when this process
/// ends: `--parent-pid`).
final class ServerProcess {
    let pid: pid_t
    let port: Int
    private let folder: URL
    private var stopped = false

    /// `rules`: a rules file (`--rules`); without one, no rules (`--allow-all`).
    init(executable: String, database: String, schema: URL, rules: URL? = nil, extraArguments: [String] = []) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("syncbench-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let out = folder.appendingPathComponent("out").path, err = folder.appendingPathComponent("err").path
        pid = try spawn(executable, ["--postgres", database, "--schema", schema.path, "--host", "127.0.0.1",
                                     "--port", "0", "--parent-pid", String(getpid()),
                                     // The benchmark measures sync, not permissions: no rules unless given,
                                     // anonymous users.
                                     "--auth", "anonymous"] + (rules.map { ["--rules", $0.path] } ?? ["--allow-all"])
                                     + extraArguments, stdout: out, stderr: err)
        let deadline = Date().addingTimeInterval(60)
        var found: Int?
        while Date() < deadline, found == nil {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }),
               let portText = line.split(separator: ":").last {
                found = Int(portText)
            } else {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { stopped = true; break }
                usleep(20_000)
            }
        }
        guard let found else {
            let errors = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
            if !stopped { kill(pid, SIGKILL); waitpid(pid, nil, 0) }
            throw BenchError("trellis-sync (\(executable)) did not start against \(database): \(errors)")
        }
        port = found
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The server's log (its standard error) so far.
    var serverLog: String { (try? String(contentsOfFile: folder.appendingPathComponent("err").path, encoding: .utf8)) ?? "" }

    func stop() {
        guard !stopped else { return }
        stopped = true
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        try? FileManager.default.removeItem(at: folder)
    }

    deinit { stop() }
}

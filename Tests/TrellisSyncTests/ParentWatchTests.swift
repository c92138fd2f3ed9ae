import Foundation
import Testing

/// `trellis-sync --parent-pid PID` stops when PID has ended, however it ended: a test process
/// that crashed must not leave its server running (one did, for 35 minutes, in session 24).
///
/// The parent here is a real process (a shell) killed with SIGKILL and not reaped while the
/// server is watched: a zombie, as a crashed test process is while the tool that ran it has not
/// reaped it yet, and `kill(PID, 0)` succeeds on a zombie (the old watch's test).
@Suite
struct ParentWatchTests {
    /// Whether Linux lists `pid` as a zombie.
    static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    /// Whether `pid` has ended: gone, or a zombie (an orphaned server's new parent may not reap it).
    static func hasEnded(_ pid: pid_t) -> Bool { kill(pid, 0) != 0 || isZombie(pid) }

    /// `ownChild`: the server is the shell's child (watched through its parent process id);
    /// otherwise it is started by a subshell that exits at once, so PID is not its parent
    /// (watched with `kill` and `/proc`).
    @Test(arguments: [true, false])
    func serverExitsWhenTheProcessGivenAsParentIsKilledWithSIGKILLEvenBeforeItIsReaped(ownChild: Bool) async throws {
        let database = try PostgresFixture.makeDatabase()
        let schema = try makeSchemaFile()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parent-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // $$ is the outer shell in a subshell too; `exec sleep` keeps that pid and leaves no
        // child behind when it is killed.
        let start = #""$0" --postgres "$1" --schema "$2" --port 0 --allow-all --auth anonymous --jwt-key "$4" "#
            + #"--parent-pid $$ >"$3/out" 2>"$3/err" & echo $! >"$3/pid""#
        let script = (ownChild ? start : "(\(start))") + "; exec sleep 600"
        let shell = try spawnBackground("/bin/sh", ["-c", script, ServerProcess.executable.path, database, schema.path,
                                                    folder.path, testJWTKey],
                                        stdout: folder.appendingPathComponent("shell-out").path,
                                        stderr: folder.appendingPathComponent("shell-err").path)
        var shellReaped = false
        var serverPid: pid_t = 0
        defer {
            if serverPid > 0, !Self.hasEnded(serverPid) { kill(serverPid, SIGKILL) }
            if !shellReaped { kill(shell, SIGKILL); waitpid(shell, nil, 0) }
        }
        let log = { (try? String(contentsOf: folder.appendingPathComponent("err"), encoding: .utf8)) ?? "" }
        #expect(try await eventually(.seconds(90)) {
            let out = (try? String(contentsOf: folder.appendingPathComponent("out"), encoding: .utf8)) ?? ""
            return out.contains("listening on")
        }, "the server did not start: \(log())")
        serverPid = pid_t((try String(contentsOf: folder.appendingPathComponent("pid"), encoding: .utf8))
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(serverPid > 0)
        #expect(!Self.hasEnded(serverPid))

        kill(shell, SIGKILL)
        // Not reaped: the shell stays a zombie while the server is watched.
        #expect(try await eventually(.seconds(10)) { Self.isZombie(shell) })
        #expect(try await eventually(.seconds(30)) { Self.hasEnded(serverPid) },
                "the server outlived its parent: \(log())")
        #expect(log().contains("the parent process \(shell) is gone: stopping"), "\(log())")
        waitpid(shell, nil, 0)
        shellReaped = true
    }
}

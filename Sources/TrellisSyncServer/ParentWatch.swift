import Foundation

/// `--parent-pid PID` (tests and scripts that start a server for themselves): the server stops
/// when that process is gone, however it ended.
///
/// "Gone" is not "`kill(PID, 0)` fails": a process killed with SIGKILL stays a zombie until its
/// own parent reaps it, and `kill` succeeds on a zombie. A test process that crashed while the
/// tool that ran it waits for its output first is such a zombie, and its server used to outlive
/// it for good. So:
/// - when PID is the server's own parent, the server watches its parent process id: the kernel
///   gives an orphan a new parent (init, or a subreaper) as soon as its parent exits, before
///   the parent is reaped, and a reused PID cannot be mistaken for it;
/// - for any other process, it is gone when `kill` fails or when Linux says it is a zombie
///   (`/proc/PID/stat`, state `Z`).
struct ParentWatch: Sendable {
    let parent: pid_t
    /// Whether `parent` was the server's parent process when the watch began.
    let isOwnParent: Bool

    init(parent: pid_t) {
        self.parent = parent
        isOwnParent = getppid() == parent
    }

    /// Whether the watched process has ended (exited, killed, or a zombie).
    var parentIsGone: Bool {
        if isOwnParent { return getppid() != parent }
        if kill(parent, 0) != 0 { return true }
        return Self.isZombie(parent)
    }

    /// Whether Linux lists `pid` as a zombie (false where there is no `/proc`).
    static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        // "pid (command) S ...": the state follows the command, which may hold spaces and ')'.
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    /// Returns when the watched process is gone (checked every `interval`); throws when cancelled.
    func waitUntilGone(interval: Duration = .milliseconds(250)) async throws {
        while !parentIsGone { try await Task.sleep(for: interval) }
    }
}

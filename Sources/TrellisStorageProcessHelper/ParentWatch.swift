import Foundation

/// Ends this helper when the test process that started it is gone, so that a test which fails,
/// crashes or is killed never leaves helpers running (a writer left alone grows its file forever,
/// and one holding the test's output pipe keeps `swift test` waiting).
///
/// The test passes its process id in `TRELLIS_HELPER_PARENT_PID`; without it, the parent at
/// start is watched. A thread compares `getppid()` with it every 50 ms: a process whose parent
/// dies is handed to another (init or a subreaper), so the id changes. Portable (Linux and
/// Darwin), and unlike `PR_SET_PDEATHSIG` not tied to the thread that spawned the helper.
enum ParentWatch {
    static func start() {
        let expected = ProcessInfo.processInfo.environment["TRELLIS_HELPER_PARENT_PID"].flatMap { Int32($0) } ?? getppid()
        if getppid() != expected { _exit(9) }
        let thread = Thread {
            while getppid() == expected { usleep(50_000) }
            _exit(9)
        }
        thread.stackSize = 64 << 10
        thread.start()
    }
}

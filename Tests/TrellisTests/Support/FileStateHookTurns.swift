import Foundation

/// `FileState.willWaitForReservationHook` and its kin are process-wide: two suites that set them
/// at the same time (FileReservationRaceTests and CompactOnLaunchRaceTests, each serialized only
/// within itself) clear each other's hook, and the test whose hook went waits forever. Tests that
/// set one take their turn here.
enum FileStateHookTurns {
    private static let lock = NSLock()

    static func withTurn<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

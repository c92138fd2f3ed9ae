import Foundation

/// Whether any process has a database file open, told the way LMDB tells it: every process
/// with the file open holds a shared lock on the first byte of its lock file, so a write lock
/// there is granted only when nobody has it open. Held, it also makes other processes'
/// opens wait until it is released (LMDB waits for that lock), which is what compacting a
/// file in place needs.
final class ExclusiveFileUse {
    private let descriptor: Int32

    /// Takes the lock, or returns nil when another process has the file open (or the lock
    /// file cannot be opened).
    init?(path: String) {
        let descriptor = open(path + "-lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        guard fcntl(descriptor, F_SETLK, &lock) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    deinit {
        // Closing the descriptor releases the process's locks on the file.
        close(descriptor)
    }
}

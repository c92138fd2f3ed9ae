import Foundation
import Logging
import Synchronization

/// Crash points for the recovery tests: the server kills itself with SIGKILL at an exact place
/// of an upload, which a signal from outside can only hit by chance; and a pause between an
/// upload's merge and its history lock, so a test can change the merged objects right then.
/// Off unless `--kill-before-upload-commit N`, `--kill-after-upload-commit N` or
/// `--pause-after-merge MILLISECONDS` is given.
struct FaultInjection: Sendable {
    /// Die when the N-th upload of this process is written but not committed (PostgreSQL
    /// rolls it back; the client sends it again to the next server).
    var killBeforeCommitOfUpload: Int?
    /// Die when the N-th upload of this process is committed but not acknowledged (the client
    /// sends it again; it must not be applied twice).
    var killAfterCommitOfUpload: Int?
    /// Sleep this long after each merge of an upload, before taking the history lock (tests of
    /// an object changed by another writer during a merge).
    var pauseAfterMergeMilliseconds: Int?
    /// Before committing each upload (written, its history entries pending), wait until this
    /// file exists (tests of an upload that wrote first and commits last).
    var holdUploadCommitUntil: String?
    /// Before decoding each message of at least ``largeMessageBytes``, keep the session's thread
    /// busy on the CPU this long (tests: a stand-in for the seconds a debug build spends
    /// unmasking and decoding a 16 MB message, without its size).
    var busyPerLargeMessageMilliseconds: Int?
    static let largeMessageBytes = 64 << 10

    /// A session about to decode a message of `bytes` bytes.
    func decoding(bytes: Int, logger: Logging.Logger) {
        guard let busy = busyPerLargeMessageMilliseconds, bytes >= Self.largeMessageBytes else { return }
        logger.notice("fault injection: busy for \(busy) ms before decoding a message of \(bytes) bytes")
        // Not a sleep: the thread runs and cannot take other jobs, as in a long decode.
        let end = ContinuousClock.now + .milliseconds(busy)
        var spins = 0
        while ContinuousClock.now < end { spins &+= 1 }
        logger.notice("fault injection: done being busy (\(spins) checks of the clock)")
    }

    func merged(_ uploadId: Int64, logger: Logging.Logger) async throws {
        guard let pause = pauseAfterMergeMilliseconds else { return }
        logger.notice("fault injection: pausing \(pause) ms after merging upload \(uploadId)")
        try await Task.sleep(for: .milliseconds(pause))
    }

    func beforeCommit(_ uploadId: Int64, logger: Logging.Logger) async throws {
        guard let path = holdUploadCommitUntil else { return }
        logger.notice("fault injection: upload \(uploadId) written, holding its commit until \(path) exists")
        while !FileManager.default.fileExists(atPath: path) { try await Task.sleep(for: .milliseconds(20)) }
    }

    private static let written = Atomic<Int>(0)
    private static let committed = Atomic<Int>(0)

    func uploadWritten(_ uploadId: Int64, logger: Logging.Logger) {
        guard let limit = killBeforeCommitOfUpload,
              Self.written.add(1, ordering: .relaxed).newValue >= limit else { return }
        die("upload \(uploadId) written, not committed", logger: logger)
    }

    func uploadCommitted(_ uploadId: Int64, logger: Logging.Logger) {
        guard let limit = killAfterCommitOfUpload,
              Self.committed.add(1, ordering: .relaxed).newValue >= limit else { return }
        die("upload \(uploadId) committed, not acknowledged", logger: logger)
    }

    private func die(_ moment: String, logger: Logging.Logger) -> Never {
        logger.critical("fault injection: killing the process (\(moment))")
        FileHandle.standardError.write(Data("fault injection: SIGKILL (\(moment))\n".utf8))
        kill(getpid(), SIGKILL)
        while true { pause() }
    }
}

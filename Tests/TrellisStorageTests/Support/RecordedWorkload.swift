@testable import TrellisStorage

/// An environment on a `MemoryFile` that records every write and sync, and the contents expected
/// after each commit: the workload that `PowerLossTests` and `PowerLossCompactionTests` then cut
/// at every event boundary (`PowerLossTests.crashEverywhere`).
final class RecordedWorkload {
    /// Tree name -> key -> value.
    typealias Model = [String: [[UInt8]: [UInt8]]]

    let file = MemoryFile()
    let environment: StorageEnvironment
    /// The file when recording started (synced).
    let base: [UInt8]
    /// The contents now; a `commit` body changes it with the transaction.
    var model: Model = [:]
    /// The contents after each commit, by commit number.
    private(set) var models: [UInt64: Model] = [1: [:]]

    /// A new file; commits sync when `durable` (the file then counts them durable when acknowledged).
    init(durable: Bool, key: [UInt8]? = nil) throws {
        var options = StorageEnvironment.Options()
        options.encryptionKey = key
        options.syncOnCommit = durable
        environment = try StorageEnvironment(file: file, options: options)
        file.isDurable = durable
        base = file.contents
        file.isRecording = true
    }

    /// Runs `body` in a write transaction and commits it, marking in the recording where the
    /// commit began and where it was acknowledged; the contents after it are `model` then.
    func commit(_ body: (WriteTransaction) throws -> Void) throws {
        let write = try environment.beginWrite()
        try body(write)
        let txnID = write.txnID
        file.note(.commitBegan(txnID))
        try write.commit()
        file.note(.commitAcknowledged(txnID))
        models[txnID] = model
    }

    /// Runs `body`, which makes commits of its own that change no contents (compaction), at most
    /// `limit` of them: a crash may leave any of them. Returns the last commit's number.
    func commitsKeepingContents(limit: UInt64, _ body: () throws -> Void) throws -> (first: UInt64, last: UInt64) {
        let first = try environment.read { $0.txnID } + 1
        for txnID in first..<(first + limit) { models[txnID] = model }
        file.note(.commitBegan(first + limit - 1))
        try body()
        let last = try environment.read { $0.txnID }
        file.note(.commitAcknowledged(last))
        return (first, last)
    }

    /// Closes the environment; returns what `crashEverywhere` takes.
    func finish() -> (MemoryFile, [UInt64: Model], [UInt8]) {
        environment.close()
        return (file, models, base)
    }
}

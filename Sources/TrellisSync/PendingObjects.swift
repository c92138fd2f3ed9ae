/// The objects with changes in the outbox (`class\0primary key`, ``SyncStoreLayout/outboxObject(_:)``),
/// kept up to date from the outbox's newest and oldest entries instead of read whole.
///
/// A download frame must leave alone the objects with local changes not yet acknowledged, and
/// an acknowledgement reports how many entries remain. Both used to read the whole outbox:
/// during a large upload (100,000 entries, acknowledged 500 at a time) every acknowledgement and
/// every frame of the server's echo paid for all of it. Outbox entries are numbered in commit
/// order, never reused (the next number is stored in the file, and a client reset keeps it), and
/// dropped oldest first (acknowledged) or all at once (a client reset), so the index reads only
/// the entries queued since it last looked, and drops those older than the oldest left. An
/// outbox whose oldest entry does not fit what the index read is read whole again.
struct PendingObjects {
    /// The entries known, oldest first (`head` is the first still in the outbox).
    private var entries: [(sequence: UInt64, object: String)] = []
    private var head = 0
    /// How many of the entries each object has.
    private var counts: [String: Int] = [:]
    /// The number of the newest entry read (0 before any).
    private(set) var newestRead: UInt64 = 0

    /// Whether `object` (`class\0primary key JSON`) has changes in the outbox.
    func contains(_ object: String) -> Bool { counts[object] != nil }

    /// How many entries the outbox holds.
    var count: Int { entries.count - head }

    /// The newest entry's number (0 when the outbox is empty).
    var newest: UInt64 { count > 0 ? newestRead : 0 }

    /// Brings the index up to the outbox.
    /// - Parameters:
    ///   - oldest: the number of the outbox's oldest entry (nil when it is empty).
    ///   - read: calls its body with each entry numbered at least its first argument, in order,
    ///     until the body returns false (the entry's number and object).
    mutating func update(oldest: UInt64?, read: (UInt64, (UInt64, String) -> Bool) -> Void) {
        guard let oldest else {
            clear()
            return
        }
        while head < entries.count, entries[head].sequence < oldest {
            let object = entries[head].object
            if let left = counts[object], left > 1 { counts[object] = left - 1 } else { counts[object] = nil }
            head += 1
        }
        if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        // The oldest entry is not the oldest known, or was read before and is gone: not the
        // outbox this index has followed.
        let followed = head < entries.count ? entries[head].sequence == oldest : oldest > newestRead
        if !followed {
            clear()
            newestRead = 0
        }
        read(max(newestRead + 1, oldest)) { sequence, object in
            entries.append((sequence, object))
            counts[object, default: 0] += 1
            newestRead = sequence
            return true
        }
    }

    private mutating func clear() {
        entries.removeAll(keepingCapacity: true)
        head = 0
        counts.removeAll(keepingCapacity: true)
    }
}

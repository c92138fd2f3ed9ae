/// The server's conflict rules, applied to one stored document and one uploaded change (see
/// docs/SYNC.md, "Conflicts"). Pure functions of their inputs, so every server process
/// reaches the same result.
///
/// - Deletes win: a deleted object stays deleted whatever updates arrive after (a tombstone
///   remembers it); only a new insert with a later timestamp creates it again.
/// - Last writer wins per property: a `set` replaces the value when its timestamp is not older
///   than the property's (the timestamps are hybrid logical clocks; the client id breaks ties).
/// - Lists: the client's insertions and removals against the list it last saw are replayed
///   on the current list, so insertions from every side are kept (an insertion lands after
///   its left neighbour and after what others inserted there before).
/// - Sets: additions and removals merge. Maps: last writer wins per key.
/// - Embedded objects are values of their parent's document: they follow it.
public enum DocumentMerge {
    /// A stored document and its per-property timestamps.
    public struct Stored: Sendable, Equatable {
        public var document: [String: JSONValue]
        /// Property name (or `map.key`) → timestamp text of the last write that won.
        public var timestamps: [String: String]
        public init(document: [String: JSONValue], timestamps: [String: String]) {
            self.document = document
            self.timestamps = timestamps
        }
    }

    /// The document after `change`, or nil when it is deleted (or stays deleted).
    /// `tombstone`: the timestamp of the delete that removed the object, if it is gone.
    public static func apply(_ change: SyncObjectChange, to stored: Stored?, tombstone: String?) -> Stored? {
        switch change.kind {
        case .delete:
            return nil
        case .insert:
            if stored == nil, let tombstone, change.timestamp <= tombstone { return nil }
            var result = stored ?? Stored(document: [:], timestamps: [:])
            merge(change, into: &result)
            return result
        case .update:
            guard var result = stored else { return nil }  // deletes win over concurrent updates
            merge(change, into: &result)
            return result
        }
    }

    private static func merge(_ change: SyncObjectChange, into stored: inout Stored) {
        let stamp = change.timestamp
        for field in change.fields {
            switch field {
            case .set(let name, let value):
                if stamp >= (stored.timestamps[name] ?? "") {
                    stored.document[name] = value
                    stored.timestamps[name] = stamp
                }
            case .list(let name, let base, let value):
                let current = stored.document[name]?.arrayValue ?? []
                stored.document[name] = .array(mergeList(current: current, base: base, local: value))
            case .setDiff(let name, let added, let removed):
                var items = (stored.document[name]?.arrayValue ?? []).filter { !removed.contains($0) }
                for item in added where !items.contains(item) { items.append(item) }
                stored.document[name] = .array(items)
            case .map(let name, let values):
                var entries = stored.document[name]?.objectValue ?? [:]
                for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                    let stampKey = name + "." + key
                    guard stamp >= (stored.timestamps[stampKey] ?? "") else { continue }
                    stored.timestamps[stampKey] = stamp
                    if let value { entries[key] = value } else { entries.removeValue(forKey: key) }
                }
                stored.document[name] = .object(entries)
            }
        }
    }

    /// Replays the edits that turned `base` into `local` on `current` (which is `base` with
    /// other clients' edits): removals of elements still there, and insertions after their
    /// left neighbour (past elements others inserted there, which are not in `base`).
    public static func mergeList(current: [JSONValue], base: [JSONValue], local: [JSONValue]) -> [JSONValue] {
        if current == base { return local }
        let localMatch = lcsMatch(base, local)        // base index -> local index
        let currentMatch = lcsMatch(base, current)    // base index -> current index
        let inCurrentFromBase = Set(currentMatch.values)
        // Removals: base elements the client removed, if the current list still has them.
        var removed = Set<Int>()
        for index in base.indices where localMatch[index] == nil {
            if let position = currentMatch[index] { removed.insert(position) }
        }
        // Insertions: runs of local elements not from base, each after its left neighbour.
        var localToBase = [Int: Int]()
        for (b, l) in localMatch { localToBase[l] = b }
        var insertions = [Int: [JSONValue]]()  // after current index (-1: at the start)
        var anchorBase = -1
        for (index, element) in local.enumerated() {
            if let b = localToBase[index] { anchorBase = b; continue }
            // The anchor's place in the current list: the nearest base element at or before it
            // that the current list still has.
            var anchor = -1
            var b = anchorBase
            while b >= 0 {
                if let position = currentMatch[b] { anchor = position; break }
                b -= 1
            }
            // Past what others inserted right after the anchor (not from base).
            var after = anchor
            while after + 1 < current.count, !inCurrentFromBase.contains(after + 1) { after += 1 }
            insertions[after, default: []].append(element)
        }
        var result = insertions[-1] ?? []
        for (position, element) in current.enumerated() {
            if !removed.contains(position) { result.append(element) }
            result += insertions[position] ?? []
        }
        return result
    }

    /// A longest common subsequence of `a` and `b`: index in `a` → index in `b`.
    static func lcsMatch(_ a: [JSONValue], _ b: [JSONValue]) -> [Int: Int] {
        let n = a.count, m = b.count
        if n == 0 || m == 0 { return [:] }
        var lengths = [[Int32]](repeating: [Int32](repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lengths[i][j] = a[i] == b[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
            }
        }
        var match = [Int: Int]()
        var i = 0, j = 0
        while i < n, j < m {
            if a[i] == b[j] { match[i] = j; i += 1; j += 1 }
            else if lengths[i + 1][j] >= lengths[i][j + 1] { i += 1 }
            else { j += 1 }
        }
        return match
    }
}

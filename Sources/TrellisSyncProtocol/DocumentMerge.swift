/// The server's conflict rules, applied to one stored document and one uploaded change (see
/// docs/SYNC.md, "Conflicts"). Pure functions of their inputs, so every server process
/// reaches the same result.
///
/// - Deletes win: a deleted object stays deleted whatever updates arrive after (a tombstone
///   remembers it); only a new insert with a later timestamp creates it again.
/// - Last writer wins per property: a `set` replaces the value when its timestamp is not older
///   than the property's (the timestamps are hybrid logical clocks; the client id breaks ties).
/// - Defaults lose: the values an insert takes from the model's defaults lose to any value set
///   explicitly, whatever the timestamps (two devices inserting the same primary key).
/// - Embedded objects merge per field: a set of `address.city` changes that field when it is
///   not older than the field's last write nor than the last replacement of the whole
///   `address`; replacing the whole embedded object keeps the newer edits of its fields, and
///   an edit of a field of an embedded object that is gone (nil) is dropped.
/// - Lists: the client's insertions and removals against the list it last saw are replayed
///   on the current list, so insertions from every side are kept (an insertion lands after
///   its left neighbour and after what others inserted there before).
/// - Sets: additions and removals merge. Maps: last writer wins per key.
/// - Embedded objects are values of their parent's document: deleted with it.
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
        var budget = maxMatchCells * 2
        return apply(change, to: stored, tombstone: tombstone, matchBudget: &budget)
    }

    /// As ``apply(_:to:tombstone:)``, spending the list merges' longest-common-subsequence
    /// tables from `matchBudget` (cells): a server gives each upload one budget
    /// (``maxMatchCellsPerUpload``), so however many lists an upload edits, its merge is linear
    /// plus that bound; a list merged once the budget is spent matches prefix and suffix only.
    public static func apply(_ change: SyncObjectChange, to stored: Stored?, tombstone: String?,
                             matchBudget: inout Int) -> Stored? {
        switch change.kind {
        case .delete:
            return nil
        case .insert:
            if stored == nil, let tombstone, change.timestamp <= tombstone { return nil }
            var result = stored ?? Stored(document: [:], timestamps: [:])
            merge(change, into: &result, matchBudget: &matchBudget)
            return result
        case .update:
            guard var result = stored else { return nil }  // deletes win over concurrent updates
            merge(change, into: &result, matchBudget: &matchBudget)
            return result
        }
    }

    /// The timestamp of a default value: older than every timestamp.
    static let defaultStamp = ""

    private static func merge(_ change: SyncObjectChange, into stored: inout Stored, matchBudget: inout Int) {
        let defaults = change.kind == .insert ? Set(change.defaultFields ?? []) : []
        for field in change.fields {
            let stamp = defaults.contains(field.name) ? defaultStamp : change.timestamp
            switch field {
            case .set(let name, let value):
                set(value, at: name, stamp: stamp, in: &stored)
            case .list(let name, let base, let value):
                let current = stored.document[name]?.arrayValue ?? []
                stored.document[name] = .array(mergeList(current: current, base: base, local: value,
                                                         matchBudget: &matchBudget))
            case .setDiff(let name, let added, let removed):
                let removals = Set(removed)
                var items = (stored.document[name]?.arrayValue ?? []).filter { !removals.contains($0) }
                var present = Set(items)
                for item in added where present.insert(item).inserted { items.append(item) }
                stored.document[name] = .array(items)
            case .map(let name, let values):
                var entries = stored.document[name]?.objectValue ?? [:]
                // Keys set before the whole map was last replaced lose to it.
                guard stamp >= (stored.timestamps[name] ?? "") else { continue }
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

    /// Sets a property (`name`) or a field of an embedded object (`name.field`, deeper with
    /// more dots) when `stamp` is not older than the last write of the path nor of any
    /// embedded object above it.
    static func set(_ value: JSONValue, at path: String, stamp: String, in stored: inout Stored) {
        // A property (no dot), the usual case: no split of the path into its parts.
        if !path.utf8.contains(UInt8(ascii: ".")) {
            if stamp < (stored.timestamps[path] ?? "") { return }
            return setProperty(value, at: path, stamp: stamp, in: &stored)
        }
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var prefix = ""
        for part in parts {
            prefix = prefix.isEmpty ? part : prefix + "." + part
            if stamp < (stored.timestamps[prefix] ?? "") { return }
        }
        guard let top = parts.first else { return }
        // A field of an embedded object: only while the object is there.
        guard let current = stored.document[top], let updated = replacing(current, at: parts.dropFirst(), with: value)
        else { return }
        stored.document[top] = updated
        stored.timestamps[path] = stamp
    }

    /// Sets property `path` (a name without dots; its timestamp checked by the caller).
    private static func setProperty(_ value: JSONValue, at path: String, stamp: String, in stored: inout Stored) {
        var replacement = value
        // A whole embedded object (or map): the newer edits of its fields stay.
        if case .object = value, let current = stored.document[path], case .object = current {
            for (key, fieldStamp) in stored.timestamps where key.hasPrefix(path + ".") && fieldStamp > stamp {
                let fieldPath = key.dropFirst(path.count + 1).split(separator: ".").map(String.init)
                if let kept = field(at: fieldPath[...], in: current),
                   let updated = replacing(replacement, at: fieldPath[...], with: kept) {
                    replacement = updated
                }
            }
        }
        stored.document[path] = replacement
        stored.timestamps[path] = stamp
    }

    /// The value at a path of fields inside a document, or nil.
    private static func field(at path: ArraySlice<String>, in document: JSONValue) -> JSONValue? {
        guard let first = path.first else { return document }
        guard case .object(let fields) = document, let next = fields[first] else { return nil }
        return field(at: path.dropFirst(), in: next)
    }

    /// `document` with the field at `path` set to `value`; nil when a document on the way is missing.
    private static func replacing(_ document: JSONValue, at path: ArraySlice<String>, with value: JSONValue) -> JSONValue? {
        guard let first = path.first else { return value }
        guard case .object(var fields) = document else { return nil }
        if path.count == 1 {
            fields[first] = value
        } else {
            guard let inner = fields[first], let updated = replacing(inner, at: path.dropFirst(), with: value) else {
                return nil
            }
            fields[first] = updated
        }
        return .object(fields)
    }

    /// Replays the edits that turned `base` into `local` on `current` (which is `base` with
    /// other clients' edits): removals of elements still there, and insertions after their
    /// left neighbour (past elements others inserted there, which are not in `base`).
    public static func mergeList(current: [JSONValue], base: [JSONValue], local: [JSONValue]) -> [JSONValue] {
        var budget = maxMatchCells * 2
        return mergeList(current: current, base: base, local: local, matchBudget: &budget)
    }

    /// As ``mergeList(current:base:local:)``, spending its tables from `matchBudget` (cells).
    public static func mergeList(current: [JSONValue], base: [JSONValue], local: [JSONValue],
                                 matchBudget: inout Int) -> [JSONValue] {
        if current == base { return local }
        let localMatch = lcsMatch(base, local, budget: &matchBudget)        // base index -> local index
        let currentMatch = lcsMatch(base, current, budget: &matchBudget)    // base index -> current index
        let inCurrentFromBase = Set(currentMatch.values)
        // Removals: base elements the client removed, if the current list still has them.
        var removed = Set<Int>()
        for index in base.indices where localMatch[index] == nil {
            if let position = currentMatch[index] { removed.insert(position) }
        }
        // Insertions: runs of local elements not from base, each after its left neighbour.
        var localToBase = [Int: Int]()
        for (b, l) in localMatch { localToBase[l] = b }
        // Per base index, the current position of the nearest base element at or before it
        // that the current list still has (-1: none), in one pass.
        var anchors = [Int](repeating: -1, count: base.count)
        var lastKept = -1
        for index in base.indices {
            if let position = currentMatch[index] { lastKept = position }
            anchors[index] = lastKept
        }
        // Per current position (and -1), the end of the run of elements others inserted
        // right after it (not from base), in one pass from the end.
        var runEnd = [Int](repeating: 0, count: current.count + 1)  // index + 1
        var end = current.count - 1
        for position in stride(from: current.count - 1, through: -1, by: -1) {
            if position + 1 < current.count, inCurrentFromBase.contains(position + 1) { end = position }
            if position + 1 >= current.count { end = position }
            runEnd[position + 1] = end
        }
        var insertions = [Int: [JSONValue]]()  // after current index (-1: at the start)
        var anchorBase = -1
        for (index, element) in local.enumerated() {
            if let b = localToBase[index] { anchorBase = b; continue }
            let anchor = anchorBase >= 0 ? anchors[anchorBase] : -1
            // Past what others inserted right after the anchor (not from base).
            insertions[runEnd[anchor + 1], default: []].append(element)
        }
        var result = insertions[-1] ?? []
        for (position, element) in current.enumerated() {
            if !removed.contains(position) { result.append(element) }
            result += insertions[position] ?? []
        }
        return result
    }

    /// The most cells the quadratic longest-common-subsequence table may have (after the
    /// common prefix and suffix are matched in linear time): past it, the middles are not
    /// matched (their base elements count as removed and their other elements as inserted),
    /// so a merge is never worse than linear plus this bound, whatever a client uploads.
    public static let maxMatchCells = 1_000_000

    /// The most table cells one upload's list merges may fill together (two full tables: one
    /// list edited both sides at the per-list bound); past it, lists match prefix and suffix only.
    public static let maxMatchCellsPerUpload = 2 * maxMatchCells

    /// A common subsequence of `a` and `b` (index in `a` → index in `b`): the common prefix and
    /// suffix, and between them a longest common subsequence when the middles are small enough
    /// (``maxMatchCells``), else nothing.
    static func lcsMatch(_ a: [JSONValue], _ b: [JSONValue], budget: inout Int) -> [Int: Int] {
        var match = [Int: Int]()
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] {
            match[prefix] = prefix
            prefix += 1
        }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] {
            match[a.count - 1 - suffix] = b.count - 1 - suffix
            suffix += 1
        }
        let middleA = Array(a[prefix..<(a.count - suffix)]), middleB = Array(b[prefix..<(b.count - suffix)])
        let cells = middleA.count * middleB.count
        guard cells <= maxMatchCells, cells <= budget else { return match }
        budget -= cells
        for (i, j) in quadraticMatch(middleA, middleB) { match[prefix + i] = prefix + j }
        return match
    }

    /// A longest common subsequence by dynamic programming (O(n·m) time and memory).
    private static func quadraticMatch(_ a: [JSONValue], _ b: [JSONValue]) -> [Int: Int] {
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

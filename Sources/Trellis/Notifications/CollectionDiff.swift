/// The index changes between two versions of a collection, as Realm reports them: deletions
/// are indices in the old version, insertions indices in the new one, and an element that
/// moved is a deletion plus an insertion.
struct CollectionDiff: Equatable {
    var deletions: [Int] = []
    var insertions: [Int] = []
    /// Pairs of (old index, new index) of elements present in both versions, not moved.
    var kept: [(old: Int, new: Int)] = []
    /// Old indices whose element was replaced in place (a list's `list[i] = x`).
    var replaced: [Int] = []

    static func == (a: CollectionDiff, b: CollectionDiff) -> Bool {
        a.deletions == b.deletions && a.insertions == b.insertions && a.replaced == b.replaced
            && a.kept.map(\.old) == b.kept.map(\.old) && a.kept.map(\.new) == b.kept.map(\.new)
    }

    /// For collections whose elements are unique (results, sets): elements kept in place are
    /// the longest run that kept its relative order; the rest moved. O(n log n).
    static func ofUniqueElements<Element: Hashable>(old: [Element], new: [Element]) -> CollectionDiff {
        var newIndex = [Element: Int](minimumCapacity: new.count)
        for (index, element) in new.enumerated() { newIndex[element] = index }
        var diff = CollectionDiff()
        var common = [(old: Int, new: Int)]()
        for (index, element) in old.enumerated() {
            if let position = newIndex[element] { common.append((index, position)) } else { diff.deletions.append(index) }
        }
        let stay = longestIncreasingRun(common.map(\.new))
        var staying = Set<Int>()
        for position in stay { staying.insert(common[position].new); diff.kept.append(common[position]) }
        for (old, newPosition) in common where !staying.contains(newPosition) { diff.deletions.append(old) }
        let oldSet = Set(old)
        for (index, element) in new.enumerated() where !oldSet.contains(element) || !staying.contains(index) {
            diff.insertions.append(index)
        }
        diff.deletions.sort()
        return diff
    }

    /// The positions (in `values`) of a longest strictly increasing subsequence.
    private static func longestIncreasingRun(_ values: [Int]) -> [Int] {
        var tails = [Int]()          // positions
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var run = [Int]()
        var position = tails.last ?? -1
        while position >= 0 {
            run.append(position)
            position = previous[position]
        }
        return run.reversed()
    }

    /// For sequences that may repeat elements (lists): the shortest edit script (Myers), with
    /// a deletion and an insertion at the same place reported as an in-place replacement.
    static func ofSequences<Element: Equatable>(old: [Element], new: [Element]) -> CollectionDiff {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
              old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        var diff = CollectionDiff()
        for index in 0..<prefix { diff.kept.append((index, index)) }
        let a = Array(old[prefix ..< old.count - suffix]), b = Array(new[prefix ..< new.count - suffix])
        var edits = myers(a, b)
        // Pair deletions and insertions that meet at one place into replacements.
        var removed = [Int](), added = [Int]()
        func flush() {
            let paired = min(removed.count, added.count)
            for index in 0..<paired {
                diff.replaced.append(prefix + removed[index])
                diff.kept.append((prefix + removed[index], prefix + added[index]))
            }
            diff.deletions += removed.dropFirst(paired).map { prefix + $0 }
            diff.insertions += added.dropFirst(paired).map { prefix + $0 }
            removed = []
            added = []
        }
        edits.append(.keep(a.count, b.count))
        for edit in edits {
            switch edit {
            case .delete(let i): removed.append(i)
            case .insert(let j): added.append(j)
            case .keep(let i, let j):
                flush()
                if i < a.count { diff.kept.append((prefix + i, prefix + j)) }
            }
        }
        for index in 0..<suffix { diff.kept.append((old.count - suffix + index, new.count - suffix + index)) }
        diff.deletions.sort()
        diff.insertions.sort()
        diff.kept.sort { $0.old < $1.old }
        return diff
    }

    private enum Edit { case delete(Int), insert(Int), keep(Int, Int) }

    /// Myers' O((N+M)D) shortest edit script between `a` and `b`.
    private static func myers<Element: Equatable>(_ a: [Element], _ b: [Element]) -> [Edit] {
        let n = a.count, m = b.count, limit = n + m
        if limit == 0 { return [] }
        var frontier = [Int](repeating: 0, count: 2 * limit + 2)
        var history = [[Int]]()
        outer: for depth in 0...limit {
            history.append(frontier)
            for k in stride(from: -depth, through: depth, by: 2) {
                var x = (k == -depth || (k != depth && frontier[limit + k - 1] < frontier[limit + k + 1]))
                    ? frontier[limit + k + 1] : frontier[limit + k - 1] + 1
                var y = x - k
                while x < n, y < m, a[x] == b[y] { x += 1; y += 1 }
                frontier[limit + k] = x
                if x >= n, y >= m { break outer }
            }
        }
        // Walk back through the recorded frontiers.
        var edits = [Edit]()
        var x = n, y = m
        for depth in stride(from: history.count - 1, through: 0, by: -1) {
            let v = history[depth]
            let k = x - y
            let fromInsert = k == -depth || (k != depth && v[limit + k - 1] < v[limit + k + 1])
            let previousK = fromInsert ? k + 1 : k - 1
            let previousX = depth == 0 ? 0 : v[limit + previousK]
            let previousY = previousX - previousK
            while x > previousX, y > previousY, x > 0, y > 0 {
                x -= 1; y -= 1
                edits.append(.keep(x, y))
            }
            if depth > 0 {
                if fromInsert { edits.append(.insert(previousY)) } else { edits.append(.delete(previousX)) }
                x = previousX
                y = previousY
            }
        }
        while x > 0, y > 0 { x -= 1; y -= 1; edits.append(.keep(x, y)) }
        return edits.reversed()
    }
}

/// One level of a walk down a tree: a committed page read in place, or a dirty page.
enum TreeLevel {
    case page(PageView)
    case buffer(DirtyPage)

    var count: Int {
        switch self {
        case .page(let view): return view.count
        case .buffer(let page): return page.count
        }
    }

    var isLeaf: Bool {
        switch self {
        case .page(let view): return view.isLeaf
        case .buffer(let page): return page.isLeaf
        }
    }

    /// The key of entry `index`, lent to `body`.
    @inline(__always)
    func withKey<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        switch self {
        case .page(let view): return try body(try view.key(at: index))
        case .buffer(let page): return try body(try page.view.key(at: index))
        }
    }

    /// The index of the first key >= `key` (from 1 in a branch) and whether it is equal.
    func lowerBound(_ key: UnsafeRawBufferPointer, order: KeyOrder) throws -> (index: Int, found: Bool) {
        switch self {
        case .buffer(let page):
            return try page.view.lowerBound(key, order: order)
        case .page(let view):
            return try view.lowerBound(key, order: order)
        }
    }

    /// The child of branch entry `index`.
    func child(at index: Int) throws -> Child {
        switch self {
        case .page(let view): return .clean(try view.child(at: index))
        case .buffer(let page):
            guard index >= 0, index < page.count else { throw StorageError.misuse("no entry \(index) in a branch") }
            return page.child(at: index)
        }
    }
}

/// Reads of a tree that may be partly copied into memory (a write transaction) or entirely
/// committed (a read transaction).
struct TreeReader {
    let snapshot: Snapshot
    let order: KeyOrder
    let depth: Int

    /// The level for a child, checking that a committed page is of the kind its depth requires.
    func level(_ child: Child, atDepth level: Int) throws -> TreeLevel {
        switch child {
        case .dirty(let page):
            return .buffer(page)
        case .clean(let reference):
            return .page(try snapshot.treePage(reference, level: level, depth: depth))
        }
    }

    /// The leaf entry holding `key` (the level and the index in it), or nil when the key is not
    /// in the tree: the one descent `withValue(root:key:_:)`, `value(root:key:)` and the cursor
    /// share. A write transaction's copies sit above committed pages: they are walked first.
    @inline(__always)
    func locate(root: Child?, key: UnsafeRawBufferPointer) throws -> (level: TreeLevel, index: Int)? {
        guard var current = root else { return nil }
        var levelNumber = 1
        while case .dirty(let page) = current {
            let (index, found) = try page.view.lowerBound(key, order: order)
            if page.isLeaf { return found ? (.buffer(page), index) : nil }
            current = page.child(at: found ? index : index - 1)
            levelNumber += 1
        }
        guard case .clean(let reference) = current else { return nil }
        return try locate(from: reference, level: levelNumber, key: key)
    }

    /// The leaf entry holding `key` in the committed subtree of `reference`, a page at level
    /// `level` (the root is level 1), or nil when the key is not there.
    @inline(__always)
    func locate(from reference: PageReference, level: Int, key: UnsafeRawBufferPointer) throws -> (level: TreeLevel, index: Int)? {
        var reference = reference, levelNumber = level
        while true {
            let view = try snapshot.treePage(reference, level: levelNumber, depth: depth)
            let (index, found) = try view.lowerBound(key, order: order)
            if levelNumber == depth { return found ? (.page(view), index) : nil }
            reference = try view.child(at: found ? index : index - 1)
            levelNumber += 1
        }
    }

    /// The value stored under `key`, lent to `body` (in place for committed pages), or nil.
    func withValue<R>(root: Child?, key: UnsafeRawBufferPointer,
                      _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        guard let entry = try locate(root: root, key: key) else { return try body(nil) }
        return try body(try value(of: entry.level, at: entry.index))
    }

    /// The value stored under `key` in place, or nil. In a read transaction the bytes are the
    /// file's; in a write transaction a changed page's value is in its buffer (`DirtyPage`) or
    /// kept by its tree (`TreePages`), valid until the tree next changes.
    func value(root: Child?, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        guard let entry = try locate(root: root, key: key) else { return nil }
        return try value(of: entry.level, at: entry.index)
    }

    /// The value of leaf entry `index`, in place (see `value(root:key:)` for how long it stays).
    @inline(__always)
    func value(of level: TreeLevel, at index: Int) throws -> UnsafeRawBufferPointer {
        switch level {
        case .page(let view):
            switch try view.value(at: index) {
            case .inline(let bytes): return bytes
            case .overflow(let reference, let length): return try snapshot.overflowValue(reference, length: length)
            }
        case .buffer(let page):
            switch try page.view.value(at: index) {
            case .inline(let bytes): return bytes
            case .overflow(let reference, let length):
                // A value put by this transaction is kept by its tree until commit.
                if let kept = TreePages.value(reference, length: length) { return kept }
                return try snapshot.overflowValue(reference, length: length)
            }
        }
    }

    /// The value of leaf entry `index`, lent to `body`.
    func withValue<R>(of level: TreeLevel, at index: Int, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try body(try value(of: level, at: index))
    }
}

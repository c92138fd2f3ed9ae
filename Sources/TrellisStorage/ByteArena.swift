/// The bytes of the keys and values a write transaction puts, kept for its changed nodes
/// (`Node` points into it) until the transaction ends: a bump allocator over large chunks, so a
/// put costs one copy of its bytes and no allocation of its own.
///
/// One per tree of a write transaction (`TreeState.arena`). A replaced or removed value's bytes
/// stay until the transaction ends; a transaction that keeps replacing values would grow without
/// bound, so `TreeEditor.put` compacts the arena (copies the bytes the tree's nodes still use
/// into new chunks, `rewrite(_:)`) once it has grown past twice what was live at the last
/// compaction and past `compactionFloor`.
final class ByteArena {
    /// Bytes per chunk (a larger key or value gets a chunk of its own size).
    static let chunkSize = 64 << 10
    /// Bytes of the first chunk; each next one is twice the last, up to `chunkSize`. A small
    /// transaction (W6: a few hundred bytes into each of five trees) then allocates a few KiB,
    /// not 64 KiB per tree, which glibc gave back to the system at every commit's end.
    static let firstChunkSize = 4 << 10
    /// No compaction below this many bytes.
    static let compactionFloor = 32 << 20

    // Not checked for exclusive access at run time (as `Node`'s): used by one write transaction
    // on one thread.
    @exclusivity(unchecked) private var chunks: [UnsafeMutableRawPointer] = []
    @exclusivity(unchecked) private var next: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var remaining = 0
    @exclusivity(unchecked) private var nextChunkSize = ByteArena.firstChunkSize
    /// Bytes handed out since the arena was made or last compacted.
    @exclusivity(unchecked) private(set) var usedBytes = 0
    /// Compact when `usedBytes` passes this.
    @exclusivity(unchecked) private(set) var compactionThreshold = ByteArena.compactionFloor

    deinit { freeChunks(chunks) }

    private func freeChunks(_ list: [UnsafeMutableRawPointer]) {
        for chunk in list { chunk.deallocate() }
    }

    /// Whether the arena has grown enough that a compaction is due.
    @inline(__always)
    var needsCompaction: Bool { usedBytes > compactionThreshold }

    /// A copy of `bytes` in the arena, valid until the transaction ends or the arena is compacted.
    @inline(__always)
    func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let count = bytes.count
        guard count > 0, let source = bytes.baseAddress else { return Node.noKey }
        if count > remaining { grow(count) }
        guard let target = next else { return Node.noKey }
        target.copyMemory(from: source, byteCount: count)
        next = target + count
        remaining &-= count
        usedBytes &+= count
        return UnsafeRawBufferPointer(start: target, count: count)
    }

    private func grow(_ count: Int) {
        let size = max(nextChunkSize, count)
        nextChunkSize = min(Self.chunkSize, nextChunkSize * 2)
        let chunk = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        chunks.append(chunk)
        next = chunk
        remaining = size
    }

    /// Copies every key and value the nodes under `roots` use out of the arena's old chunks into
    /// new ones, then frees the old chunks. Nodes' bytes that point into committed pages are
    /// copied too (they stay valid either way). Pointers handed out before are invalid afterwards.
    func rewrite(_ roots: [Child]) {
        let old = chunks
        chunks = []
        next = nil
        remaining = 0
        usedBytes = 0
        for root in roots { rewrite(root) }
        compactionThreshold = max(Self.compactionFloor, 2 * usedBytes)
        freeChunks(old)
    }

    private func rewrite(_ child: Child) {
        guard case .dirty(let node) = child else { return }
        for index in 0..<node.keys.count { node.keys[index] = copy(node.keys[index]) }
        if node.isLeaf {
            for index in 0..<node.values.count {
                if case .bytes(let bytes) = node.values[index] { node.values[index] = .bytes(copy(bytes)) }
            }
        } else {
            for child in node.children { rewrite(child) }
        }
    }
}

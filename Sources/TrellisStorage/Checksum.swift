/// XXH64 (Yann Collet's xxHash, 64-bit variant), written from the algorithm's public
/// specification. The checksum of every page (docs/STORAGE.md, section 2.4).
enum Checksum {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 &- bits))
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merge(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        (accumulator ^ round(0, lane)) &* prime1 &+ prime4
    }

    /// The XXH64 of `bytes` with `seed`.
    static func xxh64(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let length = bytes.count
        guard let base = bytes.baseAddress else { return finish(seed &+ prime5, base: nil, from: 0, to: 0) }
        var offset = 0
        var hash: UInt64
        if length >= 32 {
            var lane1 = seed &+ prime1 &+ prime2
            var lane2 = seed &+ prime2
            var lane3 = seed
            var lane4 = seed &- prime1
            // Two stripes per turn while 64 bytes remain (a page is 64 of them): half the loop
            // overhead, the same lanes in the same order.
            while offset &+ 64 <= length {
                lane1 = round(lane1, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                lane2 = round(lane2, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self)))
                lane3 = round(lane3, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 16, as: UInt64.self)))
                lane4 = round(lane4, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 24, as: UInt64.self)))
                lane1 = round(lane1, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 32, as: UInt64.self)))
                lane2 = round(lane2, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 40, as: UInt64.self)))
                lane3 = round(lane3, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 48, as: UInt64.self)))
                lane4 = round(lane4, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 56, as: UInt64.self)))
                offset &+= 64
            }
            while offset &+ 32 <= length {
                lane1 = round(lane1, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                lane2 = round(lane2, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self)))
                lane3 = round(lane3, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 16, as: UInt64.self)))
                lane4 = round(lane4, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 24, as: UInt64.self)))
                offset &+= 32
            }
            hash = rotate(lane1, 1) &+ rotate(lane2, 7) &+ rotate(lane3, 12) &+ rotate(lane4, 18)
            hash = merge(hash, lane1)
            hash = merge(hash, lane2)
            hash = merge(hash, lane3)
            hash = merge(hash, lane4)
        } else {
            hash = seed &+ prime5
        }
        hash &+= UInt64(length)
        return finish(hash, base: base, from: offset, to: length)
    }

    private static func finish(_ start: UInt64, base: UnsafeRawPointer?, from: Int, to length: Int) -> UInt64 {
        var hash = start
        var offset = from
        if let base {
            while offset &+ 8 <= length {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                hash ^= round(0, word)
                hash = rotate(hash, 27) &* prime1 &+ prime4
                offset &+= 8
            }
            if offset &+ 4 <= length {
                let word = UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                hash ^= word &* prime1
                hash = rotate(hash, 23) &* prime2 &+ prime3
                offset &+= 4
            }
            while offset < length {
                let byte = UInt64(base.load(fromByteOffset: offset, as: UInt8.self))
                hash ^= byte &* prime5
                hash = rotate(hash, 11) &* prime1
                offset &+= 1
            }
        }
        hash ^= hash >> 33
        hash &*= prime2
        hash ^= hash >> 29
        hash &*= prime3
        hash ^= hash >> 32
        return hash
    }
}

extension Checksum {
    /// The checksum a parent records for `count` pages from `start` (docs/STORAGE.md, 2.4): a
    /// single page flagged `Layout.usedBytesFlag` (a tree page of format 7 or 8) is hashed over
    /// its first `used` bytes, any other page or run over all its bytes. A flag whose length is
    /// impossible is damage (`corruptFile` naming `page`). The flag and the length are hashed
    /// with the page, so a changed flag or length is a mismatch like any changed byte.
    @inline(__always)
    static func ofPages(_ start: UnsafeRawPointer, count: Int, page: UInt64) throws -> UInt64 {
        guard count == 1, start.load(fromByteOffset: Layout.flagsOffset, as: UInt8.self) & Layout.usedBytesFlag != 0 else {
            return xxh64(UnsafeRawBufferPointer(start: start, count: count &* Layout.pageSize))
        }
        let used = Int(start.loadLE(UInt32.self, at: Layout.usedLengthOffset))
        guard used >= Layout.headerSize && used <= Layout.pageSize else {
            throw StorageError.corrupt(page: page, "the page says it uses \(used) bytes")
        }
        return xxh64(UnsafeRawBufferPointer(start: start, count: used))
    }
}

extension Checksum {
    /// The XXH64 (seed 0) of `prefix` followed by zeros up to `total` bytes, without the zeros in
    /// memory: an overflow run's checksum straight from its kept value (`PageSerializer.overflow`),
    /// equal to `xxh64` of the padded run. `total` is a multiple of 32, at least 32 and at least
    /// `prefix.count` (a run's pages).
    static func xxh64(_ prefix: UnsafeRawBufferPointer, zeroPaddedTo total: Int) -> UInt64 {
        precondition(total >= 32 && total % 32 == 0 && total >= prefix.count, "Checksum: bad padded length")
        var lane1 = prime1 &+ prime2
        var lane2 = prime2
        var lane3: UInt64 = 0
        var lane4 = 0 &- prime1
        var offset = 0
        if let base = prefix.baseAddress {
            while offset &+ 32 <= prefix.count {
                lane1 = round(lane1, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                lane2 = round(lane2, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self)))
                lane3 = round(lane3, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 16, as: UInt64.self)))
                lane4 = round(lane4, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 24, as: UInt64.self)))
                offset &+= 32
            }
            if offset < prefix.count {
                // The stripe where the bytes end and the zeros begin, put together on the stack.
                var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
                withUnsafeMutableBytes(of: &words) { stripe in
                    stripe.baseAddress?.copyMemory(from: base + offset, byteCount: prefix.count &- offset)
                }
                lane1 = round(lane1, UInt64(littleEndian: words.0))
                lane2 = round(lane2, UInt64(littleEndian: words.1))
                lane3 = round(lane3, UInt64(littleEndian: words.2))
                lane4 = round(lane4, UInt64(littleEndian: words.3))
                offset &+= 32
            }
        }
        while offset < total {
            lane1 = round(lane1, 0)
            lane2 = round(lane2, 0)
            lane3 = round(lane3, 0)
            lane4 = round(lane4, 0)
            offset &+= 32
        }
        var hash = rotate(lane1, 1) &+ rotate(lane2, 7) &+ rotate(lane3, 12) &+ rotate(lane4, 18)
        hash = merge(hash, lane1)
        hash = merge(hash, lane2)
        hash = merge(hash, lane3)
        hash = merge(hash, lane4)
        hash &+= UInt64(total)
        return finish(hash, base: nil, from: 0, to: 0)
    }
}

// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import CLMDB

/// Reading a whole integer-keyed database (a class's rows) a leaf page at a time.
///
/// Stepping a cursor costs LMDB about 130 instructions per entry, and the checks on what it
/// returns as much again: most of enumerating a class. The entries of one leaf page sit
/// side by side in the map, so once the cursor has landed on a page, its nodes are read in
/// place (the LMDB 0.9 page format, which ``TreeVerifier`` and ``MapAddress`` read too), and
/// the cursor moves on only once per page: it is set on the page's last key, which LMDB finds
/// without a search when the cursor is on that page already, then stepped to the next page.
///
/// Nothing is trusted that LMDB has not shown: a page is read this way only if it lies in the
/// map and the file, names itself, is a leaf, and its first node is where the cursor says the
/// entry it stands on is. Every node and value must lie inside the page (an overflow value
/// inside the file). Anything else (a page a write transaction changed, which lives outside the
/// map; a damaged page) is read entry by entry through the cursor, as before.
extension Cursor {
    /// Appends every entry's key and value, in key order; returns how many leaf pages were read
    /// in place.
    @discardableResult
    func appendAllIntegerKeyed(keys: inout [UInt64], values: inout [UnsafeRawBufferPointer]) -> Int {
        var pagesReadInPlace = 0
        let layout = environment._withUnsafeGuaranteedRef { $0.pageLayout }
        var entry = first()
        var refusedPage: UnsafeRawPointer?
        while let (key, value) = entry {
            if let layout, let page = layout.page(holding: key.baseAddress), page.start != refusedPage {
                if let last = page.appendEntries(startingAt: key, value: value, layout: layout, keys: &keys,
                                                 values: &values)
                {
                    // On to the next page: the cursor stands on the page's last entry, then steps.
                    pagesReadInPlace += 1
                    var lastKey = last
                    let set = withUnsafeBytes(of: &lastKey) { move(MDB_SET_KEY, key: $0) }
                    entry = set == nil ? nil : next()
                    continue
                }
                // Not a page this reader understands: entry by entry through the cursor.
                refusedPage = page.start
            }
            keys.append(Cursor.integerKey(key))
            values.append(value)
            entry = next()
        }
        return pagesReadInPlace
    }
}

/// Where an environment's pages are: the map's start and end, the page size, and the end of
/// the file as last seen (``Environment/pageLayout``).
struct PageLayout {
    let mapStart: UInt
    let mapEnd: UInt
    let pageSize: Int
    /// Where the file ended when the layout was taken: bytes before it are readable.
    let knownFileEnd: UInt
    /// The environment, to check a value past `knownFileEnd` against the file's end now.
    unowned(unsafe) let environment: Environment

    /// Whether `count` bytes from `start`, in the map, lie in the file.
    @inline(__always)
    func isReadable(_ start: UnsafeRawPointer, count: Int) -> Bool {
        UInt(bitPattern: start) &+ UInt(count) <= knownFileEnd || isReadableNow(start, count: count)
    }

    /// As ``isReadable(_:count:)``, past the file's end as last seen: the file may have grown.
    @inline(never)
    private func isReadableNow(_ start: UnsafeRawPointer, count: Int) -> Bool {
        environment.isReadable(start, count: count)
    }

    /// The leaf page holding `address`, if it lies in the map; nil otherwise (a page a write
    /// transaction changed, or an address the map does not hold).
    @inline(__always)
    func page(holding address: UnsafeRawPointer?) -> TreePage? {
        guard let address else { return nil }
        let at = UInt(bitPattern: address)
        guard at >= mapStart, at < mapEnd else { return nil }
        let number = (at &- mapStart) / UInt(pageSize)
        guard let start = UnsafeRawPointer(bitPattern: mapStart &+ number &* UInt(pageSize)),
              isReadable(start, count: pageSize)
        else { return nil }
        return TreePage(start: start, number: UInt64(number), size: pageSize)
    }
}

/// One page of a database's B-tree, in the map (the LMDB 0.9 page format, ``PageFormat``): a leaf
/// here; ``TreeSearch`` reads branch pages through it too.
struct TreePage {
    let start: UnsafeRawPointer
    let number: UInt64
    let size: Int


    /// The number of nodes and where the node space begins, if the header is that of a page of
    /// this kind (a plain leaf unless told) naming itself with a sound node table.
    @inline(__always)
    func checkedHeader(kind: UInt16 = PageFormat.leafFlag) -> (count: Int, upper: Int)? {
        let page = UnsafeRawBufferPointer(start: start, count: size)
        guard page.loadUnaligned(fromByteOffset: 0, as: UInt64.self) == number,
              page.loadUnaligned(fromByteOffset: 10, as: UInt16.self) == kind
        else { return nil }
        let lower = Int(page.loadUnaligned(fromByteOffset: 12, as: UInt16.self))
        let upper = Int(page.loadUnaligned(fromByteOffset: 14, as: UInt16.self))
        guard lower > PageFormat.headerSize, lower <= upper, upper <= size else { return nil }
        return ((lower &- PageFormat.headerSize) >> 1, upper)
    }

    /// Where node `index` (below the node count) begins, if its header and the first `keyRoom`
    /// bytes after it lie in the node space.
    @inline(__always)
    func nodeOffset(_ index: Int, upper: Int, keyRoom: Int = 0) -> Int? {
        let offset = Int(UnsafeRawBufferPointer(start: start, count: size)
            .loadUnaligned(fromByteOffset: PageFormat.headerSize &+ 2 &* index, as: UInt16.self))
        guard offset >= upper, offset &+ PageFormat.nodeHeaderSize &+ keyRoom <= size else { return nil }
        return offset
    }

    /// Where node `index` begins, if it has an 8-byte key lying inside the page.
    @inline(__always)
    private func integerKeyNodeOffset(_ index: Int, upper: Int) -> Int? {
        guard let offset = nodeOffset(index, upper: upper, keyRoom: 8),
              UnsafeRawBufferPointer(start: start, count: size).loadUnaligned(fromByteOffset: offset &+ 6, as: UInt16.self) == 8
        else { return nil }
        return offset
    }

    /// The 8-byte key of node `index` (below the node count), if the node lies inside the page.
    @inline(__always)
    func key(_ index: Int, upper: Int) -> UInt64? {
        guard let offset = integerKeyNodeOffset(index, upper: upper) else { return nil }
        return UnsafeRawBufferPointer(start: start, count: size)
            .loadUnaligned(fromByteOffset: offset &+ PageFormat.nodeHeaderSize, as: UInt64.self)
    }

    /// Appends the page's entries, from the one the cursor stands on (`key`, `value`: it must be
    /// the page's first) to its end, and returns the last key; nil, with nothing appended, when
    /// the page is not one this reader understands.
    func appendEntries(startingAt key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, layout: PageLayout,
                       keys: inout [UInt64], values: inout [UnsafeRawBufferPointer]) -> UInt64?
    {
        guard let (count, upper) = checkedHeader() else { return nil }
        // Where LMDB itself says the cursor's entry is: the layout is read right.
        guard let firstNode = nodeOffset(0, upper: upper), let first = entry(0, upper: upper, layout: layout),
              key.count == 8, key.baseAddress == start + (firstNode &+ PageFormat.nodeHeaderSize),
              value.baseAddress == first.value.baseAddress, value.count == first.value.count
        else { return nil }
        // Read into a buffer first, then appended at once: nothing is appended from a page with
        // a damaged node, and the arrays are checked for growth once per page, not per entry.
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count) { pageKeys in
            withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: count) { pageValues in
                for index in 0..<count {
                    guard let (key, value) = entry(index, upper: upper, layout: layout) else { return nil }
                    pageKeys.initializeElement(at: index, to: key)
                    pageValues.initializeElement(at: index, to: value)
                }
                keys.append(contentsOf: pageKeys)
                values.append(contentsOf: pageValues)
                return pageKeys[count &- 1]
            }
        }
    }

    /// Node `index`: its 8-byte key and its value; nil if it is not a plain or overflow node of
    /// an 8-byte key lying inside the page (a value on overflow pages inside the file).
    @inline(__always)
    func entry(_ index: Int, upper: Int, layout: PageLayout) -> (key: UInt64, value: UnsafeRawBufferPointer)? {
        guard let offset = integerKeyNodeOffset(index, upper: upper),
              let value = value(ofNodeAt: offset, keySize: 8, layout: layout)
        else { return nil }
        return (UnsafeRawBufferPointer(start: start, count: size)
            .loadUnaligned(fromByteOffset: offset &+ PageFormat.nodeHeaderSize, as: UInt64.self), value)
    }

    /// The key of node `index` (below the node count), if the node and its key lie inside the
    /// page; with the node's offset.
    @inline(__always)
    func keyBytes(_ index: Int, upper: Int) -> (key: UnsafeRawBufferPointer, offset: Int)? {
        guard let offset = nodeOffset(index, upper: upper) else { return nil }
        let keySize = Int(UnsafeRawBufferPointer(start: start, count: size)
            .loadUnaligned(fromByteOffset: offset &+ 6, as: UInt16.self))
        guard offset &+ PageFormat.nodeHeaderSize &+ keySize <= size else { return nil }
        return (UnsafeRawBufferPointer(start: start + (offset &+ PageFormat.nodeHeaderSize), count: keySize), offset)
    }

    /// The value of the node at `offset` whose key is `keySize` bytes: in the page, or on
    /// overflow pages inside the file; nil for any other kind of node, or one reaching outside.
    @inline(__always)
    func value(ofNodeAt offset: Int, keySize: Int, layout: PageLayout) -> UnsafeRawBufferPointer? {
        let page = UnsafeRawBufferPointer(start: start, count: size)
        let flags = page.loadUnaligned(fromByteOffset: offset &+ 4, as: UInt16.self)
        let dataSize = Int(page.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            | Int(page.loadUnaligned(fromByteOffset: offset &+ 2, as: UInt16.self)) << 16
        let dataStart = offset &+ PageFormat.nodeHeaderSize &+ keySize
        if flags == 0 {
            guard dataStart &+ dataSize <= size else { return nil }
            return UnsafeRawBufferPointer(start: start + dataStart, count: dataSize)
        }
        guard flags == PageFormat.bigDataNode, dataStart &+ 8 <= size else { return nil }
        return Self.overflowValue(page: page.loadUnaligned(fromByteOffset: dataStart, as: UInt64.self),
                                  count: dataSize, layout: layout)
    }

    /// A value kept on overflow pages from `page` on, if it lies in the map and the file.
    private static func overflowValue(page: UInt64, count: Int, layout: PageLayout) -> UnsafeRawBufferPointer? {
        let (offset, overflow) = page.multipliedReportingOverflow(by: UInt64(layout.pageSize))
        guard !overflow, offset < UInt64(layout.mapEnd &- layout.mapStart),
              UInt64(layout.mapEnd &- layout.mapStart) &- offset >= UInt64(PageFormat.headerSize &+ count),
              let pageStart = UnsafeRawPointer(bitPattern: layout.mapStart &+ UInt(offset)),
              layout.isReadable(pageStart, count: PageFormat.headerSize &+ count)
        else { return nil }
        return UnsafeRawBufferPointer(start: pageStart + PageFormat.headerSize, count: count)
    }
}

#endif

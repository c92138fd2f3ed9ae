import Foundation

/// A predicate over the chunks of a column copy: for one chunk, one bit per slot that holds a
/// matching object (absent slots never match). Made by ``ColumnScanCompiler``; it gives the
/// same answers as the row test ``QueryCompiler`` makes, which the differential test checks.
class ChunkTest {
    /// Writes the chunk's matches to `out`, `chunk.wordCount` words.
    func fill(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>) {}
}

/// Fills the mask of a fixed-width column, testing each slot's bits; `nullMatches` says what
/// null (and absent columns) give. Inlined into each test so that `test` is inlined too: the
/// loop is branch-free and reads the slots in order.
@inline(__always)
func fillFixed(_ chunk: ColumnChunk, _ column: Int, _ out: UnsafeMutablePointer<UInt64>, nullMatches: Bool,
               _ test: (UInt64) -> Bool)
{
    guard let block = chunk.block(column) else { return fillAll(chunk, out, matching: nullMatches) }
    let slotCount = chunk.slotCount
    for word in 0..<chunk.wordCount {
        let start = word &<< 6
        let end = Swift.min(start &+ 64, slotCount)
        var bits: UInt64 = 0
        var index = start
        while index < end {
            bits |= UInt64(test(block.slot(index)) ? 1 : 0) &<< UInt64(index &- start)
            index &+= 1
        }
        let nulls = block.nullWord(word)
        out[word] = (nullMatches ? bits | nulls : bits & ~nulls) & chunk.presence(word)
    }
}

/// Every object of the chunk, or none.
@inline(__always)
func fillAll(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>, matching: Bool) {
    for word in 0..<chunk.wordCount { out[word] = matching ? chunk.presence(word) : 0 }
}

/// Fills the mask of a column whose values are tested one by one: `test` sees the slot index
/// of each object with a value; `nullMatches` says what null (and absent columns) give.
@inline(__always)
func fillSparse(_ chunk: ColumnChunk, _ column: Int, _ out: UnsafeMutablePointer<UInt64>, nullMatches: Bool,
                _ test: (ColumnBlock, Int) -> Bool)
{
    guard let block = chunk.block(column) else { return fillAll(chunk, out, matching: nullMatches) }
    for word in 0..<chunk.wordCount {
        let present = chunk.presence(word), nulls = block.nullWord(word)
        var bits: UInt64 = 0
        var candidates = present & ~nulls
        while candidates != 0 {
            let bit = candidates.trailingZeroBitCount
            candidates &= candidates &- 1
            if test(block, word &<< 6 &+ bit) { bits |= 1 &<< UInt64(bit) }
        }
        out[word] = (nullMatches ? bits | (nulls & present) : bits) & present
    }
}

/// Whether a column is null (or not).
final class NullTest: ChunkTest {
    let column: Int
    let matchesNull: Bool
    init(column: Int, matchesNull: Bool) {
        self.column = column
        self.matchesNull = matchesNull
    }
    override func fill(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>) {
        let block = chunk.block(column)
        for word in 0..<chunk.wordCount {
            let nulls = block?.nullWord(word) ?? ~0
            out[word] = (matchesNull ? nulls : ~nulls) & chunk.presence(word)
        }
    }
}

/// An integer column (or a Bool, as 0 and 1) against integer constants.
final class IntegerTest: ChunkTest {
    let column: Int
    let op: QueryOperator
    let low: Int64
    let high: Int64
    init(column: Int, op: QueryOperator, low: Int64, high: Int64 = 0) {
        self.column = column
        self.op = op
        self.low = low
        self.high = high
    }
    override func fill(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>) {
        let low = low, high = high
        switch op {
        case .equal: fillFixed(chunk, column, out, nullMatches: false) { Int64(bitPattern: $0) == low }
        case .notEqual: fillFixed(chunk, column, out, nullMatches: true) { Int64(bitPattern: $0) != low }
        case .less: fillFixed(chunk, column, out, nullMatches: false) { Int64(bitPattern: $0) < low }
        case .lessOrEqual: fillFixed(chunk, column, out, nullMatches: false) { Int64(bitPattern: $0) <= low }
        case .greater: fillFixed(chunk, column, out, nullMatches: false) { Int64(bitPattern: $0) > low }
        case .greaterOrEqual: fillFixed(chunk, column, out, nullMatches: false) { Int64(bitPattern: $0) >= low }
        case .between:
            fillFixed(chunk, column, out, nullMatches: false) {
                Int64(bitPattern: $0) >= low && Int64(bitPattern: $0) <= high
            }
        default: for word in 0..<chunk.wordCount { out[word] = 0 }
        }
    }
}

/// A Double, Float or Date column (Dates as seconds since 2001) against numeric constants,
/// compared as Doubles; NaN matches only `!=`, as in the row test.
final class FloatingTest: ChunkTest {
    let column: Int
    let isFloat: Bool
    let op: QueryOperator
    let low: Double
    let high: Double
    init(column: Int, isFloat: Bool, op: QueryOperator, low: Double, high: Double = 0) {
        self.column = column
        self.isFloat = isFloat
        self.op = op
        self.low = low
        self.high = high
    }
    override func fill(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>) {
        if isFloat {
            fill(chunk, out) { Double(Float(bitPattern: UInt32(truncatingIfNeeded: $0))) }
        } else {
            fill(chunk, out) { Double(bitPattern: $0) }
        }
    }
    @inline(__always)
    private func fill(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>, _ value: (UInt64) -> Double) {
        let low = low, high = high
        switch op {
        case .equal: fillFixed(chunk, column, out, nullMatches: false) { value($0) == low }
        case .notEqual: fillFixed(chunk, column, out, nullMatches: true) { !(value($0) == low) }
        case .less: fillFixed(chunk, column, out, nullMatches: false) { value($0) < low }
        case .lessOrEqual: fillFixed(chunk, column, out, nullMatches: false) { value($0) <= low }
        case .greater: fillFixed(chunk, column, out, nullMatches: false) { value($0) > low }
        case .greaterOrEqual: fillFixed(chunk, column, out, nullMatches: false) { value($0) >= low }
        case .between: fillFixed(chunk, column, out, nullMatches: false) { value($0) >= low && value($0) <= high }
        default: for word in 0..<chunk.wordCount { out[word] = 0 }
        }
    }
}

/// A String or ObjectId column against a constant's bytes: equality, and for strings prefix,
/// suffix and substring, without options. Equal bytes are equal strings; strings whose bytes
/// differ are compared as Swift strings when either is not ASCII (canonically equivalent
/// strings are equal, as in the row test).
final class BytesTest: ChunkTest {
    let column: Int
    let op: QueryOperator
    let constant: [UInt8]
    let text: String?
    let constantIsASCII: Bool
    /// Where values longer than ``ChunkFormat/inlineLimit`` are read: the class's rows.
    let rows: DatabaseHandle
    let txn: Transaction
    init(column: Int, op: QueryOperator, constant: [UInt8], text: String?, rows: DatabaseHandle, txn: Transaction) {
        self.column = column
        self.op = op
        self.constant = constant
        self.text = text
        self.constantIsASCII = constant.allSatisfy { $0 < 0x80 }
        self.rows = rows
        self.txn = txn
    }

    /// The value of slot `index`: from the chunk, or for a long value from its row.
    @inline(__always)
    private func value(_ block: ColumnBlock, _ index: Int, _ chunk: ColumnChunk) -> UnsafeRawBufferPointer {
        guard block.isInRow(index) else { return block.tail(index) }
        guard let row = txn.get(rows, integerKey: chunk.baseKey &+ UInt64(index)) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return RowView(bytes: row).tail(column)
    }

    override func fill(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>) {
        constant.withUnsafeBytes { pattern in
            fillSparse(chunk, column, out, nullMatches: op == .notEqual) { block, index in
                matches(value(block, index, chunk), pattern)
            }
        }
    }

    @inline(__always)
    private func matches(_ value: UnsafeRawBufferPointer, _ pattern: UnsafeRawBufferPointer) -> Bool {
        switch op {
        case .equal: return equal(value, pattern)
        case .notEqual: return !equal(value, pattern)
        case .beginsWith: return value.count >= pattern.count && value.prefix(pattern.count).elementsEqual(pattern)
        case .endsWith: return value.count >= pattern.count && value.suffix(pattern.count).elementsEqual(pattern)
        case .contains:
            guard let text else { return false }
            return pattern.isEmpty || String(decoding: value, as: UTF8.self).contains(text)
        default: return false
        }
    }

    @inline(__always)
    private func equal(_ value: UnsafeRawBufferPointer, _ pattern: UnsafeRawBufferPointer) -> Bool {
        if value.count == pattern.count, value.elementsEqual(pattern) { return true }
        guard let text, !(constantIsASCII && value.allSatisfy { $0 < 0x80 }) else { return false }
        return String(decoding: value, as: UTF8.self) == text
    }
}

/// `AND`, `OR` and `NOT` of tests, word by word.
final class CombinedTest: ChunkTest {
    enum Kind { case and, or, not }
    let kind: Kind
    let operands: [ChunkTest]
    private let scratch: UnsafeMutablePointer<UInt64>

    init(_ kind: Kind, _ operands: [ChunkTest], words: Int) {
        self.kind = kind
        self.operands = operands
        self.scratch = .allocate(capacity: Swift.max(words, 1))
    }
    deinit { scratch.deallocate() }

    override func fill(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>) {
        let words = chunk.wordCount
        switch kind {
        case .not:
            operands[0].fill(chunk, out)
            for word in 0..<words { out[word] = ~out[word] & chunk.presence(word) }
        case .and:
            operands[0].fill(chunk, out)
            for operand in operands.dropFirst() {
                operand.fill(chunk, scratch)
                for word in 0..<words { out[word] &= scratch[word] }
            }
        case .or:
            operands[0].fill(chunk, out)
            for operand in operands.dropFirst() {
                operand.fill(chunk, scratch)
                for word in 0..<words { out[word] |= scratch[word] }
            }
        }
    }
}

/// A constant answer (`TRUEPREDICATE`, `FALSEPREDICATE`).
final class ConstantTest: ChunkTest {
    let value: Bool
    init(_ value: Bool) { self.value = value }
    override func fill(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>) {
        fillAll(chunk, out, matching: value)
    }
}

/// A test on the target of a to-one link (`dog.age > 10`): the link column gives each object's
/// target key, and the target's matches come from the same test run over the target's chunk,
/// kept while the links point into it. A nil link matches as a null value does.
final class LinkedTest: ChunkTest {
    let column: Int
    let target: ColumnStorage
    let inner: ChunkTest
    let txn: Transaction
    /// Whether the inner test matches an object whose values are all null.
    let nilMatches: Bool
    private let mask: UnsafeMutablePointer<UInt64>
    private let words: Int
    private var loaded: UInt64 = .max

    init(column: Int, target: ColumnStorage, inner: ChunkTest, txn: Transaction) {
        self.column = column
        self.target = target
        self.inner = inner
        self.txn = txn
        let words = ChunkFormat.words(target.slotCount)
        let mask = UnsafeMutablePointer<UInt64>.allocate(capacity: Swift.max(words, 1))
        self.words = words
        self.mask = mask
        let nullObject = ChunkBuilder(slotCount: target.slotCount, kinds: target.kinds)
        nullObject.set(0, row: RowView(bytes: UnsafeRawBufferPointer(start: nil, count: 0)))
        nilMatches = nullObject.encoded().withUnsafeBytes { bytes in
            guard let chunk = ColumnChunk(bytes, slotCount: target.slotCount) else { return false }
            inner.fill(chunk, mask)
            return mask[0] & 1 != 0
        }
    }
    deinit { mask.deallocate() }

    override func fill(_ chunk: ColumnChunk, _ out: UnsafeMutablePointer<UInt64>) {
        let shift = UInt64(target.shift), slotMask = UInt64(target.slotCount - 1)
        fillSparse(chunk, column, out, nullMatches: nilMatches) { block, index in
            let key = block.slot(index)
            let number = key >> shift
            if number != loaded {
                loaded = number
                if let targetChunk = target.chunk(number, in: txn) {
                    inner.fill(targetChunk.chunk, mask)
                } else {
                    for word in 0..<words { mask[word] = 0 }
                }
            }
            let slot = Int(key & slotMask)
            return (mask[slot &>> 6] &>> UInt64(slot & 63)) & 1 != 0
        }
    }
}

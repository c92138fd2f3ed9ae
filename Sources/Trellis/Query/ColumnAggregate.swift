import Foundation

/// Reads one column of objects by key from a column copy, keeping the chunk it read last (keys
/// in order fall in the same chunk 256 times in a row).
struct ColumnReader {
    let storage: ColumnStorage
    let column: Int
    let txn: Transaction
    private var number: UInt64 = .max
    private var block: ColumnBlock?
    /// The chunk read last (its bytes, when the delta applied to it, kept alive here).
    private var read: ReadChunk?

    init(storage: ColumnStorage, column: Int, txn: Transaction) {
        self.storage = storage
        self.column = column
        self.txn = txn
    }

    /// The slot of `key`'s value; nil when null or when the object is not in the copy.
    @inline(__always)
    mutating func slot(_ key: ObjectKey) -> UInt64? {
        let wanted = key >> UInt64(storage.shift)
        if wanted != number {
            number = wanted
            read = storage.chunk(wanted, in: txn)
            block = read?.chunk.block(column)
        }
        guard let block else { return nil }
        let index = Int(key & UInt64(storage.slotCount - 1))
        let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
        guard block.chunk.presence(word) & bit != 0, block.nullWord(word) & bit == 0 else { return nil }
        return block.slot(index)
    }
}

/// `sum`, `average`, `min` and `max` of an Int, Float, Double or Date property over a class,
/// read from its column copy. The answers are the ones ``QueryAggregate`` gives over the same
/// values in the same order (realm-core's rules: integer sums wrap, an integer average adds
/// Doubles, NaN is skipped by every aggregate, Floats are added as Doubles), so the two paths
/// never disagree.
enum ColumnAggregate {
    /// Whether the column copy can aggregate `type`.
    static func supports(_ type: PropertyType) -> Bool {
        type == .int || type == .float || type == .double || type == .date
    }

    /// The aggregate of every object of the class (`keys` nil) or of the objects `keys` name,
    /// in that order.
    static func apply(_ op: QueryCollectionOperation, type: PropertyType, column: Int, storage: ColumnStorage,
                      txn: Transaction, keys: [ObjectKey]?) -> QueryValue
    {
        if type == .int {
            var accumulator = IntegerAccumulator()
            visit(column, storage, txn, keys, into: &accumulator)
            return accumulator.result(op)
        }
        let result: QueryValue
        if type == .float {
            var accumulator = FloatAccumulator()
            visit(column, storage, txn, keys, into: &accumulator)
            result = accumulator.doubles.result(op)
        } else {
            var accumulator = FloatingAccumulator()
            visit(column, storage, txn, keys, into: &accumulator)
            result = accumulator.result(op)
        }
        if type == .date, case .double(let seconds) = result, op == .min || op == .max {
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        }
        return result
    }

    /// Adds the slot of every non-null value to `accumulator`, in object order or in `keys`'
    /// order. Generic over the accumulator (not a closure), so that the add is specialized into
    /// the per-chunk loop.
    private static func visit<A: SlotAccumulator>(_ column: Int, _ storage: ColumnStorage, _ txn: Transaction,
                                                  _ keys: [ObjectKey]?, into accumulator: inout A)
    {
        if let keys {
            var reader = ColumnReader(storage: storage, column: column, txn: txn)
            for key in keys { if let slot = reader.slot(key) { accumulator.add(slot: slot) } }
            return
        }
        storage.forEachChunk(in: txn) { chunk, _ in
            guard let block = chunk.block(column) else { return true }
            accumulate(block, chunk, into: &accumulator)
            return true
        }
    }

    @inline(never)
    private static func accumulate<A: SlotAccumulator>(_ block: ColumnBlock, _ chunk: ColumnChunk, into accumulator: inout A) {
        for word in 0..<chunk.wordCount {
            var bits = chunk.presence(word) & ~block.nullWord(word)
            let base = word &<< 6
            if bits == ~0 {
                for index in base..<(base &+ 64) { accumulator.add(slot: block.slot(index)) }
                continue
            }
            while bits != 0 {
                accumulator.add(slot: block.slot(base &+ bits.trailingZeroBitCount))
                bits &= bits &- 1
            }
        }
    }
}

/// Takes slots one at a time (see ``ColumnAggregate``).
private protocol SlotAccumulator {
    mutating func add(slot: UInt64)
}

private struct IntegerAccumulator: SlotAccumulator {
    var count = 0
    var total: Int64 = 0
    /// The values added as Doubles, for the average (realm-core averages integers so).
    var doubleTotal = 0.0
    var smallest = Int64.max
    var largest = Int64.min

    @inline(__always)
    mutating func add(_ value: Int64) {
        count &+= 1
        total &+= value
        doubleTotal += Double(value)
        smallest = Swift.min(smallest, value)
        largest = Swift.max(largest, value)
    }

    func result(_ op: QueryCollectionOperation) -> QueryValue {
        switch op {
        case .sum: return .int(total)
        case .avg: return count == 0 ? .null : .double(doubleTotal / Double(count))
        case .min: return count == 0 ? .null : .int(smallest)
        case .max: return count == 0 ? .null : .int(largest)
        default: return .null
        }
    }
}

private struct FloatingAccumulator: SlotAccumulator {
    var count = 0
    var total = 0.0
    var smallest = 0.0
    var largest = 0.0

    @inline(__always)
    mutating func add(_ value: Double) {
        // NaN counts for no aggregate (realm-core's valid_for_agg).
        if value.isNaN { return }
        if count == 0 {
            smallest = value
            largest = value
        } else {
            if value < smallest { smallest = value }
            if largest < value { largest = value }
        }
        count &+= 1
        total += value
    }

    func result(_ op: QueryCollectionOperation) -> QueryValue {
        switch op {
        // `+ 0.0` as QueryAggregate adds the (zero) integer total: -0.0 becomes 0.0.
        case .sum: return .double(total + 0.0)
        case .avg: return count == 0 ? .null : .double((total + 0.0) / Double(count))
        case .min: return count == 0 ? .null : .double(smallest)
        case .max: return count == 0 ? .null : .double(largest)
        default: return .null
        }
    }
}

extension IntegerAccumulator {
    @inline(__always)
    mutating func add(slot: UInt64) { add(Int64(bitPattern: slot)) }
}

extension FloatingAccumulator {
    /// A Double or a Date (seconds since 2001) slot.
    @inline(__always)
    mutating func add(slot: UInt64) { add(Double(bitPattern: slot)) }
}

/// A Float column's slots, added as Doubles (as ``QueryAggregate`` adds them).
private struct FloatAccumulator: SlotAccumulator {
    var doubles = FloatingAccumulator()

    @inline(__always)
    mutating func add(slot: UInt64) { doubles.add(Double(Float(bitPattern: UInt32(truncatingIfNeeded: slot)))) }
}

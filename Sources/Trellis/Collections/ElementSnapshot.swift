/// A private copy of a collection's encoded elements, taken when iteration begins, so that the
/// iteration sees the collection as it was even if the loop body changes it (as in Realm).
///
/// One allocation for all the bytes; elements are decoded one at a time as the loop asks.
@usableFromInline
final class ElementSnapshot {
    private let storage: UnsafeMutableRawBufferPointer
    private let starts: [Int]

    init(_ elements: [UnsafeRawBufferPointer]) {
        var starts = [Int]()
        starts.reserveCapacity(elements.count + 1)
        var total = 0
        for element in elements {
            starts.append(total)
            total += element.count
        }
        starts.append(total)
        storage = .allocate(byteCount: max(total, 1), alignment: 8)
        for (index, element) in elements.enumerated() where !element.isEmpty {
            UnsafeMutableRawBufferPointer(rebasing: storage[starts[index] ..< starts[index] + element.count])
                .copyMemory(from: element)
        }
        self.starts = starts
    }

    deinit { storage.deallocate() }

    var count: Int { starts.count - 1 }

    subscript(index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: storage[starts[index] ..< starts[index + 1]])
    }
}

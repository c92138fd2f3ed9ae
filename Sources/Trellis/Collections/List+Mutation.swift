import Foundation

/// The mutation API of `List`, with Realm's index checks and messages. Every mutation is one
/// splice: replace a range of elements with new ones.
extension List {
    /// Appends an element. An unmanaged object appended to a managed list is added to the Realm.
    ///
    /// Inlined into the app's module: an unmanaged list (a model being built) appends to its
    /// array in place there, where the array's element type is known (code generic over it looks
    /// the array's type up at run time on every append, about 650 instructions).
    @inlinable
    public func append(_ object: Element) {
        if _isUnmanaged {
            unmanagedElements.append(object)
            return
        }
        _appendToManagedList(object)
    }

    /// ``append(_:)`` on a managed list.
    @usableFromInline
    func _appendToManagedList(_ object: Element) {
        let count = prepareMutation()
        splice(count..<count, with: [object])
    }

    /// Appends the elements of a sequence (read completely first, so a list can append itself).
    public func append<S: Sequence>(objectsIn objects: S) where S.Iterator.Element == Element {
        let count = prepareMutation()
        splice(count..<count, with: Array(objects))
    }

    /// Inserts an element at `index` (`0...count`).
    public func insert(_ object: Element, at index: Int) {
        let count = prepareMutation()
        CollectionIndex.check(index, count: count + 1)
        splice(index..<index, with: [object])
    }

    /// Inserts the elements of a collection at `index` (`0...count`).
    public func insert<C: Collection>(contentsOf newElements: C, at index: Int) where C.Iterator.Element == Element {
        let count = prepareMutation()
        CollectionIndex.check(index, count: count + 1)
        splice(index..<index, with: Array(newElements))
    }

    /// Removes the element at `index`. Objects stay in the Realm; embedded objects are deleted.
    public func remove(at index: Int) {
        let count = prepareMutation()
        CollectionIndex.check(index, count: count)
        splice(index..<index + 1, with: [])
    }

    /// Removes every element. Objects stay in the Realm; embedded objects are deleted. In a
    /// synced Realm, the elements it cannot show (links to objects outside the subscriptions)
    /// go too, as in Realm.
    public func removeAll() {
        let count = prepareMutation()
        if case .managed(let binding) = storage { binding.core.noteSyncClear(binding.location) }
        if count > 0 { splice(0..<count, with: []) }
    }

    /// Removes the first `number` elements.
    public func removeFirst(_ number: Int = 1) {
        let count = prepareMutation()
        CollectionIndex.checkRemoval(number, count: count)
        splice(0..<number, with: [])
    }

    /// Removes the last `number` elements.
    public func removeLast(_ number: Int = 1) {
        let count = prepareMutation()
        CollectionIndex.checkRemoval(number, count: count)
        splice(count - number ..< count, with: [])
    }

    /// Removes the elements in a range of positions.
    public func removeSubrange<R: RangeExpression>(_ boundsExpression: R) where R.Bound == Int {
        let count = prepareMutation()
        let range = checkedRange(boundsExpression, count: count)
        splice(range, with: [])
    }

    /// Removes the elements at the given positions.
    public func remove(atOffsets offsets: IndexSet) {
        let count = prepareMutation()
        for offset in offsets { CollectionIndex.check(offset, count: count) }
        for offset in offsets.reversed() { splice(offset..<offset + 1, with: []) }
    }

    /// Replaces the element at `index`. A replaced embedded object is deleted.
    public func replace(index: Int, object: Element) {
        let count = prepareMutation()
        CollectionIndex.check(index, count: count)
        splice(index..<index + 1, with: [object])
    }

    /// Replaces a range of elements with the elements of a collection.
    public func replaceSubrange<C: Collection, R: RangeExpression>(_ subrange: R, with newElements: C)
    where C.Iterator.Element == Element, R.Bound == Int {
        let count = prepareMutation()
        let range = checkedRange(subrange, count: count)
        splice(range, with: Array(newElements))
    }

    /// Moves the element at `from` to position `to`.
    public func move(from: Int, to: Int) {
        let count = prepareMutation()
        CollectionIndex.check(from, count: count)
        CollectionIndex.check(to, count: count)
        if from == to { return }
        reorder(Swift.min(from, to) ..< Swift.max(from, to) + 1) { elements in
            let element = elements.remove(at: from - Swift.min(from, to))
            elements.insert(element, at: to - Swift.min(from, to))
        }
    }

    /// Moves the elements at `offsets` so they end up before the element that was at
    /// `destination` (SwiftUI's `onMove` semantics).
    public func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
        let count = prepareMutation()
        for offset in offsets { CollectionIndex.check(offset, count: count) }
        CollectionIndex.check(destination, count: count + 1)
        reorder(0..<count) { elements in
            let moving = offsets.map { elements[$0] }
            for offset in offsets.reversed() { elements.remove(at: offset) }
            let target = destination - offsets.count(in: 0..<destination)
            elements.insert(contentsOf: moving, at: target)
        }
    }

    /// Exchanges two elements.
    public func swapAt(_ index1: Int, _ index2: Int) {
        let count = prepareMutation()
        CollectionIndex.check(index1, count: count, name: "index1")
        CollectionIndex.check(index2, count: count, name: "index2")
        if index1 == index2 { return }
        let low = Swift.min(index1, index2), high = Swift.max(index1, index2)
        reorder(low ..< high + 1) { elements in elements.swapAt(0, high - low) }
    }

    // MARK: - The splice

    /// Checks that the list may be mutated now and returns its count.
    private func prepareMutation() -> Int {
        switch storage {
        case .unmanaged(let elements): return elements.count
        case .managed(let binding):
            binding.verifyWritable("List")
            return binding.core.listCount(binding.location)
        case .nested(let nested):
            nested.verifyWritable("List")
            return nested.count
        }
    }

    private func checkedRange<R: RangeExpression>(_ expression: R, count: Int) -> Range<Int> where R.Bound == Int {
        let range = expression.relative(to: Array(0..<Swift.max(count, 1)))
        if range.lowerBound < 0 { throwRealmException("Cannot pass a negative value for 'index'.") }
        if range.upperBound > count {
            throwRealmException("Index \(range.upperBound - 1) is out of bounds (must be less than \(count)).")
        }
        return range
    }

    private func splice(_ range: Range<Int>, with newElements: [Element]) {
        switch storage {
        case .unmanaged(var elements):
            storage = .unmanaged([])  // drop the second reference so the array mutates in place
            elements.replaceSubrange(range, with: newElements)
            storage = .unmanaged(elements)
        case .managed(let binding):
            let session = binding.session("List")
            let encoded = newElements.map { binding.encode($0, session: session) }
            binding.core.listSplice(binding.location, range, with: encoded)
        case .nested(let nested):
            let encoded = nested.encode(newElements.compactMap { $0 as? AnyRealmValue }, kind: "List")
            nested.modifyList { $0.replaceSubrange(range, with: encoded) }
        }
    }

    /// Rearranges the elements of `range`: `body` permutes their positions (`0..<range.count`).
    /// Managed lists move the stored elements themselves, so embedded objects keep their
    /// identity.
    private func reorder(_ range: Range<Int>, _ body: (inout [Int]) -> Void) {
        var order = Array(0..<range.count)
        body(&order)
        switch storage {
        case .unmanaged(var elements):
            storage = .unmanaged([])
            let moved = order.map { elements[range.lowerBound + $0] }
            elements.replaceSubrange(range, with: moved)
            storage = .unmanaged(elements)
        case .managed(let binding):
            let stored = binding.core.listElements(binding.location)[range].map { Array($0) }
            binding.core.listSplice(binding.location, range, with: order.map { stored[$0] })
        case .nested(let nested):
            nested.modifyList { elements in
                let moved = order.map { elements[range.lowerBound + $0] }
                elements.replaceSubrange(range, with: moved)
            }
        }
    }
}

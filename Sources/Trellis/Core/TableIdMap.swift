/// Values by table number. Table numbers are small and dense (1, 2, … in the order classes
/// were stored), and a write looks one up per object, so they index an array instead of
/// being hashed. Numbers past `arrayLimit` (a file that stored thousands of classes) go to a
/// dictionary.
struct TableIdMap<Value> {
    private var slots: [Value?] = []
    private var overflow: [UInt32: Value] = [:]
    /// The numbers that have a value, in the order they got one.
    private(set) var ids: [UInt32] = []
    private static var arrayLimit: Int { 4096 }

    var isEmpty: Bool { ids.isEmpty }

    subscript(id: UInt32) -> Value? {
        @inline(__always)
        get {
            let index = Int(id)
            if index < slots.count { return slots[index] }
            return index < Self.arrayLimit ? nil : overflow[id]
        }
        set {
            if newValue == nil {
                guard self[id] != nil else { return }
                ids.removeAll { $0 == id }
            }
            update(id, default: newValue) { $0 = newValue }
        }
    }

    /// Calls `body` with the value of `id` to change in place, made by `value` first if it has
    /// none. A method rather than a `_modify` accessor: the accessor's coroutine frame was
    /// allocated on every call.
    @inline(__always)
    mutating func update<R>(_ id: UInt32, default value: @autoclosure () -> Value?, _ body: (inout Value?) -> R) -> R {
        let index = Int(id)
        guard index < Self.arrayLimit else {
            if overflow[id] == nil, let made = value() {
                overflow[id] = made
                ids.append(id)
            }
            var current = overflow.removeValue(forKey: id)
            defer { overflow[id] = current }
            return body(&current)
        }
        if index >= slots.count { slots += repeatElement(nil, count: index + 1 - slots.count) }
        if slots[index] == nil, let made = value() {
            slots[index] = made
            ids.append(id)
        }
        return body(&slots[index])
    }

    /// Every (number, value), by increasing number.
    var sorted: [(id: UInt32, value: Value)] {
        var result: [(id: UInt32, value: Value)] = []
        result.reserveCapacity(ids.count)
        for id in ids {
            if let value = self[id] { result.append((id, value)) }
        }
        if result.count > 1 { result.sort { $0.id < $1.id } }  // usually one table per write
        return result
    }

    /// Calls `body` with every (number, value), by increasing number, making no array for one
    /// number (the usual write changes one table).
    func forEachSorted(_ body: (UInt32, Value) throws -> Void) rethrows {
        if ids.count <= 1 {
            for id in ids { if let value = self[id] { try body(id, value) } }
            return
        }
        for id in ids.sorted() { if let value = self[id] { try body(id, value) } }
    }

    /// Forgets every value, keeping the room of `ids` (the map is emptied after every write).
    mutating func removeAll() {
        if ids.isEmpty { return }
        for id in ids where Int(id) < slots.count { slots[Int(id)] = nil }
        if !overflow.isEmpty { overflow = [:] }
        ids.removeAll(keepingCapacity: true)
    }
}

import Foundation
@testable import TrellisStorage

/// A `StorageFile` in memory that records every write, truncate and sync (for simulated power
/// loss) and can be told to fail a call (for I/O error injection). Its "map" is its own buffer,
/// reserved once at `capacity` bytes so that views stay valid.
final class MemoryFile: StorageFile {
    enum Event {
        case write(offset: UInt64, bytes: [UInt8])
        case truncate(UInt64)
        case sync
        /// A test's note: a commit started (its number).
        case commitBegan(UInt64)
        /// A test's note: `commit()` returned.
        case commitAcknowledged(UInt64)
    }

    /// Calls that can be made to fail.
    enum Call: CaseIterable {
        case write, truncate, sync, map, size, read
    }

    let name: String
    private let base: UnsafeMutableRawPointer
    let capacity: Int
    private(set) var length: Int = 0
    var isRecording = false
    /// A test's note for simulated power loss: whether commits sync (an acknowledged commit is durable).
    var isDurable = true
    private(set) var events: [Event] = []
    /// Fail the `n`th next call of this kind (0 = the very next), once, with `errno`.
    var failure: (call: Call, countdown: Int, errno: Int32)?
    private(set) var calls: [Call: Int] = [:]

    init(name: String = "memory", capacity: Int = 64 << 20, contents: [UInt8] = []) {
        self.name = name
        self.capacity = capacity
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 4096)
        contents.withUnsafeBytes { source in
            if let from = source.baseAddress { base.copyMemory(from: from, byteCount: min(source.count, capacity)) }
        }
        length = min(contents.count, capacity)
    }

    deinit { base.deallocate() }

    /// A copy of the file's bytes (what the page cache holds).
    var contents: [UInt8] { Array(UnsafeRawBufferPointer(start: base, count: length)) }

    func note(_ event: Event) {
        if isRecording { events.append(event) }
    }

    private func check(_ call: Call) throws {
        calls[call, default: 0] += 1
        guard let failure, failure.call == call else { return }
        if failure.countdown > 0 {
            self.failure = (call, failure.countdown - 1, failure.errno)
            return
        }
        self.failure = nil
        throw StorageError(.io(operation: "\(call)", errno: failure.errno), "injected \(call) failure")
    }

    private func resize(_ newLength: Int) throws {
        guard newLength <= capacity else { throw StorageError(.io(operation: "write", errno: 28), "memory file full") }
        if newLength > length { (base + length).initializeMemory(as: UInt8.self, repeating: 0, count: newLength - length) }
        length = newLength
    }

    func size() throws -> UInt64 {
        try check(.size)
        return UInt64(length)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        try check(.read)
        guard let target = buffer.baseAddress else { return }
        target.initializeMemory(as: UInt8.self, repeating: 0, count: buffer.count)
        let start = Int(offset)
        if start < length { target.copyMemory(from: base + start, byteCount: min(buffer.count, length - start)) }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try check(.write)
        guard let source = bytes.baseAddress else { return }
        let end = Int(offset) + bytes.count
        if end > length { try resize(end) }
        (base + Int(offset)).copyMemory(from: source, byteCount: bytes.count)
        note(.write(offset: offset, bytes: Array(bytes)))
    }

    func truncate(to size: UInt64) throws {
        try check(.truncate)
        try resize(Int(size))
        note(.truncate(size))
    }

    func sync() throws {
        try check(.sync)
        note(.sync)
    }

    func map(length: UInt64) throws -> UnsafeRawPointer {
        try check(.map)
        guard length <= UInt64(capacity) else { throw StorageError(.io(operation: "mmap", errno: 12), "map too large") }
        return UnsafeRawPointer(base)
    }

    func lockWriter() throws {}
    func unlockWriter() {}
    func close() {}

    /// Flips one byte of the file (damage).
    func flip(at offset: Int, with mask: UInt8) {
        let pointer = (base + offset).assumingMemoryBound(to: UInt8.self)
        pointer.pointee ^= mask
    }
}

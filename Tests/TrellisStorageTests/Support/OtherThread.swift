import Dispatch
import Foundation

/// A value shared with another thread.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func get() -> Value { lock.withLock { value } }
}

/// Runs `body` on another thread; nil if it has not returned within `seconds`.
func finishes<R: Sendable>(within seconds: Int, _ body: @escaping @Sendable () throws -> R) -> Result<R, Error>? {
    let done = DispatchSemaphore(value: 0)
    let result = LockedBox<Result<R, Error>?>(nil)
    Thread.detachNewThread {
        result.set(Result { try body() })
        done.signal()
    }
    guard done.wait(timeout: .now() + .seconds(seconds)) == .success else { return nil }
    return result.get()
}

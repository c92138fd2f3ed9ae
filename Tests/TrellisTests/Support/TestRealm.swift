import Foundation
@testable import Trellis

/// A fresh folder per test, removed when the value is released.
final class TemporaryFolder: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("trellis-tests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String = "test.realm") -> URL { url.appendingPathComponent(name) }

    func configuration(_ types: [ObjectBase.Type]? = nil, name: String = "test.realm") -> Realm.Configuration {
        Realm.Configuration(fileURL: file(name), objectTypes: types)
    }
}

/// Runs `body` on a new thread and waits for it (for isolation and confinement tests).
func onOtherThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = LockedBox<Result<T, any Error>?>(nil)
    let thread = Thread { result.set(Result { try body() }) }
    let done = DispatchSemaphore(value: 0)
    let waiter = Thread { while result.get() == nil { usleep(1000) }; done.signal() }
    thread.start()
    waiter.start()
    done.wait()
    return try result.get()!.get()
}

final class LockedBox<Value>: @unchecked Sendable {
    // @unchecked Sendable: every access goes through the lock.
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ newValue: Value) { lock.lock(); value = newValue; lock.unlock() }
    func mutate(_ change: (inout Value) -> Void) { lock.lock(); change(&value); lock.unlock() }
}

/// The helper executable built beside the test binary.
func processHelperURL() -> URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("TrellisProcessHelper")
}

/// Runs the helper with `arguments` and returns its trimmed standard output; `environment` adds
/// variables to this process's own (e.g. an encryption key).
@discardableResult
func runHelper(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
    let process = Process()
    process.executableURL = processHelperURL()
    process.arguments = arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

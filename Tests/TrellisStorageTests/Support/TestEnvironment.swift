import Foundation

/// An integer from the environment, or a default.
func environmentInteger(_ name: String, default value: Int) -> Int {
    ProcessInfo.processInfo.environment[name].flatMap { Int($0) } ?? value
}

/// A fresh temporary directory.
func temporaryDirectory(_ label: String) -> String {
    let path = NSTemporaryDirectory() + "trellis-storage-\(label)-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

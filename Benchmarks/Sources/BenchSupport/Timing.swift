import Foundation

/// Times `body` `repetitions` times and returns the median.
public func median(_ repetitions: Int, _ body: () throws -> Void) rethrows -> Double {
    try median(repetitions, setup: {}, body)
}

/// Times `body` `repetitions` times (after `setup` each time, untimed) and returns the median.
public func median(_ repetitions: Int, setup: () throws -> Void, _ body: () throws -> Void) rethrows -> Double {
    var samples = [Double]()
    for _ in 0..<Swift.max(repetitions, 1) {
        try setup()
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    samples.sort()
    return samples[samples.count / 2]
}

/// A fresh folder per file, removed at exit.
public final class Scratch {
    public let url: URL
    private var counter = 0

    public init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    public func file(_ name: String) -> URL {
        counter += 1
        return url.appendingPathComponent("\(counter)-\(name)")
    }
}


import Foundation

/// Runs this executable again under valgrind's callgrind, collecting instructions only inside
/// ``trellisMeasuredRegion()``. The child prints how many operations it ran there.
public enum Callgrind {
    public struct Measurement {
        public var instructions: Int
        public var operations: Int
        public var perOperation: Double { Double(instructions) / Double(Swift.max(operations, 1)) }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `/proc/self/exe arguments` under callgrind; `label` names its files in `folder`.
    public static func measure(_ label: String, arguments: [String], in folder: URL) throws -> Measurement {
        let profile = folder.appendingPathComponent("callgrind.\(label).out")
        let valgrindLog = folder.appendingPathComponent("valgrind.\(label).log")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "valgrind", "--tool=callgrind", "--toggle-collect=*trellisMeasuredRegion*",
            "--callgrind-out-file=\(profile.path)", "--log-file=\(valgrindLog.path)",
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path,
        ] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let operations = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)),
              let instructions = totalInstructions(profile)
        else {
            let tail = (try? String(contentsOf: valgrindLog, encoding: .utf8))?.suffix(2_000) ?? ""
            throw Failure(description: "\(label) under callgrind failed (status \(process.terminationStatus), "
                + "output '\(output)'); valgrind's log ends with:\n\(tail)")
        }
        return Measurement(instructions: instructions, operations: operations)
    }

    /// The instructions a callgrind profile collected (its `totals:` line, else `summary:`).
    public static func totalInstructions(_ profile: URL) -> Int? {
        guard let text = try? String(contentsOf: profile, encoding: .utf8) else { return nil }
        var summary: Int?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("totals:") { return Int(line.dropFirst(7).split(separator: " ").first ?? "") }
            if line.hasPrefix("summary:") { summary = Int(line.dropFirst(8).split(separator: " ").first ?? "") }
        }
        return summary
    }

    /// A folder for profiles: `kept` if given, else a temporary one removed by `cleanUp`.
    public static func folder(kept: URL?) throws -> (url: URL, cleanUp: () -> Void) {
        let url = kept ?? FileManager.default.temporaryDirectory.appendingPathComponent("trellis-instructions-\(getpid())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return (url, { if kept == nil { try? FileManager.default.removeItem(at: url) } })
    }
}

/// `1234567` as `1,234,567`.
public func grouped(_ value: Int) -> String {
    let digits = String(value)
    var out = ""
    for (index, character) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(character)
    }
    return out
}

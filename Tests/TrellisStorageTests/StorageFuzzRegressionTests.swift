import Foundation
import Testing
import TrellisStorage

/// Inputs the storage fuzzer (`bash Scripts/fuzz-storage.sh`, docs/RELIABILITY.md) found, kept
/// so that they never come back. Each runs in a child process (`TrellisStorageProcessHelper
/// fuzz-replay`) exactly as under the fuzzer: it must end in success or a typed error, never in
/// a signal (the process dying) or a finding (exit 6).
@Suite struct StorageFuzzRegressionTests {
    static let findings = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/FuzzFindings")

    static var findingNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: findings.path)) ?? []).sorted()
    }

    /// Runs one input; returns the helper's output, or nil after recording how it failed.
    static func replay(_ input: URL) throws -> String? {
        let directory = temporaryDirectory("fuzz-replay")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("TrellisStorageProcessHelper")
        process.arguments = ["fuzz-replay", input.path, directory]
        process.environment = ["SWIFT_BACKTRACE": "enable=no"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let how = process.terminationReason == .exit ? "exit" : "signal"
            Issue.record("\(input.lastPathComponent): \(how) \(process.terminationStatus) \(printed)")
            return nil
        }
        return printed
    }

    @Test(arguments: findingNames)
    func aFuzzerFindingEndsInSuccessOrATypedError(_ name: String) throws {
        let printed = try Self.replay(Self.findings.appendingPathComponent(name))
        #expect(printed == nil || printed?.hasPrefix("sound") == true || printed?.hasPrefix("refused") == true)
        // Damage the engine must name (the others may also open at their older, sound slot).
        let damaged = [
            "file-cut-short", "tree-name-not-utf8", "empty-tree-counts-entries", "two-copies-free-count",
        ]
        if damaged.contains(where: { name.hasPrefix($0) }) {
            #expect(printed?.hasPrefix("refused corruptFile") == true, "\(name): \(printed ?? "")")
        }
    }

    @Test func findingsArePresent() {
        #expect(Self.findingNames.count >= 6)
    }

    /// Runs `body` with a file in a new temporary directory (removed afterwards) that `fill`
    /// wrote and closed.
    static func withFile(_ label: String, filledBy fill: (StorageEnvironment) throws -> Void,
                         _ body: (_ directory: String, _ path: String) throws -> Void) throws {
        let directory = temporaryDirectory(label)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        do {
            let environment = try StorageEnvironment(path: path)
            defer { environment.close() }
            try fill(environment)
        }
        try body(directory, path)
    }

    /// The harness's checksum fixer must keep a sound file sound (else the fuzzer would mostly
    /// test the fixer's mistakes), and a sound file must survive the harness's commit, seal and
    /// reopening (input flags 3).
    @Test func aSoundFileReplaysAsSoundWithItsChecksumsRecomputed() throws {
        try Self.withFile("fuzz-sound", filledBy: { environment in
            try environment.write { write in
                try write.createTree("a")
                try write.createTree("numbers", order: .integer)
                for index in UInt64(0)..<2000 {
                    try write.put("numbers", key: withUnsafeBytes(of: index) { Array($0) }, value: Array(repeating: 7, count: 20))
                    try write.put("a", key: Array("k\(index)".utf8), value: Array(repeating: 1, count: index % 500 == 0 ? 9000 : 10))
                }
            }
            _ = try environment.write { try $0.deleteRange("numbers", from: withUnsafeBytes(of: UInt64(100)) { Array($0) }, to: nil) }
        }) { directory, path in
            let image = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            for flags: UInt8 in [0, 1, 3] {
                let input = URL(fileURLWithPath: directory + "/input-\(flags)")
                try Data([flags] + image).write(to: input)
                #expect(try Self.replay(input) == "sound\n", "flags \(flags)")
            }
        }
    }

    /// The first finding: a commit counting more pages than the file holds was read through the
    /// map past the end of the file (SIGBUS). It is damage, reported on open.
    @Test func aFileCutShortIsACorruptFileErrorNotAFault() throws {
        try Self.withFile("cut-short", filledBy: { environment in
            try environment.write { write in
                try write.createTree("a")
                for index in 0..<3000 { try write.put("a", key: Array("key \(index)".utf8), value: Array(repeating: 3, count: 50)) }
            }
        }) { _, path in
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: 20 * 4096)
            try handle.close()
            #expect {
                let environment = try StorageEnvironment(path: path)
                _ = try environment.check()
            } throws: { error in
                guard let error = error as? StorageError, case .corruptFile = error.code else { return false }
                return error.message.contains("cut short")
            }
        }
    }
}

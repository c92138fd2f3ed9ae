import Foundation
import Testing

/// Inputs the fuzzers (Fuzz/, `bash Scripts/fuzz.sh`) found crashing, kept so they never do
/// again.
///
/// Damaged database files are read in a child process (the helper's `read-damaged`): opening
/// must throw or the objects must read through. LMDB has no page checksums, so damage inside a
/// B-tree that the open-time checks (header, truncation, catalog checksum) cannot see may still
/// end in Trellis's own "deleted or invalidated" trap; what must never happen is a memory fault
/// (SIGSEGV, SIGBUS) or an out-of-bounds read.
@Suite struct FuzzRegressionTests {
    static let findings = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/FuzzFindings")
    let folder = TemporaryFolder()

    static var fileFindings: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: findings.path)) ?? [])
            .filter { $0.hasPrefix("FuzzFile-") }.sorted()
    }

    @Test(arguments: fileFindings)
    func damagedFileNeverFaultsAndIsLeftAsItWas(_ name: String) throws {
        let url = folder.file(name + ".realm")
        try FileManager.default.copyItem(at: Self.findings.appendingPathComponent(name), to: url)
        let before = try Data(contentsOf: url)
        let reader = Process()
        reader.executableURL = processHelperURL()
        reader.arguments = ["read-damaged", url.path]
        let output = Pipe(), errors = Pipe()
        reader.standardOutput = output
        reader.standardError = errors
        reader.environment = ["SWIFT_BACKTRACE": "enable=no"]
        try reader.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reader.waitUntilExit()
        if reader.terminationReason == .exit {
            #expect(reader.terminationStatus == 0)
            #expect(printed.hasPrefix("read ") || printed.hasPrefix("error: "), "\(printed)")
        } else {
            #expect(reader.terminationStatus == SIGILL || reader.terminationStatus == SIGTRAP,
                    "signal \(reader.terminationStatus): \(stderr)")
            #expect(stderr.contains("Fatal error: Object has been deleted or invalidated."), "\(stderr)")
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func fileFindingsArePresent() {
        #expect(Self.fileFindings.count >= 3)
    }
}

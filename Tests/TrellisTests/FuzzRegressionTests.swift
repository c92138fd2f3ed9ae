import Foundation
import Testing
@testable import Trellis

/// Inputs the fuzzers (Fuzz/, `bash Scripts/fuzz.sh`) found crashing, kept so they never do
/// again.
///
/// Damaged database files are read in a child process (the helper's `read-damaged`): opening
/// must throw or the objects must read through. The `FuzzFile-lmdb-*` files used to kill the
/// process inside LMDB (SIGSEGV, SIGBUS): the structure check on open (``TreeVerifier``) must
/// now reject each with a `corruptFile` error naming the damage. LMDB has no page checksums, so
/// damage to the *contents* of a sound tree may still end in Trellis's own "deleted or
/// invalidated" trap; what must never happen is a memory fault or an out-of-bounds read.
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
        if name.hasPrefix("FuzzFile-lmdb-") {
            #expect(reader.terminationReason == .exit && reader.terminationStatus == 0, "\(stderr)")
            #if TRELLIS_LMDB
            #expect(printed.hasPrefix("error: ") && (printed.contains("is damaged") || printed.contains("is truncated")),
                    "\(printed)")
            #else
            // LMDB detail: these are LMDB-format files. The TrellisStorage build's read-only open
            // (`read-damaged`) never converts, so it refuses them naming `trellis upgrade FILE`
            // without reading their pages, or finds them damaged or foreign from their header.
            #expect(printed.hasPrefix("error: ") && (printed.contains("trellis upgrade") || printed.contains("is damaged")
                        || printed.contains("is truncated") || printed.contains("not a Trellis")), "\(printed)")
            #endif
        } else if reader.terminationReason == .exit {
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
        #expect(Self.fileFindings.count >= 17)
        #expect(Self.fileFindings.filter { $0.hasPrefix("FuzzFile-lmdb-") }.count == 14)
    }

    static var queryFindings: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: findings.path)) ?? [])
            .filter { $0.hasPrefix("FuzzQuery-") }.sorted()
    }

    /// Query texts that crashed the parser: each must now be a parse error with a message.
    @Test(arguments: queryFindings)
    func crashingQueryTextIsNowAParseError(_ name: String) throws {
        let text = String(decoding: try Data(contentsOf: Self.findings.appendingPathComponent(name)), as: UTF8.self)
        #expect(throws: (any Error).self) { try QueryParser.parse(text) }
    }

    @Test func deepNestingIsAnErrorAtTheLimitNotAStackOverflow() throws {
        let fine = String(repeating: "(", count: 100) + "age > 1" + String(repeating: ")", count: 100)
        _ = try QueryParser.parse(fine)
        for deep in [String(repeating: "(", count: 5000) + "age > 1" + String(repeating: ")", count: 5000),
                     String(repeating: "NOT ", count: 5000) + "age > 1",
                     "age IN " + String(repeating: "{", count: 5000),
                     String(repeating: "map[", count: 5000) + "'k'" + String(repeating: "]", count: 5000) + " == 1"] {
            #expect {
                try QueryParser.parse(deep)
            } throws: { error in
                (error as? QueryError)?.message == "the predicate is nested more than 100 levels deep"
            }
        }
    }
}

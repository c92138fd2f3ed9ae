import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// Issue 34, defect 3: a damaged file gives a typed error or a read, never a crash, a hang or a
/// huge allocation.
///
/// The helper writes a file with every kind of property (`flip-make`: strings, data, lists,
/// sets, maps, links, embedded objects, nested `AnyRealmValue`, an index). Each round flips one
/// byte of a copy (seeded: a random offset, XOR a random non-zero byte) and reads the whole copy
/// in a child process (`flip-read`: every property, collection, link, backlink, and queries,
/// sorts and aggregates over the column copies), with `libTrellisAllocationLimit.so` preloaded
/// so that any single allocation larger than the file ends the child with status 86. Each child
/// has a time limit. Outcomes: *detected* (`error: …`, a typed error on open), *harmless* (the
/// same digest as the undamaged file), *read silently* (a different digest: a changed value no
/// checksum caught, which the storage issue's checksums will take to 0), and the failures:
/// crash, hang, allocation over the file's size.
///
/// ```
/// TRELLIS_FLIPS=1000 swift test --filter DamagedFileFlipTests     # CI runs 100 (about 20 s)
/// TRELLIS_FLIP_SEED=7 TRELLIS_FLIPS=1000 swift test --filter DamagedFileFlipTests
/// ```
@Suite struct DamagedFileFlipTests {
    let folder = TemporaryFolder()

    enum Outcome: String, CaseIterable {
        case detected, harmless, readSilently = "read silently", crash, hang, allocation = "allocation over the file size"
    }

    struct Child {
        let status: Int32
        let signalled: Bool
        let timedOut: Bool
        let stdout: String
        let stderr: String
    }

    /// Serializes `Process.run()` across the two workers.
    static let launches = NSLock()

    static var libraryURL: URL {
        processHelperURL().deletingLastPathComponent().appendingPathComponent("libTrellisAllocationLimit.so")
    }

    /// Runs the helper with a time limit; output goes to files (a pipe the parent does not read
    /// could fill and stall the child, which would look like a hang).
    func run(_ arguments: [String], limit: Int, seconds: Double, tag: String) throws -> Child {
        let out = folder.file("\(tag).out"), err = folder.file("\(tag).err")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = processHelperURL()
        process.arguments = arguments
        process.environment = ["SWIFT_BACKTRACE": "enable=no", "LD_PRELOAD": Self.libraryURL.path,
                               "TRELLIS_ALLOCATION_LIMIT": String(limit)]
        let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
        // Closed as soon as the child ends: a thousand rounds must not pile up descriptors.
        defer {
            try? outHandle.close()
            try? errHandle.close()
        }
        process.standardOutput = outHandle
        process.standardError = errHandle
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        // One launch at a time (Foundation's Process.run is not relied on to be thread-safe).
        try Self.launches.withLock { try process.run() }
        var timedOut = false
        if done.wait(timeout: .now() + seconds) == .timedOut {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
            done.wait()
        }
        let stdout = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        let stderr = String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self)
        try? FileManager.default.removeItem(at: out)
        try? FileManager.default.removeItem(at: err)
        return Child(status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
                     timedOut: timedOut, stdout: stdout, stderr: stderr)
    }

    func outcome(_ child: Child, clean: String) -> Outcome {
        if child.timedOut { return .hang }
        if child.signalled { return .crash }
        if child.status == 86 { return .allocation }
        if child.status != 0 { return .crash }
        if child.stdout.hasPrefix("error: ") { return .detected }
        guard child.stdout.hasPrefix("read ") else { return .crash }
        return child.stdout == clean ? .harmless : .readSilently
    }

    @Test func singleByteFlipsNeverCrashHangOrAllocateMoreThanTheFile() throws {
        let environment = ProcessInfo.processInfo.environment
        let flips = environment["TRELLIS_FLIPS"].flatMap(Int.init) ?? 100
        let seed = environment["TRELLIS_FLIP_SEED"].flatMap(UInt64.init) ?? 34
        try #require(FileManager.default.fileExists(atPath: Self.libraryURL.path),
                     "build libTrellisAllocationLimit.so (swift build --build-tests)")

        let source = folder.file("source.realm")
        let made = try run(["flip-make", source.path, "120"], limit: 0, seconds: 120, tag: "make")
        try #require(made.status == 0 && !made.signalled, "flip-make: \(made.stderr)")
        let original = try Data(contentsOf: source)
        let limit = original.count
        let clean = try run(["flip-read", source.path], limit: limit, seconds: 60, tag: "clean")
        try #require(clean.status == 0 && clean.stdout.hasPrefix("read 120 objects"), "\(clean.stdout) \(clean.stderr)")

        var generator = SplitMix64(seed: seed)
        let plan = (0..<flips).map { _ in
            (offset: Int.random(in: 0..<original.count, using: &generator), mask: UInt8.random(in: 1...255, using: &generator))
        }
        let results = LockedBox([(offset: Int, mask: UInt8, outcome: Outcome, detail: String)]())
        let next = LockedBox(0)
        let started = Date()
        // Two children at a time (the machine has two cores).
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            while true {
                var index = 0
                next.mutate { index = $0; $0 += 1 }
                guard index < plan.count else { return }
                let (offset, mask) = plan[index]
                let url = folder.file("flip-\(index).realm")
                var damaged = original
                damaged[offset] ^= mask
                do {
                    try damaged.write(to: url)
                    let child = try run(["flip-read", url.path], limit: limit, seconds: 60, tag: "flip-\(index)")
                    let result = outcome(child, clean: clean.stdout)
                    let detail = result == .detected ? String(child.stdout.prefix(160))
                        : child.stderr.split(separator: "\n").first { $0.contains("Fatal") || $0.contains("allocation") }
                        .map(String.init) ?? String(child.stderr.prefix(300))
                    results.mutate { $0.append((offset, mask, result, detail)) }
                } catch {
                    results.mutate { $0.append((offset, mask, .crash, "could not run: \(error)")) }
                }
                try? FileManager.default.removeItem(at: url)
                try? FileManager.default.removeItem(at: URL(fileURLWithPath: url.path + ".lock"))
                try? FileManager.default.removeItem(at: URL(fileURLWithPath: url.path + "-lock"))
            }
        }
        let all = results.get()
        var counts = [Outcome: Int]()
        for result in all { counts[result.outcome, default: 0] += 1 }
        let summary = Outcome.allCases.map { "\($0.rawValue) \(counts[$0] ?? 0)" }.joined(separator: ", ")
        print("flip test: \(flips) flips of a \(original.count)-byte file, seed \(seed), "
            + "\(Int(Date().timeIntervalSince(started))) s: \(summary)")
        for failure in all where [.crash, .hang, .allocation].contains(failure.outcome) {
            Issue.record("flip at \(failure.offset) (xor \(failure.mask)): \(failure.outcome.rawValue): \(failure.detail)")
        }
        #expect(all.count == flips)
        let failures: Int = (counts[.crash] ?? 0) + (counts[.hang] ?? 0) + (counts[.allocation] ?? 0)
        #expect(failures == 0, "\(summary)")
    }
}

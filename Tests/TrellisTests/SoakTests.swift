import Foundation
import Testing
import TrellisTestSupport

/// Load and soak: 16 threads in one process and 4 process slots open, read, write, delete,
/// observe, freeze and `asyncWrite` one file for a fixed time. The slots' processes live
/// 0.3-2 s each and are replaced at once, so the file is opened cold over and over while the
/// others write; all of them start together on a file that does not exist yet, so the first
/// opens race to create it. Every worker checks what it reads against what it committed
/// (`TrellisProcessHelper soak`, Sources/TrellisProcessHelper/SoakWorker.swift).
///
/// Afterwards the consistency checker must find nothing, and the file must hold exactly the
/// acknowledged objects: every add acknowledged and not deleted, none deleted, none of an
/// `asyncWrite` cancelled before its turn.
///
/// `TRELLIS_SOAK_SECONDS` (default 4, as CI runs it) sets the time: e.g. 1800 for the
/// 30-minute soak (`Scripts/soak-test.sh`).
@Suite struct SoakTests {
    let folder = TemporaryFolder()

    /// What one helper process printed.
    struct Report {
        var added = Set<String>()
        var deleted = Set<String>()
        var cancelled = Set<String>()
        var problems = [String]()
        var operations = [String: Int]()

        mutating func read(_ text: String) {
            for line in text.split(separator: "\n") {
                let kind = line.prefix(2)
                let rest = String(line.dropFirst(2))
                switch kind {
                case "a ": added.insert(rest)
                case "d ": deleted.insert(rest)
                case "c ": cancelled.insert(rest)
                case "s ":
                    let words = rest.split(separator: " ")
                    if words.count == 2, let count = Int(words[1]) { operations[String(words[0]), default: 0] += count }
                default: problems.append(String(line))
                }
            }
        }
    }

    /// A running helper process and the file its output goes to.
    struct Worker {
        let process: Process
        let output: URL
    }

    func start(_ pools: String, instance: Int, seconds: Double, seed: UInt64) throws -> Worker {
        let output = folder.file("out-\(instance).txt")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = processHelperURL()
        process.arguments = ["soak", folder.file("soak.realm").path, pools, "\(instance)",
                             String(format: "%.2f", seconds), "\(seed)"]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = process.standardOutput
        try process.run()
        return Worker(process: process, output: output)
    }

    func finish(_ worker: Worker, into report: inout Report) throws {
        worker.process.waitUntilExit()
        if worker.process.terminationReason != .exit || worker.process.terminationStatus != 0 {
            report.problems.append("a soak process ended with \(worker.process.terminationReason == .exit ? "exit" : "signal") "
                + "\(worker.process.terminationStatus)")
        }
        report.read(String(decoding: try Data(contentsOf: worker.output), as: UTF8.self))
        try? FileManager.default.removeItem(at: worker.output)
    }

    @Test func sixteenThreadsAndFourProcessesKeepEveryAcknowledgedWriteAndAConsistentFile() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["TRELLIS_SOAK_SECONDS"] ?? "") ?? 4
        let seed = UInt64(ProcessInfo.processInfo.environment["TRELLIS_SOAK_SEED"] ?? "") ?? 20
        var random = SplitMix64(seed: seed)
        let began = Date()
        let deadline = began.addingTimeInterval(seconds)
        var report = Report()
        // Instance 0: the 16 threads, for the whole run. Instances 1…: the slots' processes.
        let threads = try start((0..<16).map(String.init).joined(separator: ","), instance: 0, seconds: seconds, seed: seed)
        var slots = [Worker?](repeating: nil, count: 4)
        var instance = 0
        var coldStarts = 0
        // A long run reports the file's size every minute: it must level off, not grow with
        // every commit (the first 30-minute run reached 903 MiB for 797 objects).
        var nextSizeReport = began.addingTimeInterval(60)
        while true {
            let now = Date()
            if seconds >= 120, now >= nextSizeReport {
                nextSizeReport = now.addingTimeInterval(60)
                let size = (try? FileManager.default.attributesOfItem(atPath: folder.file("soak.realm").path)[.size]
                    as? Int) ?? 0
                print("soak test: \(String(format: "%.0f", now.timeIntervalSince(began))) s, file \(size / 1024) KiB")
            }
            for slot in slots.indices {
                if let running = slots[slot], running.process.isRunning { continue }
                if let ended = slots[slot] {
                    try finish(ended, into: &report)
                    slots[slot] = nil
                }
                let left = deadline.timeIntervalSince(now)
                guard left > 0.2 else { continue }
                instance += 1
                coldStarts += 1
                let life = min(left, Double.random(in: 0.3...2, using: &random))
                slots[slot] = try start("\(100 + slot)", instance: instance, seconds: life, seed: seed &+ UInt64(instance))
            }
            if now >= deadline, slots.allSatisfy({ $0 == nil }) { break }
            usleep(20_000)
        }
        try finish(threads, into: &report)
        let elapsed = Date().timeIntervalSince(began)

        let check = try runHelper(["soak-check", folder.file("soak.realm").path])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(check.utf8)) as? [String: Any], "\(check)")
        let problems = try #require(json["problems"] as? [String])
        let present = Set(try #require(json["ids"] as? [String]))
        let expected = report.added.subtracting(report.deleted)
        let missing = expected.subtracting(present)
        let unexpected = present.subtracting(expected)

        #expect(report.problems.isEmpty, "\(report.problems.prefix(10))")
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        #expect(missing.isEmpty, "\(missing.count) acknowledged objects are missing: \(missing.sorted().prefix(10))")
        #expect(unexpected.isEmpty,
                "\(unexpected.count) objects were never acknowledged (or were deleted): \(unexpected.sorted().prefix(10))")
        #expect(report.cancelled.isDisjoint(with: present), "a cancelled asyncWrite wrote its objects")
        // Every kind of operation ran, in the threads and in the processes.
        for operation in ["open", "write", "delete", "read", "freeze", "asyncWrite", "reopen", "observe"] {
            #expect(report.operations[operation, default: 0] > 0, "no \(operation) ran")
        }
        #expect(coldStarts >= 4)
        let size = (try FileManager.default.attributesOfItem(atPath: folder.file("soak.realm").path)[.size] as? Int) ?? 0
        let operations = report.operations.sorted(by: { $0.key < $1.key }).map { "\($0.key) \($0.value)" }
        print("soak test: \(String(format: "%.0f", elapsed)) s, 16 threads + 4 process slots, \(coldStarts) process cold "
            + "starts, \(report.added.count) objects added, \(report.deleted.count) deleted, \(present.count) in the file "
            + "(\(size / 1024) KiB), \(report.cancelled.count) cancelled by asyncWrite; operations: "
            + operations.joined(separator: ", ") + "; seed \(seed)")
    }
}

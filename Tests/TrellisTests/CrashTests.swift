import Foundation
import Testing

/// Nothing committed is ever lost: a writer process is killed with SIGKILL at random moments
/// (inside transactions, inside commits, between them), and after each kill the file must hold
/// every transaction the writer acknowledged, no part of any other, and pass the consistency
/// checker (forward links = backlinks, one parent per embedded object, indexes match rows).
/// Beside each writer a reader process reads the file (checking that every snapshot is whole)
/// and holds frozen versions; it is killed too, at its own random moment.
///
/// The writer prints a transaction's id only after `write` returned. Rounds per run (two kills
/// each): `TRELLIS_CRASH_KILLS` (default 40, as CI runs it; `Scripts/crash-test.sh` runs more).
///
/// After each kill the file is checked for what that round wrote (the groups of transactions
/// after the previous check, the groups they changed or deleted, the ledger) and for every
/// acknowledged transaction; the whole file (structure, links and backlinks, indexes, every
/// group) every `TRELLIS_CRASH_FULL_CHECK_EVERY` rounds (default 10) and after the last round.
/// So a round costs what it wrote, not the size of the file: 1,000 kills finish.
///
/// On the TrellisStorage build the same runs on an encrypted file (issue 38): default 15 rounds,
/// `TRELLIS_CRASH_ENCRYPTED_KILLS`, else `TRELLIS_CRASH_KILLS` when that is set.
@Suite struct CrashTests {
    let folder = TemporaryFolder()

    @Test func sigkillNeverLosesAnAcknowledgedTransactionNorShowsAPartialOne() throws {
        let kills = Int(ProcessInfo.processInfo.environment["TRELLIS_CRASH_KILLS"] ?? "") ?? 40
        try killRounds(kills, path: folder.file("crash.realm").path, environment: [:])
    }

    #if !TRELLIS_LMDB
    /// The same on a file written with `encryptionKey`: every process (writer, reader, checker)
    /// opens it with the key; afterwards no stored name is in the file and it does not open
    /// without the key.
    @Test func sigkillDuringEncryptedWritesNeverLosesAnAcknowledgedTransaction() throws {
        let environment = ProcessInfo.processInfo.environment
        let kills = Int(environment["TRELLIS_CRASH_ENCRYPTED_KILLS"] ?? environment["TRELLIS_CRASH_KILLS"] ?? "") ?? 15
        let key = (0..<64).map { String(format: "%02x", ($0 * 29 + 7) & 0xFF) }.joined()
        let path = folder.file("encrypted-crash.realm").path
        try killRounds(kills, path: path, environment: ["TRELLIS_TEST_ENCRYPTION_KEY": key], label: "encrypted ")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for name in ["CrashPerson", "CrashMarker", "CrashLedger", "group"] {
            #expect(bytes.range(of: Data(name.utf8)) == nil, "'\(name)' is in the encrypted file")
        }
        #expect(try runHelper(["crash-check", path]).isEmpty, "the file opened without its key")
    }
    #endif

    /// `kills` rounds of a writer and a reader killed on the file at `path`, checked after each
    /// round; `environment` goes to every helper process.
    private func killRounds(_ kills: Int, path: String, environment: [String: String], label: String = "") throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["TRELLIS_CRASH_SEED"] ?? "") ?? UInt64.random(in: 1...1 << 40)
        let childEnvironment = environment.isEmpty ? nil
            : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        var acknowledged = Set<Int>()
        var acknowledgedDeletions = [Int: Int]()
        var random = SystemRandomNumberGenerator()
        let fullCheckEvery = max(1, Int(ProcessInfo.processInfo.environment["TRELLIS_CRASH_FULL_CHECK_EVERY"] ?? "") ?? 10)
        var checkedUpTo: Int?
        var killedWhileWriting = 0
        var readersKilled = 0
        for round in 0..<kills {
            let writer = Process()
            writer.executableURL = processHelperURL()
            writer.arguments = ["crash-write", path, String(seed &+ UInt64(round))]
            writer.environment = childEnvironment
            let output = Pipe()
            writer.standardOutput = output
            writer.standardError = FileHandle.nullDevice
            try writer.run()
            let reader = Process()
            reader.executableURL = processHelperURL()
            reader.arguments = ["crash-read", path]
            reader.environment = childEnvironment
            let readerOutput = Pipe()
            reader.standardOutput = readerOutput
            reader.standardError = FileHandle.nullDevice
            try reader.run()
            // Mostly short lives (kills during the first commits), sometimes long, counted from
            // the moment the writer has the file open; every fifth from its start instead (kills
            // while it opens or creates the file), however slow the machine is.
            var printed = ""
            if round % 5 != 3 {
                printed = String(decoding: output.fileHandleForReading.availableDataUntilNewline(), as: UTF8.self) + "\n"
            }
            let life = round % 5 == 0 ? Int.random(in: 200...600, using: &random) : Int.random(in: 5...150, using: &random)
            let readerLife = Int.random(in: 1...life, using: &random)
            usleep(useconds_t(readerLife * 1000))
            kill(reader.processIdentifier, SIGKILL)
            usleep(useconds_t((life - readerLife) * 1000))
            kill(writer.processIdentifier, SIGKILL)
            let read = String(decoding: readerOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            reader.waitUntilExit()
            if reader.terminationReason == .uncaughtSignal && reader.terminationStatus == SIGKILL { readersKilled += 1 }
            #expect(!read.contains("problem"), "round \(round): the reader saw \(read)")
            #expect(reader.terminationReason == .uncaughtSignal && reader.terminationStatus == SIGKILL,
                    "round \(round): the reader ended on its own (\(reader.terminationStatus))")
            printed += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            writer.waitUntilExit()
            #expect(writer.terminationReason == .uncaughtSignal, "round \(round): the writer ended on its own")
            // Only whole lines count: a line cut by the kill was not acknowledged.
            let lines = printed.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if lines.contains(where: { $0.hasPrefix("committed") }) { killedWhileWriting += 1 }
            for line in lines {
                let words = line.split(separator: " ")
                guard words.count >= 2, let transaction = Int(words[1]) else { continue }
                acknowledged.insert(transaction)
                if words.count == 4, let group = Int(words[3]) { acknowledgedDeletions[group] = transaction }
            }
            let full = round % fullCheckEvery == 0 || round == kills - 1
            checkedUpTo = try verify(path, since: full ? nil : checkedUpTo, acknowledged: acknowledged,
                                     deletions: acknowledgedDeletions, round: round, seed: seed,
                                     environment: environment)
        }
        #expect(acknowledged.count > kills / 2, "too few transactions committed to test anything (seed \(seed))")
        // On a loaded machine many writers are killed before their first commit: a quarter must commit.
        #expect(killedWhileWriting > kills / 4)
        print("\(label)crash test: \(kills + readersKilled) kills (\(kills) writers, \(readersKilled) readers), "
            + "\(acknowledged.count) acknowledged transactions, seed \(seed)")
    }

    /// Checks the file after a kill: all of it (`since` nil), or what the transactions after
    /// `since` wrote (`crash-check PATH SINCE`); every acknowledged transaction either way.
    /// Returns the ledger's last transaction, the `since` of the next check (nil: check all next).
    private func verify(_ path: String, since: Int?, acknowledged: Set<Int>, deletions: [Int: Int], round: Int,
                        seed: UInt64, environment: [String: String]) throws -> Int?
    {
        let report = try runHelper(["crash-check", path] + (since.map { [String($0)] } ?? []), environment: environment)
        guard let json = try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any],
              let last = json["last"] as? Int, let groups = json["groups"] as? [Int],
              let storedDeletions = json["deletions"] as? [String: Int], let problems = json["problems"] as? [String]
        else {
            Issue.record("round \(round) (seed \(seed)): the checker printed \(report)")
            return nil
        }
        let context = "round \(round) (\(since == nil ? "full check" : "check since \(since ?? 0)")), seed \(seed)"
        #expect(problems.isEmpty, "\(context): \(problems.prefix(5))")
        let newestAcknowledged = acknowledged.max() ?? 0
        #expect(last >= newestAcknowledged, "\(context): ledger at \(last), but \(newestAcknowledged) was acknowledged")
        // The ledger may be one transaction ahead (committed, killed before printing), never more.
        let present = Set(groups)
        let deleted = Set(storedDeletions.keys.compactMap(Int.init))
        for transaction in acknowledged {
            #expect(present.contains(transaction) || deleted.contains(transaction),
                    "\(context): acknowledged transaction \(transaction) is missing")
        }
        for (group, transaction) in deletions {
            #expect(storedDeletions[String(group)] == transaction, "\(context): deletion of \(group) by \(transaction) lost")
        }
        for group in present.union(deleted) {
            #expect(group <= last, "\(context): group \(group) is newer than the ledger (\(last))")
        }
        return last
    }
}

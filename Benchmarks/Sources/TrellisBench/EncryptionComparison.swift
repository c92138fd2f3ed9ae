import Foundation
import Trellis
import TrellisStorage

/// `--encrypted` (issue 38): W1, W2, W5 and W7 on a plain file and on an encrypted one
/// (`Realm.Configuration.encryptionKey`, AES-256-GCM per page, docs/STORAGE.md section 12) in
/// one run, each figure's plain and encrypted medians side by side with their ratio.
///
/// Only Trellis built on TrellisStorage (the default build) encrypts; the LMDB build
/// (`TRELLIS_STORAGE_ENGINE=lmdb`) refuses a key, which stops the run with a message saying so.
enum BenchEncryption {
    /// The key of every encrypted file of a run (any 64 bytes do).
    static let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })

    /// Stops with a clear message unless this build encrypts.
    static func requireSupport(scratch: Scratch) throws {
        var configuration = Realm.Configuration(fileURL: scratch.file("probe.realm"), objectTypes: [BenchDog.self, BenchPerson.self])
        configuration.encryptionKey = key
        do {
            _ = try Realm(configuration: configuration)
        } catch let error as Realm.Error where error.code == .fail && error.message.contains("not supported") {
            throw Unsupported()
        }
    }

    struct Unsupported: Error, CustomStringConvertible {
        var description: String {
            "--encrypted needs Trellis built on TrellisStorage: the LMDB build cannot encrypt files. Run "
                + "`bash Scripts/bench.sh --encrypted` (it builds the default TrellisStorage build in Benchmarks/.build) "
                + "without TRELLIS_STORAGE_ENGINE=lmdb."
        }
    }
}

/// One figure measured on a plain and on an encrypted file.
struct EncryptionRow: Codable {
    var workload: String
    var measure: String
    var plainSeconds: Double
    var encryptedSeconds: Double
    /// Encrypted time over plain time: what encryption costs (1.0 = nothing).
    var ratio: Double

    init(_ workload: String, _ measure: String, plain: Double, encrypted: Double) {
        self.workload = workload
        self.measure = measure
        plainSeconds = plain
        encryptedSeconds = encrypted
        ratio = encrypted / Swift.max(plain, 1e-12)
    }
}

struct EncryptionReport: Codable {
    var sizes: Sizes
    /// The bound of the decrypted-page cache the encrypted figures ran with, in pages of 4 KiB.
    var decryptedPageCachePages: Int
    /// The encrypted file W2, W5 and W7 read, in bytes.
    var encryptedFileBytes: Int
    var rows: [EncryptionRow]

    static func table(_ report: EncryptionReport) -> String {
        var lines = [
            "Encrypted (AES-256-GCM per page) vs plain, Trellis on TrellisStorage; medians of "
                + "\(report.sizes.repetitions); decrypted-page cache \(report.decryptedPageCachePages) pages, "
                + "read file \(grouped(report.encryptedFileBytes)) bytes encrypted",
            "",
            "| workload | measure | plain | encrypted | encrypted / plain |",
            "|---|---|---:|---:|---:|",
        ]
        for row in report.rows {
            lines.append("| \(row.workload) | \(row.measure) | \(Report.format(row.plainSeconds)) | "
                + "\(Report.format(row.encryptedSeconds)) | " + String(format: "%.2fx", row.ratio) + " |")
        }
        return lines.joined(separator: "\n")
    }
}

/// Runs the comparison: every figure on the plain file, then the same on the encrypted one.
struct EncryptionRunner: BenchRunner {
    let sizes: Sizes
    let selected: Set<String>
    let log: Bool

    func run() throws -> EncryptionReport {
        let scratch = Scratch(), sums = Checksums()
        let plain = TrellisWorkloads(sizes: sizes, scratch: scratch, sums: sums)
        var encrypted = plain
        encrypted.encryptionKey = BenchEncryption.key
        var rows = [EncryptionRow]()
        let n = sizes.objects
        /// A row from the same measurement on both files.
        func row(_ workload: String, _ measure: String, _ body: (TrellisWorkloads) throws -> Double) rethrows {
            progress("\(workload) \(measure)")
            rows.append(EncryptionRow(workload, measure, plain: try body(plain), encrypted: try body(encrypted)))
        }

        if selected.contains("W1") {
            try row("W1", "insert \(n) Dog + \(n) Person (to-one), one transaction, fsync") { try $0.w1Insert() }
            try row("W1", "the same without fsync") { try $0.w1Insert(sync: false) }
        }
        var fileBytes = 0
        if !selected.isDisjoint(with: ["W2", "W5", "W7"]) {
            progress("W2/W5/W7 data")
            let plainRealm = try plain.w1File(), encryptedRealm = try encrypted.w1File()
            fileBytes = (try? FileManager.default.attributesOfItem(
                atPath: encryptedRealm.configuration.fileURL?.path ?? "")[.size] as? Int) ?? 0
            func reading(_ workload: String, _ measure: String, _ body: (TrellisWorkloads, Realm) -> Double) {
                progress("\(workload) \(measure)")
                rows.append(EncryptionRow(workload, measure, plain: body(plain, plainRealm),
                                          encrypted: body(encrypted, encryptedRealm)))
            }
            if selected.contains("W2") {
                reading("W2", "sum person.dog.age over \(n) Persons") { $0.w2ToOne($1) }
            }
            if selected.contains("W5") {
                reading("W5", "count age > 40 over \(n) Dogs (scan)") { $0.w5Scan($1) }
                reading("W5", "sum(of: \\.age) over \(n) Dogs") { $0.w5Sum($1) }
                reading("W5", "sorted(by: \\.age), first 100 ages, over \(n) Dogs") { $0.w5Sorted($1) }
                reading("W5", "count dog.age > 10 over \(n) Persons (across the link)") { $0.w5Link($1) }
                reading("W5", "\(sizes.lookups) primary-key lookups") { $0.w5Lookup($1) }
            }
            if selected.contains("W7") {
                reading("W7", "enumerate \(n) Dogs, read name and age") { $0.w7Enumerate($1) }
                // The figures above read pages the decrypted-page cache already holds (if the
                // file fits its bound); this one opens a copy of the file each time, so every
                // page is read from the file and decrypted once.
                try row("W7", "the same, first pass after opening a copy (every page decrypted)") {
                    try $0.w7FirstPass(of: $0.encryptionKey == nil ? plainRealm : encryptedRealm)
                }
            }
        }
        return EncryptionReport(sizes: sizes, decryptedPageCachePages: StorageEnvironment.Options().decryptedPageCacheSize,
                                 encryptedFileBytes: fileBytes, rows: rows)
    }
}

extension TrellisWorkloads {
    /// W7's first pass over a fresh copy of `realm`'s file (its own environment, so nothing of
    /// it is cached in this process), the open untimed and without the structure check (which
    /// would read, and so decrypt, every page first).
    func w7FirstPass(of realm: Realm) throws -> Double {
        var copy: Realm?
        return try median(sizes.repetitions, setup: {
            let url = scratch.file("w7-cold.realm")
            try realm.writeCopy(toFile: url, encryptionKey: encryptionKey)
            var configuration = realm.configuration
            configuration.fileURL = url
            configuration.verifiesFileOnOpen = false
            copy = try Realm(configuration: configuration)
        }) {
            sums.record("W7", w7Pass(copy!))
        }
    }
}

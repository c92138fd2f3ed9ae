import Foundation

/// `--instructions --encrypted` (issue 38): instructions per operation of W1, W2, W5 (lookup
/// and scan) and W7 on a plain and on an encrypted file, each in its own process under
/// callgrind (``InstructionCounter``), with the ratio.
struct EncryptionInstructionCounter {
    let sizes: Sizes
    let selected: Set<String>
    let profiles: URL?

    /// The workloads of issue 38's comparison.
    static let workloads: [InstructionWorkload] = [.w1, .w2, .w5Lookup, .w5Scan, .w7]

    struct Result {
        var workload: InstructionWorkload
        var plain: Double
        var encrypted: Double
        var ratio: Double { encrypted / Swift.max(plain, 1e-12) }
    }

    func run(log: Bool) throws -> [Result] {
        let folder = try Callgrind.folder(kept: profiles)
        defer { folder.cleanUp() }
        let chosen = Self.workloads.filter { workload in selected.contains { workload.rawValue.uppercased().hasPrefix($0) } }
        return try chosen.map { workload in
            let plain = try workload.measure(sizes: sizes, in: folder.url, log: log)
            let encrypted = try workload.measure(sizes: sizes, encrypted: true, in: folder.url, log: log)
            return Result(workload: workload, plain: plain.perOperation, encrypted: encrypted.perOperation)
        }
    }

    static func table(_ results: [Result], sizes: Sizes) -> String {
        var lines = [
            "Instructions per operation, plain vs encrypted file (callgrind, collection on the workload only; "
                + "\(sizes.objects) objects, \(sizes.lookups) lookups; Trellis on TrellisStorage)",
            "",
            "| workload | operation | plain | encrypted | encrypted / plain |",
            "|---|---|---:|---:|---:|",
        ]
        for result in results {
            lines.append("| \(result.workload.rawValue) | \(result.workload.operation) | "
                + "\(grouped(Int(result.plain.rounded()))) | \(grouped(Int(result.encrypted.rounded()))) | "
                + String(format: "%.2fx", result.ratio) + " |")
        }
        return lines.joined(separator: "\n")
    }

    /// `{"W1": {"plain": …, "encrypted": …, "ratio": …}, …}`.
    static func json(_ results: [Result]) throws -> String {
        struct Entry: Encodable {
            var plain: Int
            var encrypted: Int
            var ratio: Double
        }
        var object = [String: Entry]()
        for result in results {
            object[result.workload.rawValue] = Entry(plain: Int(result.plain.rounded()),
                                                     encrypted: Int(result.encrypted.rounded()),
                                                     ratio: (result.ratio * 1_000).rounded() / 1_000)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(object), as: UTF8.self)
    }
}

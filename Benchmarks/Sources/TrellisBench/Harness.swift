import Foundation

/// The sizes of one run (the brief's defaults; `--smoke` shrinks them).
struct Sizes: Codable {
    var objects = 100_000
    var listOwners = 10_000
    var listLength = 10
    var commits = 10_000
    var lookups = 10_000
    var repetitions = 5
}

/// One row of the report: a workload's figure on Trellis and on each GRDB idiom, in seconds
/// (medians). A ratio is GRDB's time over Trellis's: how many times faster Trellis is.
struct Row: Codable {
    var workload: String
    var measure: String
    var trellis: Double
    var peers: [Peer]
    /// "s" for times (seconds), "MiB" for memory.
    var unit = "s"

    struct Peer: Codable {
        var name: String
        var seconds: Double
        var ratio: Double
    }

    init(_ workload: String, _ measure: String, trellis: Double, peers: [(String, Double)], unit: String = "s") {
        self.unit = unit
        self.workload = workload
        self.measure = measure
        self.trellis = trellis
        self.peers = peers.map { Peer(name: $0.0, seconds: $0.1, ratio: $0.1 / Swift.max(trellis, 1e-12)) }
    }
}

/// A checksum sink so the optimiser keeps the work, and so both engines are seen to read the
/// same data.
final class Checksums {
    private var values: [String: Int] = [:]

    func record(_ key: String, _ value: Int) {
        if let previous = values[key], previous != value {
            FileHandle.standardError.write(Data("checksum mismatch for \(key): \(previous) vs \(value)\n".utf8))
            exit(3)
        }
        values[key] = value
    }
}

enum Report {
    static func format(_ seconds: Double, unit: String = "s") -> String {
        if unit != "s" { return String(format: "%.1f %@", seconds, unit) }
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 1e-3 { return String(format: "%.1f ms", seconds * 1e3) }
        return String(format: "%.1f µs", seconds * 1e6)
    }

    static func table(_ rows: [Row]) -> String {
        var lines = ["| workload | measure | Trellis | GRDB | GRDB / Trellis |", "|---|---|---:|---:|---:|"]
        for row in rows {
            if row.peers.isEmpty {
                lines.append("| \(row.workload) | \(row.measure) | \(format(row.trellis, unit: row.unit)) | | |")
            }
            for (index, peer) in row.peers.enumerated() {
                let first = index == 0
                lines.append("| \(first ? row.workload : "") | \(first ? row.measure : "") | "
                    + "\(first ? format(row.trellis, unit: row.unit) : "") | \(peer.name): "
                    + "\(format(peer.seconds, unit: row.unit)) | "
                    + String(format: "%.1fx", peer.ratio) + " |")
            }
        }
        return lines.joined(separator: "\n")
    }
}

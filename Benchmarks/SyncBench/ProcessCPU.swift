import Foundation

// CPU time of the server and of PostgreSQL during a measurement, from /proc (Linux; elsewhere
// nil): on a shared, noisy machine the CPU an upload costs per object moves far less between
// runs than its wall-clock rate (docs/BENCHMARKS.md, "Sync").

/// User plus system CPU seconds of process `pid` so far (nil: no /proc entry).
func processCPUSeconds(_ pid: pid_t) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")") else { return nil }
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// CPU seconds so far of every process named `postgres` (the PostgreSQL the benchmark runs
/// against, its server's backends included; nil without /proc).
func postgresCPUSeconds() -> Double? {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
    var total = 0.0
    for entry in entries {
        guard let pid = pid_t(entry),
              let name = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
              name.trimmingCharacters(in: .whitespacesAndNewlines) == "postgres" else { continue }
        total += processCPUSeconds(pid) ?? 0
    }
    return total
}

/// The CPU the server and PostgreSQL spent between two readings.
struct CPUReading {
    var server: Double?
    var postgres: Double?

    init(serverPid: pid_t) {
        server = processCPUSeconds(serverPid)
        postgres = postgresCPUSeconds()
    }

    /// Microseconds per object of each, from `self` to `later`.
    func microsPerObject(until later: CPUReading, objects: Int) -> (server: Double?, postgres: Double?) {
        let scale = 1e6 / Double(max(objects, 1))
        let server = zip(self.server, later.server).map { ($1 - $0) * scale }
        let postgres = zip(self.postgres, later.postgres).map { ($1 - $0) * scale }
        return (server, postgres)
    }
}

private func zip(_ a: Double?, _ b: Double?) -> (Double, Double)? {
    guard let a, let b else { return nil }
    return (a, b)
}

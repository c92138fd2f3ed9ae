import Foundation

/// A progress bar on standard error for long operations (export, import):
/// `Exporting [#########           ] 45% 4,500/10,000`, redrawn in place.
///
/// Drawn only when standard error is a terminal (or `TRELLIS_PROGRESS=1`, for tests), so
/// pipes and logs get no control characters, and only for operations of at least
/// ``minimumTotal`` items.
struct ProgressBar {
    static let minimumTotal = 1_000
    private static let width = 30

    private let label: String
    private let enabled: Bool
    private var lastPercent = -1

    init(_ label: String) {
        self.label = label
        enabled = isatty(STDERR_FILENO) == 1 || ProcessInfo.processInfo.environment["TRELLIS_PROGRESS"] == "1"
    }

    /// Redraws when the percentage changes; ends the line when done.
    mutating func update(_ done: Int, of total: Int) {
        guard enabled, total >= Self.minimumTotal else { return }
        let percent = done * 100 / total
        guard percent != lastPercent else { return }
        lastPercent = percent
        let filled = done * Self.width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: Self.width - filled)
        var line = "\r\(label) [\(bar)] \(percent)% \(done)/\(total)"
        if done == total { line += "\n" }
        FileHandle.standardError.write(Data(line.utf8))
    }
}

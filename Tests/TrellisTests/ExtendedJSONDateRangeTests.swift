import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

final class DateRangeVal: Object {
    @Persisted var i = 0
    @Persisted var date: Date?
}

/// Issue 34, defect 4: every date a file can hold exports, and an imported date exports as the
/// milliseconds it came from. `trellis import` of `{"$date": {"$numberLong": "<Int64.max>"}}`
/// used to succeed, after which `trellis export` and `trellis query` stopped the process
/// ("Double value cannot be converted to Int64"); a far date stored through the Swift API did
/// the same. The CLI runs in a child process, so the test fails (instead of dying) without the
/// fix.
@Suite struct ExtendedJSONDateRangeTests {
    let folder = TemporaryFolder()
    /// The backtracer off: a crashing CLI ends at once with its message.
    static let noBacktrace = ["SWIFT_BACKTRACE": "enable=no"]

    func emptyFile() throws -> URL {
        let url = folder.file("dates.realm")
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: url, objectTypes: [DateRangeVal.self])) }
        return url
    }

    @Test func theLargestMillisecondCountImportsExportsAndQueries() throws {
        let url = try emptyFile()
        let input = folder.url.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let document = #"{"i": 1, "date": {"$date": {"$numberLong": "9223372036854775807"}}}"#
        try Data((document + "\n").utf8).write(to: input.appendingPathComponent("DateRangeVal.json"))

        let imported = try runTrellis(["import", url.path, input.path, "--ejson"], environment: Self.noBacktrace)
        #expect(imported.status == 0, "\(imported.stderr)")
        let out = folder.url.appendingPathComponent("out")
        let exported = try runTrellis(["export", url.path, "--ejson", "--out", out.path], environment: Self.noBacktrace)
        #expect(exported.status == 0, "\(exported.stderr)")
        let line = (try? String(contentsOf: out.appendingPathComponent("DateRangeVal.json"), encoding: .utf8)) ?? ""
        #expect(line.contains(#""date":{"$date":{"$numberLong":"9223372036854775807"}}"#), "\(line)")
        let query = try runTrellis(["query", url.path, "DateRangeVal"], environment: Self.noBacktrace)
        #expect(query.status == 0, "\(query.stderr)")
        #expect(query.stdout.contains("9223372036854775807"), "\(query.stdout)")
    }

    @Test func farDatesStoredThroughTheSwiftAPIExportAndQuery() throws {
        let url = try emptyFile()
        let dates: [Date] = [Date(timeIntervalSince1970: 1e300), Date(timeIntervalSince1970: -1e300),
                             Date(timeIntervalSince1970: .infinity), Date(timeIntervalSince1970: -.infinity),
                             Date(timeIntervalSinceReferenceDate: .nan), .distantFuture, .distantPast]
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [DateRangeVal.self]))
            try realm.write {
                for (i, date) in dates.enumerated() { realm.add(DateRangeVal(value: ["i": i, "date": date])) }
            }
        }
        let out = folder.url.appendingPathComponent("out")
        let exported = try runTrellis(["export", url.path, "--ejson", "--out", out.path], environment: Self.noBacktrace)
        #expect(exported.status == 0, "\(exported.stderr)")
        let lines = ((try? String(contentsOf: out.appendingPathComponent("DateRangeVal.json"), encoding: .utf8)) ?? "")
            .split(separator: "\n")
        #expect(lines.count == dates.count)
        for (millis, index) in [("9223372036854775807", 0), ("-9223372036854775808", 1), ("9223372036854775807", 2),
                                ("-9223372036854775808", 3), ("0", 4)] {
            #expect(lines.contains { $0.contains(#""i":{"$numberLong":"\#(index)"}"#)
                && $0.contains(#"{"$numberLong":"\#(millis)"}"#) }, "date \(index) as \(millis)")
        }
        let all = try runTrellis(["query", url.path, "DateRangeVal"], environment: Self.noBacktrace)
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdout.split(separator: "\n").count == dates.count)
        let later = try runTrellis(["query", url.path, "DateRangeVal", "date > T0:0", "--sort", "date"], environment: Self.noBacktrace)
        #expect(later.status == 0, "\(later.stderr)")

        // Through the model classes too.
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [DateRangeVal.self]))
            for object in realm.objects(DateRangeVal.self) { _ = try ExtendedJSON.document(for: object) }
            _ = realm.objects(DateRangeVal.self).filter("date == %@", Date(timeIntervalSince1970: 1e300)).description
        }
    }

    /// Seeded: any 64-bit count imports, exports as itself or as a count that imports to the same
    /// date, and every stored date exports as a count that imports back to it.
    @Test func millisecondCountsRoundTrip() {
        var generator = SplitMix64(seed: 34)
        var counts: [Int64] = [0, 1, -1, 999, -999, .max, .min, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1,
                               253_402_300_799_999, -62_135_596_800_000]
        for _ in 0..<20_000 {
            let magnitude = Int64.random(in: 0...62, using: &generator)
            counts.append(Int64.random(in: -(1 << magnitude)...(1 << magnitude), using: &generator))
        }
        var exact = 0  // counts exported as themselves
        for count in counts {
            let date = ExtendedJSONDate.date(milliseconds: count)
            let exported = ExtendedJSONDate.milliseconds(of: date)
            if exported == count { exact += 1 }
            #expect(ExtendedJSONDate.date(milliseconds: exported) == date, "\(count) exported as \(exported)")
            // Within about 1,000 years of 1970 a Date resolves every millisecond.
            if count.magnitude < 1 << 45 { #expect(exported == count) }
        }
        #expect(exact > counts.count / 2)
        for _ in 0..<2_000 {
            let date = Date(timeIntervalSinceReferenceDate: Double.random(in: -1e12...1e12, using: &generator))
            let exported = ExtendedJSONDate.milliseconds(of: date)
            let again = ExtendedJSONDate.date(milliseconds: exported)
            #expect(ExtendedJSONDate.milliseconds(of: again) == exported)
            #expect(abs(again.timeIntervalSince(date)) < 0.001)
        }
    }
}

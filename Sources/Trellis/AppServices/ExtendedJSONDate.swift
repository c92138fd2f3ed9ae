import Foundation

/// Dates in Extended JSON: `{"$date": {"$numberLong": "<milliseconds since 1970>"}}`.
///
/// A file holds a `Date` as a `Double` of seconds, so it can hold dates no 64-bit count of
/// milliseconds reaches (`Date(timeIntervalSince1970: 1e300)`), and NaN or infinity written
/// through the Swift API. Every one of them exports: the count saturates at `Int64.min` and
/// `Int64.max`, and NaN is written as 0 (1970-01-01, realm-core's choice when it stores an
/// `NSDate` of NaN). Importing any 64-bit count gives a date that exports as a count which
/// imports to that same date again, so export and import round-trip.
enum ExtendedJSONDate {
    /// The milliseconds since 1970 that Extended JSON writes for `date`, saturated to the 64-bit
    /// range: a count near it that converts back to exactly this date (so an imported date
    /// exports as a count that imports to it again), else the whole milliseconds rounded down.
    static func milliseconds(of date: Date) -> Int64 {
        let milliseconds = date.timeIntervalSince1970 * 1000
        if milliseconds.isNaN { return 0 }
        // 2^63 is the first Double past Int64.max; -2^63 is Int64.min itself.
        if milliseconds >= 0x1p63 { return .max }
        if milliseconds < -0x1p63 { return .min }
        // Far from 1970 a Date's Double of seconds since 2001 is coarser than a millisecond, so
        // several counts give one date: the count nearest to it that gives it back, if any.
        let nearest = Int64(milliseconds.rounded())
        for offset: Int64 in [0, -1, 1, -2, 2] {
            let (candidate, overflow) = nearest.addingReportingOverflow(offset)
            if !overflow, self.date(milliseconds: candidate) == date { return candidate }
        }
        return Int64(milliseconds.rounded(.down))
    }

    /// The date of a count of milliseconds since 1970 (every 64-bit count has one).
    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

import Foundation
import Testing
@testable import Trellis

/// Decimal128's text and NaN as Realm has them (realm-swift CodableTests: `"1.5e2"` decodes
/// and encodes as `"1.5E2"`, `"1234567890e123"` encodes as `"1.23456789E132"`: RLMDecimal128's
/// stringValue drops the zeros ending the digits after the point; Decimal128Tests `testIsNaN`:
/// `Decimal128(value: NSNull())` is the signalling NaN).
@Suite struct Decimal128RealmTextTests {
    @Test func aParsedDecimalKeepsTheDigitsItWasWrittenWith() throws {
        #expect(try Decimal128(string: "1.5e2").stringValue == "1.5E2")
        #expect(try Decimal128(string: "150").stringValue == "150")
        #expect(try Decimal128(string: "12.50").stringValue == "12.5")
        #expect(try Decimal128(string: "1.0e5").stringValue == "1E5")
        #expect(try Decimal128(string: "2.000").stringValue == "2")
        #expect(try Decimal128(string: "1234567890e123").stringValue == "1.23456789E132")
        #expect(try Decimal128(string: "-100.0").stringValue == "-100")
        #expect(try Decimal128(string: "-0.000001").stringValue == "-0.000001")
        #expect(try Decimal128(string: "1E-7").stringValue == "1E-7")
        #expect(try Decimal128(string: "1.5e2") == Decimal128(value: 150))
        // Computed and converted values print as before.
        #expect(Decimal128(value: 150).stringValue == "150")
        #expect((try Decimal128(string: "1.5e2") + Decimal128(value: 1)).stringValue == "151")
    }

    @Test func codableWritesRealmsText() throws {
        let decoded = try JSONDecoder().decode([Decimal128].self, from: Data(#"["1.5e2", "2.50", 3, "1234567890e123"]"#.utf8))
        let encoded = String(decoding: try JSONEncoder().encode(decoded), as: UTF8.self)
        #expect(encoded == #"["1.5E2","2.5","3","1.23456789E132"]"#)
    }

    @Test func nullMakesTheSignallingNaN() {
        let null = Decimal128(value: NSNull())
        #expect(null.isNaN && null.isSignaling && null.isSignalingNaN)
        let quiet = try? Decimal128(string: "NaN")
        #expect(quiet?.isNaN == true && quiet?.isSignaling == false)
    }
}

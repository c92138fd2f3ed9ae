import Foundation
import Testing
@testable import Trellis

@Suite struct Decimal128Tests {
    @Test func textIsRealmsForm() throws {
        #expect(try Decimal128(string: "1.23456789E132").stringValue == "1.23456789E132")
        #expect(Decimal128(stringLiteral: "3.14").stringValue == "3.14")
        #expect(Decimal128(integerLiteral: 100).stringValue == "100")
        #expect(Decimal128(stringLiteral: "-2.5").stringValue == "-2.5")
        #expect(Decimal128(stringLiteral: "0.000001").stringValue == "0.000001")
        #expect(Decimal128(stringLiteral: "1E-7").stringValue == "1E-7")
        #expect(Decimal128(integerLiteral: 0).stringValue == "0")
    }

    @Test func codableUsesTheTextForm() throws {
        let value = try Decimal128(string: "1.23456789E132")
        let data = try JSONEncoder().encode([value])
        #expect(String(decoding: data, as: UTF8.self) == #"["1.23456789E132"]"#)
        #expect(try JSONDecoder().decode([Decimal128].self, from: data) == [value])
        #expect(try JSONDecoder().decode([Decimal128].self, from: Data("[2.5]".utf8)) == [Decimal128(stringLiteral: "2.5")])
    }

    @Test func numericAndStrideable() {
        var value: Decimal128 = 5
        value.negate()
        #expect(value == -5)
        #expect(-value == 5)
        #expect(Decimal128(integerLiteral: 3).distance(to: 10) == 7)
        #expect(Decimal128(integerLiteral: 3).advanced(by: 2) == 5)
        #expect(Array(stride(from: Decimal128(integerLiteral: 0), to: 1, by: Decimal128(stringLiteral: "0.25"))).count == 4)
        #expect(Decimal128(integerLiteral: -7).magnitude == 7)
    }

    @Test func valueInitialiserGivesNaNForNullAndBadText() {
        #expect(Decimal128(value: NSNull()).isNaN)
        #expect(Decimal128(value: "not a number").isNaN)
        #expect(Decimal128(value: 12).stringValue == "12")
    }
}

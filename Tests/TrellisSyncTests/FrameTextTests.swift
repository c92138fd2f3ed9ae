import Foundation
import Testing
@testable import TrellisSyncProtocol
import TrellisTestSupport

/// Session 38 (issue 39): upload and download frames written straight to text, uploads read
/// straight into their changes, and a stored document's texts written without a `JSONValue`
/// dictionary in between: the same text and the same messages as through `JSONValue`, on random
/// messages with a fixed seed, and every other form of upload left to the general reader.
struct FrameTextTests {
    static func message(_ round: Int, _ random: inout SplitMix64) -> SyncMessage {
        round % 2 == 0
            ? .upload(.init(uploadId: Int64(round), firstChangeId: round % 4 == 0 ? Int64(round - 3) : nil,
                            changes: (0..<Int.random(in: 0...5, using: &random)).map { _ in SyncCodingTests.change(&random) }))
            : .download(.init(changes: (0..<Int.random(in: 0...5, using: &random)).map { _ in
                SyncCodingTests.serverChange(&random) }, serverVersion: Int64(round),
                completesSubscriptionVersion: round % 3 == 0 ? 7 : nil, hasMore: round % 5 == 0))
    }

    @Test func framesWrittenStraightAreTheTextTheirJSONValuesWrite() throws {
        var random = SplitMix64(seed: 3_838)
        for round in 0..<600 {
            let message = Self.message(round, &random)
            #expect(SyncCoding.encode(message) == message.fastJSON?.jsonText, "round \(round)")
            if case .upload(let upload) = message {
                for change in upload.changes { #expect(change.jsonText == change.json.jsonText, "round \(round)") }
            }
        }
    }

    @Test func uploadsReadStraightAreTheUploadsTheGeneralReaderReads() throws {
        var random = SplitMix64(seed: 3_839)
        for round in stride(from: 0, to: 600, by: 2) {
            guard case .upload(let upload) = Self.message(round, &random) else { continue }
            // As this module writes it, as JSONEncoder writes it, and with white space between tokens.
            let written = SyncCoding.encode(.upload(upload))
            let spaced = written.replacingOccurrences(of: ",\"", with: " ,\n \"").replacingOccurrences(of: "{", with: "{ ")
            for text in [written, SyncCoding.encodeWithCodable(.upload(upload)), spaced] {
                var bytes = text
                #expect(bytes.withUTF8 { JSONText.parseUpload($0) } == upload, "round \(round)")
                #expect(try SyncCoding.decode(text) == .upload(upload), "round \(round)")
            }
        }
    }

    @Test func uploadsInAnyOtherFormAreLeftToTheGeneralReader() throws {
        let change = #"{"className":"A","primaryKey":1,"kind":"insert","timestamp":"t","fields":[]}"#
        let texts = [
            #"{"upload":{"_0":{"uploadId":1,"changes":[],"extra":2}}}"#,             // unknown key: ignored
            #"{"upload":{"_0":{"uploadId":1,"uploadId":2,"changes":[]}}}"#,          // a key twice: the last
            #"{"upload":{"_0":{"changes":[]}}}"#,                                    // missing uploadId
            #"{"upload":{"_0":{"uploadId":1.5,"changes":[]}}}"#,                     // not an integer
            #"{"upload":{"_0":{"uploadId":1,"changes":[\#(change.replacingOccurrences(of: "insert", with: "weird"))]}}}"#,
            #"{"upload":{"_0":{"uploadId":1,"changes":[\#(change.replacingOccurrences(of: "[]", with: #"[{"set":{"name":"a","value":1},"x":{}}]"#))]}}}"#,
            #"{"upload":{"_0":{"uploadId":1,"changes":[\#(change.replacingOccurrences(of: "[]", with: #"[{"list":{"name":"a","base":1,"value":[]}}]"#))]}}}"#,
            #"{"upload":{"_0":{"uploadId":1,"changes":[]}}} x"#,                    // text after the frame
            #"{"upload":{"_0":{"uploadId":1,"changes":[]}},"hello":{}}"#,           // two frames' keys
            #"{"upload":{"_0":{"uploadId":1,"changes":[]"#,                         // cut off
        ]
        for text in texts {
            var bytes = text
            #expect(bytes.withUTF8 { JSONText.parseUpload($0) } == nil, "\(text)")
            // The general reader's outcome, as before: a message or the same refusal.
            let general = Result { try JSONValue(jsonText: text) }.flatMap { json in Result { try SyncMessage(fastJSON: json) } }
            switch (Result { try SyncCoding.decode(text) }, general) {
            case (.success(let message), .success(let expected?)): #expect(message == expected, "\(text)")
            case (.failure, .failure): break
            case (.success, .success(nil)), (.failure, .success(nil)): break  // left to Codable
            default: Issue.record("\(text): the reader and the general reader differ")
            }
        }
        // A key given twice keeps its last value, as the general reader keeps it.
        #expect(try SyncCoding.decode(texts[1]) == .upload(.init(uploadId: 2, changes: [])))
    }

    @Test func storedTextsAreTheTextsOfTheirJSONValues() throws {
        var random = SplitMix64(seed: 3_840)
        for round in 0..<300 {
            var document = [String: JSONValue](), timestamps = [String: String]()
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let name = SyncCodingTests.texts.randomElement(using: &random) ?? "x"
                document[name] = SyncCodingTests.value(&random)
                timestamps[name] = SyncCodingTests.texts.randomElement(using: &random) ?? ""
            }
            let stored = DocumentMerge.Stored(document: document, timestamps: timestamps)
            #expect(stored.documentText == JSONValue.object(document).jsonText, "round \(round)")
            #expect(stored.timestampsText == JSONValue.object(timestamps.mapValues(JSONValue.string)).jsonText, "round \(round)")
        }
    }
}

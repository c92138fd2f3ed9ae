import Foundation

/// A download frame's documents as the frame's text holds them. The client keeps each
/// downloaded document in its mirror as JSON text; copying the frame's bytes costs far less
/// than writing the parsed document as text again (session 36: that writing was ~10 % of the
/// client's CPU in an initial download).
public struct FrameDocumentText: Sendable {
    /// The frame's UTF-8 text.
    private let bytes: [UInt8]
    /// Per change of the download, in order, where its document is in `bytes`.
    private let ranges: [Range<Int>?]

    init(bytes: [UInt8], ranges: [Range<Int>?]) {
        self.bytes = bytes
        self.ranges = ranges
    }

    /// The JSON text of change `index`'s document, exactly as the frame holds it (it parses to
    /// the change's `document`); nil when that is not an object (none, null).
    public func document(at index: Int) -> ArraySlice<UInt8>? {
        guard ranges.indices.contains(index), let range = ranges[index] else { return nil }
        return bytes[range]
    }
}

extension SyncCoding {
    /// ``decode(_:)``, and for a download frame also where each change's document is in the
    /// frame's text (nil for other frames).
    public static func decodeNotingDocumentText(_ text: String) throws
        -> (message: SyncMessage, documents: FrameDocumentText?)
    {
        let bytes = Array(text.utf8)
        let (json, ranges) = try bytes.withUnsafeBufferPointer { try JSONText.parseNotingDocuments($0) }
        guard let message = try SyncMessage(fastJSON: json) else {
            return (try JSONDecoder().decode(SyncMessage.self, from: Data(bytes)), nil)
        }
        // One range per change object; anything else (a change that is not an object) and the
        // ranges are not used.
        guard case .download(let download) = message, ranges.count == download.changes.count else {
            return (message, nil)
        }
        return (message, FrameDocumentText(bytes: bytes, ranges: ranges))
    }
}

import Foundation

extension SchemaShapeError: LocalizedError {
    /// The message, so `error.localizedDescription` of an `any Error` says what is wrong with
    /// the schema (not Foundation's "The operation could not be completed.").
    public var errorDescription: String? { message }
}

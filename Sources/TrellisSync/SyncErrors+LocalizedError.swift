import Foundation

// `catch { print(error.localizedDescription) }` (what Realm's documentation prints) reads an
// `any Error`, which goes through Foundation, not the errors' own `localizedDescription`
// members: without these conformances it printed "The operation could not be completed.".

extension SyncError: LocalizedError {
    /// The message: what failed and what to do.
    public var errorDescription: String? { message }
}

extension AppError: LocalizedError {
    /// The message: what failed and what to do.
    public var errorDescription: String? { message }
}

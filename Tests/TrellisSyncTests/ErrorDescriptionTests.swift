import Foundation
import Testing
@testable import TrellisSync
import TrellisSyncProtocol

/// Every public error of the sync products says what failed through
/// `error.localizedDescription` of an `any Error`, as `Realm.Error` does (issue 17).
@Suite struct ErrorDescriptionTests {
    func describe(_ error: any Error) -> String { error.localizedDescription }

    @Test func syncAndAppErrorsCaughtAsAnyErrorGiveTheirMessage() {
        let sync = SyncError(code: .clientSessionError, message: "The server closed the session: log in again.")
        let app = AppError(code: .badRequest, message: "'x' is not a URL: check AppConfiguration.baseURL.",
                           httpStatusCode: nil)
        #expect(describe(sync) == "The server closed the session: log in again.")
        #expect(describe(app) == "'x' is not a URL: check AppConfiguration.baseURL.")
    }

    @Test func aSchemaWithoutATitleSaysSoThroughLocalizedDescription() {
        do {
            _ = try SchemaShape(document: .object([:]))
            Issue.record("a schema without a title was read")
        } catch {
            #expect(error.localizedDescription == "A collection schema needs a \"title\" (the class name).")
        }
    }
}

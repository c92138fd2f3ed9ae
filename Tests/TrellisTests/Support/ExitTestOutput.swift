import Testing

/// What an exit test's child process wrote to standard error (a trap's message), as text.
func exitTestStandardError(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

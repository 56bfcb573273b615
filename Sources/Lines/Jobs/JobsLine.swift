import IMKit

/// The jobs line (rootCateID 9): interview invitations, and a simpler page without the dropdown
/// menu and quick replies.
enum JobsLine: BusinessLine {
    static let id = "jobs"
    static let displayName = "Jobs"
    static let version = "1.0.0"

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(JobsPage.self)
        try registrar.registerBuilder(InterviewBuilder())
        try registrar.registerPicture("logo", base64: JobsPictures.logo, alt: "The jobs line's badge")
        // The answer form is reached from inside a chat only, never from a push or the web.
        try registrar.registerRoute("jobs://interview/:id/answer", allowExternal: false) { request in
            "answer form for interview \(request.parameters["id"] ?? "?")"
        }
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: JobsLine.self)
}

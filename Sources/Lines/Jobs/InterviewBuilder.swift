import IMKit

/// An interview invitation: what a `jobs.interview` message carries.
struct Interview: Codable, Sendable, Hashable {
    var company: String
    var position: String
    /// When, as the recruiter wrote it, e.g. "2026-11-25 10:00".
    var time: String
    var place: String
}

/// `jobs.interview`: a card with the company, position, time and place.
struct InterviewBuilder: MessageBuilder {
    let key = "jobs.interview"

    func model(for interview: Interview, layout: MessageLayout) throws -> MessageModel {
        MessageModel(
            content: interview,
            lines: layout.card(title: "💼 Interview: \(interview.position)", fields: [
                CardField("Company", interview.company),
                CardField("Time", interview.time),
                CardField("Place", interview.place),
            ]) + ["[tap to accept or decline]"],
            summary: "[Interview] \(interview.company)")
    }
}

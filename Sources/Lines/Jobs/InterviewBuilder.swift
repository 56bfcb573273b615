import IMKit

/// An interview invitation: what a `jobs.interview` message carries.
struct Interview: Codable, Sendable, Hashable {
    var company: String
    var position: String
    /// When, as the recruiter wrote it, e.g. "2026-11-25 10:00".
    var time: String
    var place: String

    /// What the candidate answers the recruiter, accepting or declining.
    func answer(accepting: Bool) -> String {
        accepting ? "I accept the interview at \(company) on \(time)." : "Sorry, I have to decline the interview at \(company)."
    }
}

/// `jobs.interview`: a card with the position, the company, the time and place, and two
/// buttons that answer the recruiter in the chat, on whichever page the card is shown.
struct InterviewBuilder: MessageBuilder {
    let key = "jobs.interview"

    func model(for interview: Interview, layout: MessageLayout) throws -> MessageModel {
        let card = MessageCard(
            title: "💼 Interview: \(interview.position)",
            subtitle: interview.company,
            fields: [CardField("Time", interview.time), CardField("Place", interview.place)],
            image: .picture("logo"),
            badge: CardBadge("Invitation"),
            buttons: [CardButton(id: "accept", label: "Accept"), CardButton(id: "decline", label: "Decline")])
        return MessageModel(content: interview, card: card, layout: layout, summary: "[Interview] \(interview.company)")
    }

    func didTapButton(_ button: String, content interview: Interview, message: ShownMessage, context: ChatContext) -> TapResult {
        guard button == "accept" || button == "decline" else { return .ignored }
        guard !message.isOutgoing else { return .failed("you sent this invitation; the candidate answers it") }
        let accepting = button == "accept"
        do {
            try context.send(TextContent(text: interview.answer(accepting: accepting)), with: BuiltinBuilders.Text())
        } catch {
            return .failed("could not answer: \(error)")
        }
        return .handled("\(accepting ? "accepted" : "declined") interview at \(interview.company), \(interview.time)")
    }
}

import IMKit

/// An interview invitation: what a `jobs.interview` message carries.
struct Interview: Codable, Sendable, Hashable {
    var company: String
    var position: String
    /// When, as the recruiter wrote it, e.g. "2026-11-25 10:00".
    var time: String
    var place: String
    /// Other times the recruiter offers, e.g. `["2026-11-26 14:00"]`; absent in invitations
    /// sent before candidates could choose.
    var otherTimes: [String]?
    /// The time the candidate accepted, once they did: the card's revision says so.
    var accepted: String?
    /// `true` once the candidate declined.
    var declined: Bool?

    /// Every time offered, the first one first.
    var times: [String] { [time] + (otherTimes ?? []) }

    /// What the candidate answers the recruiter, accepting or declining.
    func answer(accepting: Bool) -> String {
        accepting ? "I accept the interview at \(company) on \(time)." : "Sorry, I have to decline the interview at \(company)."
    }
}

/// `jobs.interview`: a card with the position, the company, the time and place, the times the
/// candidate may choose from, and two buttons: Accept (with the time chosen) and Decline. Each
/// answers the recruiter in the chat and changes the card in place (a revision: Accepted with
/// the time, or Declined), on whichever page the card is shown.
struct InterviewBuilder: MessageBuilder {
    let key = "jobs.interview"

    func model(for interview: Interview, layout: MessageLayout) throws -> MessageModel {
        let title = "💼 Interview: \(interview.position)"
        let card: MessageCard
        if let accepted = interview.accepted {
            card = MessageCard(title: title, subtitle: interview.company, fields: [CardField("Time", accepted), CardField("Place", interview.place)],
                               image: .picture("logo"), badge: CardBadge("Accepted", tone: .positive))
        } else if interview.declined == true {
            card = MessageCard(title: title, subtitle: interview.company, fields: [CardField("Place", interview.place)],
                               image: .picture("logo"), badge: CardBadge("Declined", tone: .negative))
        } else {
            // The times offered, the first chosen already; an option's id is its place in the list.
            let times = interview.times.enumerated().map { CardOption(id: "t\($0.offset + 1)", label: $0.element) }
            card = MessageCard(
                title: title,
                subtitle: interview.company,
                fields: [CardField("Place", interview.place)],
                image: .picture("logo"),
                badge: CardBadge("Invitation"),
                inputs: [.choice(id: "time", label: "Time", options: times, required: true, value: "t1")],
                buttons: [CardButton(id: "accept", label: "Accept", submits: true), CardButton(id: "decline", label: "Decline")])
        }
        return MessageModel(content: interview, card: card, layout: layout, summary: "[Interview] \(interview.company)")
    }

    func didTapButton(_ button: String, content interview: Interview, message: ShownMessage, context: ChatContext) -> TapResult {
        guard button == "decline" else { return .ignored }
        var declined = interview
        declined.declined = true
        return answer(interview, revised: declined, accepting: false, message: message, context: context)
    }

    /// Accept, at the time chosen among those offered.
    func didSubmit(_ button: String, values: CardValues, content interview: Interview, message: ShownMessage, context: ChatContext) -> TapResult {
        guard button == "accept", let chosen = values["time"], let index = Int(chosen.dropFirst()), interview.times.indices.contains(index - 1) else {
            return .ignored
        }
        var accepted = interview
        accepted.accepted = interview.times[index - 1]
        return answer(interview, revised: accepted, accepting: true, message: message, context: context)
    }

    /// Tells the recruiter, then shows the answer on the card where it stands.
    private func answer(_ interview: Interview, revised: Interview, accepting: Bool, message: ShownMessage, context: ChatContext) -> TapResult {
        guard !message.isOutgoing else { return .failed("you sent this invitation; the candidate answers it") }
        let time = revised.accepted ?? interview.time
        var said = interview
        said.time = time
        do {
            try context.send(TextContent(text: said.answer(accepting: accepting)), with: BuiltinBuilders.Text())
            try context.revise(message, to: revised, with: self)
        } catch {
            return .failed("could not answer: \(error)")
        }
        return .handled("\(accepting ? "accepted" : "declined") interview at \(interview.company), \(time)")
    }

    var samples: [MessageSample<Interview>] {
        let invitation = Interview(company: "58 Tech", position: "iOS engineer", time: "2026-11-25 10:00", place: "Building A, 3F",
                                   otherTimes: ["2026-11-26 14:00"])
        var accepted = invitation
        accepted.accepted = "2026-11-26 14:00"
        var declined = invitation
        declined.declined = true
        return [MessageSample("invitation", invitation), MessageSample("accepted", accepted), MessageSample("declined", declined)]
    }
}

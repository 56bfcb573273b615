import IMKit

/// The jobs carrier page: no dropdown menu and no quick replies, a "Résumé" bar item, and a tap
/// on an invitation accepts it (a second tap declines it), answering the recruiter in the chat
/// (the card's own buttons do the same on any page).
final class JobsPage: CarrierPage {
    /// Answers given to invitations on this page, by message id.
    private var answers: [String: Bool] = [:]

    override var title: String { "Jobs · \(context.peerID)" }

    override var disabledComponents: ComponentSet { [.dropdownMenu, .quickReplies] }

    override func bottomBarItems() -> [String] { ["Résumé"] }

    override func didSelectBottomBarItem(_ item: String) -> TapResult {
        guard item == "Résumé" else { return .ignored }
        return .handled("shared your résumé with \(context.peerID)")
    }

    override func didTap(_ message: ShownMessage) -> TapResult {
        guard let interview = message.model?.content as? Interview else {
            return super.didTap(message)
        }
        let accepted = !(answers[message.envelope.id] ?? false)
        answers[message.envelope.id] = accepted
        do {
            try context.send(TextContent(text: interview.answer(accepting: accepted)), with: BuiltinBuilders.Text())
        } catch {
            return .failed("could not answer: \(error)")
        }
        return .handled("\(accepted ? "accepted" : "declined") interview at \(interview.company), \(interview.time)")
    }
}

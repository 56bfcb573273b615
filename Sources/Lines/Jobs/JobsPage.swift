import IMKit

/// The jobs carrier page: no dropdown menu and no quick replies, a "send résumé" bar item, and
/// taps on invitations accept or decline them.
final class JobsPage: CarrierPage {
    /// Answers given to invitations on this page, by message id.
    private var answers: [String: Bool] = [:]

    override var title: String { "Jobs · \(context.peer)" }

    override var disabledComponents: ComponentSet { [.dropdownMenu, .quickReplies] }

    override func bottomBarItems() -> [String] { ["Résumé"] }

    override func didTap(_ message: ShownMessage) -> TapResult {
        guard let interview = message.model?.content as? Interview else {
            return super.didTap(message)
        }
        let accepted = !(answers[message.envelope.id] ?? false)
        answers[message.envelope.id] = accepted
        return .handled("\(accepted ? "accepted" : "declined") interview at \(interview.company), \(interview.time)")
    }
}

import IMKit

/// The chat page as it was before lines had their own: built into the host, it always opens.
/// It shows built-in messages only, so a message that broke a line's page cannot break it, and
/// taps on placeholders do nothing.
final class LegacyPage: CarrierPage {
    override var title: String { "Chat with \(context.peerID)" }
}

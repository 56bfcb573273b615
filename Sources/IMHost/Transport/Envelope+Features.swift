/// What a host announces it takes beyond version 1's first kinds, and a person's reaction: the
/// additions of recalls, reactions, typing and online signals (``Envelope/recall(ids:at:)``,
/// ``Envelope/react(_:)``, ``Envelope/typing``, ``Envelope/online(_:)``).
extension Envelope {
    /// What a host can take beyond version 1's first kinds, as its receipts and messages announce
    /// it (`features`, an addition). A peer's host gets an envelope of a later kind only once it
    /// named the feature: an older host would refuse it as a kind it does not know.
    public enum Feature {
        /// Takes `recall` envelopes, and answers them with `recalled` receipts.
        public static let recall = "recall"
        /// Takes `react` envelopes, and answers them with `reacted` receipts.
        public static let react = "react"
        /// Takes `revise` envelopes (a card changed in place), and answers them with `revised` receipts.
        public static let revise = "revise"
        /// Takes `typing` signals.
        public static let typing = "typing"
        /// Takes `online` signals.
        public static let online = "online"
        /// What this host announces, in the order it writes them.
        public static let announced = [recall, react, typing, online, revise]
        /// At most one typing signal to a peer this often, in milliseconds.
        public static let typingEvery: Int64 = 3_000
        /// How long a typing signal is shown after it came, in milliseconds.
        public static let typingShown: Int64 = 6_000
        /// How often an online host says so again, in milliseconds.
        public static let onlineEvery: Int64 = 60_000
        /// How long a peer counts as online after it last said so, in milliseconds.
        public static let onlineFor: Int64 = 90_000
        /// A feature's name as read: 1 to 32 of `a-z 0-9 -`.
        static func isValid(_ name: String) -> Bool { RefusalCode.isValid(name) }
        /// The most names a receipt's `features` is read for.
        static let most = 32
    }

    /// A person's reaction to a message: which (its sender and id), with what (one of
    /// ``emoji``, or `""`: taken back), and when.
    public struct Reaction: Sendable, Equatable {
        public var id: String
        public var from: String
        public var emoji: String
        public var at: Int64

        /// The reactions a person may give: a short set, the same on every host.
        public static let emoji = ["👍", "❤️", "😂", "😮", "😢", "🙏"]

        public init(id: String, from: String, emoji: String, at: Int64) {
            self.id = id
            self.from = from
            self.emoji = emoji
            self.at = at
        }
    }
}

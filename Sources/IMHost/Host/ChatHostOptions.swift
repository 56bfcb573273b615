extension ChatHost {
    /// How to start a host.
    public struct Options: Sendable {
        /// Where breadcrumbs go while line code runs.
        public enum Breadcrumbs: Sendable {
            /// None: for hosts that run no line code (`imhost route`, `imhost plugins`).
            case none
            /// A breadcrumb of this process's own in `<data>/run`: a death is found by the next start.
            case own
            /// The breadcrumb file a supervisor reserved for this worker, handed over open.
            case attach(fd: Int32)
        }

        /// The signed-in user; default host.json's `user`.
        public var user: String?
        /// Where conversations, quarantine and crash records are kept; default host.json's `data`.
        public var dataFolder: String?
        /// Keep conversations on disk (else in memory).
        public var durable: Bool
        /// The executable to start again as the plugin scanner: this one, by default.
        public var scanner: String
        public var breadcrumbs: Breadcrumbs
        /// Quarantine entries to apply besides `<data>/quarantine.json`: those a supervisor could
        /// not write down.
        public var quarantine: [Quarantine.Hold]
        /// The command that holds the user's connection to the broker, when host.json has a
        /// transport and this process is to talk to it (a chat's worker, `imhost sync`); `nil`:
        /// this process works through the database only.
        public var connection: String?

        public init(user: String? = nil, dataFolder: String? = nil, durable: Bool = true,
                    scanner: String = "/proc/self/exe", breadcrumbs: Breadcrumbs = .own, quarantine: [Quarantine.Hold] = [],
                    connection: String? = nil) {
            self.connection = connection
            self.user = user
            self.dataFolder = dataFolder
            self.durable = durable
            self.scanner = scanner
            self.breadcrumbs = breadcrumbs
            self.quarantine = quarantine
        }
    }
}

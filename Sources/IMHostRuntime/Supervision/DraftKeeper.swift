import IMHost

/// The supervisor's side of drafts: a line typed into the chat that sends something (text, or
/// `/send`) is stored before the worker, and any line code, sees it, so a worker that crashes
/// before it is queued loses nothing: the next worker takes it up. The supervisor runs no line
/// code; it opens the user's store only when the first such line is typed.
final class DraftKeeper {
    private let dataFolder: String
    private let user: String
    private let output: Output
    private var store: MessageStore?
    /// Why drafts are not kept, once said.
    private var unavailable: String?

    init(dataFolder: String, user: String, output: Output) {
        self.dataFolder = dataFolder
        self.user = user
        self.output = output
    }

    /// Keeps `typed` for the chat with `peer` when it sends something; returns the draft's id.
    func keep(_ typed: String, for peer: String?) -> Int64? {
        guard let peer, unavailable == nil, case .success(let action) = ChatVerb.parse(typed: typed) else { return nil }
        switch action {
        case .text(let text) where !text.isEmpty: break
        case .send: break
        default: return nil
        }
        do {
            if store == nil { store = try MessageStore(dataFolder: dataFolder, user: user) }
            return try store?.addDraft(peer: peer, typed: typed, at: Clock.now())
        } catch {
            // The worker still gets it; only a crash before it is queued would lose it.
            unavailable = "\(error)"
            output.diagnostic("imhost chat: what you type is not kept as a draft (\(error)); a crash of the chat worker before it is sent loses it")
            return nil
        }
    }
}

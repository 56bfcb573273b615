#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost

/// The supervisor's side of drafts: an act that sends something (a text, `/send`) is stored
/// before the worker, and any line code, sees it, so a worker that crashes before it is queued
/// loses nothing: the next worker takes it up. The supervisor runs no line code; it opens the
/// user's store only when the first such act comes.
///
/// A draft holds the act as JSON (``ChatAction``). One kept by an imhost before acts were values
/// holds the line as it was typed: plain text is taken up as text, and a verb is dropped.
package final class DraftKeeper {
    private let dataFolder: String
    private let user: String
    private let output: Output
    private var store: MessageStore?
    /// Why drafts are not kept, once said.
    private var unavailable: String?

    package init(dataFolder: String, user: String, output: Output) {
        self.dataFolder = dataFolder
        self.user = user
        self.output = output
    }

    /// Keeps `action` for the chat with `peer` when it sends something; returns the draft's id.
    package func keep(_ action: ChatAction, for peer: String?) -> Int64? {
        guard let peer, unavailable == nil, action.sendsSomething, let json = try? JSONEncoder().encode(action) else { return nil }
        do {
            if store == nil { store = try MessageStore(dataFolder: dataFolder, user: user) }
            return try store?.addDraft(peer: peer, typed: String(decoding: json, as: UTF8.self), at: Clock.now())
        } catch {
            // The worker still gets it; only a crash before it is queued would lose it.
            unavailable = "\(error)"
            output.diagnostic("imhost chat: what you type is not kept as a draft (\(error)); a crash of the chat worker before it is sent loses it")
            return nil
        }
    }

    /// The act a draft holds; `nil` for one that holds no act this host takes.
    package static func action(of kept: String) -> ChatAction? {
        if let action = try? JSONDecoder().decode(ChatAction.self, from: Data(kept.utf8)) { return action }
        // Kept as typed, by an older imhost.
        if kept.hasPrefix("//") { return .text(String(kept.dropFirst())) }
        return kept.hasPrefix("/") || kept.isEmpty ? nil : .text(kept)
    }
}

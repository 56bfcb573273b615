@_spi(Host) import IMHost
import IMHostRuntime
import IMKit

/// What the page says to the person about a reply of the chat: brief, in their words (times,
/// states, names; no message numbers, routes, lines or verbs), or nothing when the page itself
/// shows it (a bubble appears, older messages load). The developer's words, the terminal's
/// (``ChatWords``), go with it for `imhost web --dev`.
enum WebWords {
    /// A notice for the page.
    struct Notice: Equatable {
        /// For the person; `nil`: the page shows it, or only a developer needs it.
        var text: String?
        /// The terminal's words, for the developer's view.
        var dev: String
        /// Something went wrong (a `role=alert` notice), rather than news (`role=status`).
        var alert: Bool
        /// Words for the input, when it is empty: what a recalled message said, to edit again.
        var draft: String? = nil
        /// The peer whose chat (not this one) a message arrived in: the page may notify.
        var arrived: String? = nil

        /// The notice as the event stream carries it: `{"text":…,"dev":…,"alert":…,"draft":…}`.
        var json: String {
            "{\"text\":" + (text.map(JSONNode.quoted) ?? "null") + ",\"dev\":" + JSONNode.quoted(dev) + ",\"alert\":\(alert)"
                + (draft.map { ",\"draft\":" + JSONNode.quoted($0) } ?? "") + (arrived.map { ",\"arrived\":" + JSONNode.quoted($0) } ?? "") + "}"
        }
    }

    static func notice(_ reply: ChatReply) -> Notice {
        let dev = ChatWords.lines(reply).map { TerminalText.safe($0, newlines: false) }.joined(separator: "\n")
        let (text, alert) = person(reply)
        var notice = Notice(text: text, dev: dev, alert: alert || ChatWords.isDiagnostic(reply))
        if case .recalled(_, _, let said?, _) = reply { notice.draft = said }
        if case .arrived(let peer, _, _, _) = reply { notice.arrived = peer }
        return notice
    }

    /// The person's words, and whether something went wrong.
    private static func person(_ reply: ChatReply) -> (String?, Bool) {
        switch reply {
        case .tapped(_, _, let tap), .menuChose(let tap), .barChose(let tap):
            return self.tap(tap)
        case .blocked(let peer): return ("You blocked \(peer). Their messages will not reach you.", false)
        case .unblocked(let peer): return ("You unblocked \(peer). Their new messages will reach you.", false)
        case .cleared(_, let count):
            return ("Chat cleared on this device: \(count) message\(count == 1 ? "" : "s") removed. Your other devices keep theirs.", false)
        case .clearAsks, .reportAsks: return (nil, false)
        case .reported(let peer, true): return ("You reported \(peer). The app's team will look at it.", false)
        case .reported(let peer, false): return ("Your report of \(peer) is kept on this device: it reaches the app's team once this app is connected to its server.", false)
        case .retried: return ("Sending again.", false)
        case .reacted, .peerTyping, .peerSeen: return (nil, false)
        case .recalled(_, let peer, _, let takes):
            return (takes == false ? "Recalled here. \(peer)'s app is older and still shows it." : "Recalled.", false)
        case .connection(true, _): return ("Going online.", false)
        case .connection(false, _): return ("You are offline. What you send waits until you are back online.", false)
        case .notice(_, let gist): return notice(gist)
        case .arrived(let peer, let count, _, _): return ("\(count == 1 ? "A new message" : "\(count) new messages") from \(peer).", false)
        case .fleetApplied: return ("This chat was updated.", false)
        case .fleetAppliedNotReopened: return ("This chat could not be updated. Open it again from your chats.", true)
        case .draftTakenUp: return ("The chat restarted; what you had typed is being sent.", false)
        case .refused(let refusal): return (refused(refusal), true)
        case .conversations, .found, .reloaded, .openedPage, .opened, .why, .quickSent, .menu, .older, .route, .read:
            return (nil, false)
        }
    }

    private static func tap(_ tap: ChatReply.Tap) -> (String?, Bool) {
        switch tap {
        case .handled(let what): (what, false)
        case .placeholder, .ignored: ("Nothing to do here.", false)
        case .failed: ("That did not work. Try again later.", true)
        }
    }

    private static func notice(_ gist: ChatReply.Gist) -> (String?, Bool) {
        switch gist {
        case .connected: (nil, false)
        case .connectedAgain: ("Back online.", false)
        case .offline: ("Connection lost. Reconnecting…", true)
        case .elsewhere: ("This chat is open in another window or on another device, so it is offline here.", true)
        case .deviceRemoved: ("This device was removed from your account. Messages no longer reach it.", true)
        case .givenUp: ("Some messages could not be delivered and were given up.", true)
        case .caughtUp: (nil, false)
        case .technical: (nil, false)
        }
    }

    private static func refused(_ refusal: ChatRefusal) -> String {
        switch refusal.code {
        case .noMessage, .noButtons, .noSuchButton, .noSuchItem, .noComponent, .notRetryable:
            "That is no longer on this page. It may have changed; look again."
        case .quickRepliesUnavailable: "Quick replies cannot be sent on this page."
        case .textRefused, .notSent: "Not sent: " + (refusal.detail ?? "the message was refused") + "."
        case .notStored: "Not sent: it could not be saved on this device."
        case .photoTooLarge: "Not sent: the photo is larger than \(refusal.limit.map(FailureWords.size) ?? "a photo may be")."
        case .notAPhoto, .unreadableFile: "Not sent: that file is not a photo that can be sent (PNG, JPEG or WebP)."
        case .notAFile: "Not sent: that file cannot be sent (\(refusal.detail ?? "")).".replacingOccurrences(of: "()", with: "")
        case .notAVoice: "Not sent: that recording cannot be sent (at most \(Voice.secondsLimit) seconds of Opus sound)."
        case .noChat, .noSignIn, .badPeer: "This chat cannot be used. Open it again from your chats."
        case .failed, .reloadRefused, .reopenFailed: "Something went wrong with this chat; it goes on as before."
        case .notOwnMessage: "Only the sender can recall a message."
        case .recallTooLate: "Too late to recall: a message can be recalled within \(FailureWords.duration(seconds: refusal.limit ?? 0)) of sending it."
        case .recalledAlready: "That message was recalled already."
        case .notQuotable: "That message was recalled: there is nothing to reply to."
        case .notReactable: "That message was recalled."
        case .notAReaction: "That is not a reaction this chat offers."
        }
    }
}

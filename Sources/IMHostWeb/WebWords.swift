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
        /// A card's inputs whose values were refused: the message's number, and each input's
        /// id with what the page says beside it.
        var inputs: (message: Int, errors: [(input: String, text: String)])? = nil

        static func == (one: Notice, other: Notice) -> Bool {
            one.json == other.json
        }

        /// The notice as the event stream carries it: `{"text":…,"dev":…,"alert":…,"draft":…}`.
        var json: String {
            "{\"text\":" + (text.map(JSONNode.quoted) ?? "null") + ",\"dev\":" + JSONNode.quoted(dev) + ",\"alert\":\(alert)"
                + (draft.map { ",\"draft\":" + JSONNode.quoted($0) } ?? "") + (arrived.map { ",\"arrived\":" + JSONNode.quoted($0) } ?? "")
                + (inputs.map { inputs in
                    ",\"inputs\":{\"message\":\(inputs.message),\"errors\":[" + inputs.errors.map {
                        "{\"input\":" + JSONNode.quoted($0.input) + ",\"text\":" + JSONNode.quoted($0.text) + "}"
                    }.joined(separator: ",") + "]}"
                } ?? "") + "}"
        }
    }

    static func notice(_ reply: ChatReply, _ say: WebLanguage = .english) -> Notice {
        let dev = ChatWords.lines(reply).map { TerminalText.safe($0, newlines: false) }.joined(separator: "\n")
        let (text, alert) = person(reply, say)
        var notice = Notice(text: text, dev: dev, alert: alert || ChatWords.isDiagnostic(reply))
        if case .recalled(_, _, let said?, _) = reply { notice.draft = said }
        if case .arrived(let peer, _, _, _) = reply { notice.arrived = peer }
        if case .refused(let refusal) = reply, refusal.code == .invalidValues, let number = refusal.number {
            notice.inputs = (number, (refusal.inputs ?? []).map { ($0.input, PageHTML.inputError($0, say)) })
        }
        return notice
    }

    /// The person's words, and whether something went wrong.
    private static func person(_ reply: ChatReply, _ say: WebLanguage) -> (String?, Bool) {
        switch reply {
        case .tapped(_, _, let tap), .menuChose(let tap), .barChose(let tap):
            return self.tap(tap, say)
        case .blocked(let peer): return (say("You blocked {0}. Their messages will not reach you.", peer), false)
        case .unblocked(let peer): return (say("You unblocked {0}. Their new messages will reach you.", peer), false)
        case .cleared(_, let count):
            return (say(count == 1 ? "Chat cleared on this device: {0} message removed. Your other devices keep theirs."
                        : "Chat cleared on this device: {0} messages removed. Your other devices keep theirs.", "\(count)"), false)
        case .clearAsks, .reportAsks: return (nil, false)
        case .reported(let peer, true): return (say("You reported {0}. The app's team will look at it.", peer), false)
        case .reported(let peer, false): return (say("Your report of {0} is kept on this device: it reaches the app's team once this app is connected to its server.", peer), false)
        case .retried: return (say("Sending again."), false)
        case .reacted, .peerTyping, .peerSeen: return (nil, false)
        case .recalled(_, let peer, _, let takes):
            return (takes == false ? say("Recalled here. {0}'s app is older and still shows it.", peer) : say("Recalled."), false)
        case .connection(true, _): return (say("Going online."), false)
        case .connection(false, _): return (say("You are offline. What you send waits until you are back online."), false)
        case .notice(_, let gist): return notice(gist, say)
        case .arrived(let peer, let count, _, _): return (count == 1 ? say("A new message from {0}.", peer) : say("{0} new messages from {1}.", "\(count)", peer), false)
        case .fleetApplied: return (say("This chat was updated."), false)
        case .fleetAppliedNotReopened: return (say("This chat could not be updated. Open it again from your chats."), true)
        case .draftTakenUp: return (say("The chat restarted; what you had typed is being sent."), false)
        case .refused(let refusal): return (refused(refusal, say), true)
        case .conversations, .found, .reloaded, .openedPage, .opened, .why, .quickSent, .menu, .older, .route, .read:
            return (nil, false)
        }
    }

    private static func tap(_ tap: ChatReply.Tap, _ say: WebLanguage) -> (String?, Bool) {
        switch tap {
        // What a line's hook said is the line's words.
        case .handled(let what): (what, false)
        case .placeholder, .ignored: (say("Nothing to do here."), false)
        case .failed: (say("That did not work. Try again later."), true)
        }
    }

    private static func notice(_ gist: ChatReply.Gist, _ say: WebLanguage) -> (String?, Bool) {
        switch gist {
        case .connected: (nil, false)
        case .connectedAgain: (say("Back online."), false)
        case .offline: (say("Connection lost. Reconnecting…"), true)
        case .elsewhere: (say("This chat is open in another window or on another device, so it is offline here."), true)
        case .deviceRemoved: (say("This device was removed from your account. Messages no longer reach it."), true)
        case .givenUp: (say("Some messages could not be delivered and were given up."), true)
        case .caughtUp: (nil, false)
        case .technical: (nil, false)
        }
    }

    private static func refused(_ refusal: ChatRefusal, _ say: WebLanguage) -> String {
        switch refusal.code {
        case .invalidValues: say("Not sent: some answers on the card need a change.")
        case .staleCard: say("Not sent: this card changed since you filled it in. Look at it again.")
        case .noMessage, .noButtons, .noSuchButton, .noSuchItem, .noComponent, .notRetryable:
            say("That is no longer on this page. It may have changed; look again.")
        case .quickRepliesUnavailable: say("Quick replies cannot be sent on this page.")
        case .textRefused, .notSent: say("Not sent: {0}.", refusal.detail ?? say("the message was refused"))
        case .notStored: say("Not sent: it could not be saved on this device.")
        case .photoTooLarge: say("Not sent: the photo is larger than {0}.", refusal.limit.map(FailureWords.size) ?? say("a photo may be"))
        case .notAPhoto, .unreadableFile: say("Not sent: that file is not a photo that can be sent (PNG, JPEG or WebP).")
        case .notAFile: refusal.detail.map { say("Not sent: that file cannot be sent ({0}).", $0) } ?? say("Not sent: that file cannot be sent.")
        case .notAVoice: say("Not sent: that recording cannot be sent (at most {0} seconds of Opus sound).", "\(Voice.secondsLimit)")
        case .noChat, .noSignIn, .badPeer: say("This chat cannot be used. Open it again from your chats.")
        case .failed, .reloadRefused, .reopenFailed: say("Something went wrong with this chat; it goes on as before.")
        case .notOwnMessage: say("Only the sender can recall a message.")
        case .recallTooLate: say("Too late to recall: a message can be recalled within {0} of sending it.", say.duration(seconds: refusal.limit ?? 0))
        case .recalledAlready: say("That message was recalled already.")
        case .notQuotable: say("That message was recalled: there is nothing to reply to.")
        case .notReactable: say("That message was recalled.")
        case .notAReaction: say("That is not a reaction this chat offers.")
        }
    }
}

import IMHost
import IMKit

/// The platform's words for what a chat says (``ChatReply``, ``ChatRefusal``), in English: what a
/// terminal's chat prints, what a scenario's transcript shows. Lines are returned as they are
/// worded, quoting what lines and peers said as they said it: whoever prints them makes them
/// safe for where they go.
package enum ChatWords {
    /// The lines that say `reply`.
    package static func lines(_ reply: ChatReply) -> [String] {
        switch reply {
        case .conversations(let list): StoreViews.lines(list)
        case .found(let words, let hits): StoreViews.lines(hits, words: words)
        case .reloaded(let file, nil): ["reloaded \(file)"]
        case .reloaded(let file, let route?): ["reloaded \(file): \(route.reason): \(route.explanation)"]
        case .openedPage(let legacy, let line, let route):
            ["opened the \(legacy ? "legacy" : line ?? "base") page: \(route.reason): \(route.explanation)"]
        case .opened(let what): ["opened \(what)"]
        case .tapped(let number, nil, let tap): ["tap #\(number): \(self.tap(tap, number: number))"]
        case .tapped(let number, let button?, let tap): ["tap #\(number) \(TerminalText.safe(button)): \(self.tap(tap, number: number))"]
        case .why(let number, let key, let causes, let state, let failure):
            ["why #\(number) (\(key)): " + (causes.isEmpty ? "it shows normally, through its builder" : causes.map(\.description).joined(separator: "; and ")),
             "  state: \(state.rawValue)" + (failure.map { ": " + FailureWords.sentence($0, retry: "/retry \(number)") } ?? "")]
        case .quickSent(let number, let phrase): ["quick reply \(number): sent \"\(phrase)\""]
        case .menu(let items): ["menu: " + items.enumerated().map { "[\($0.offset + 1)] \($0.element)" }.joined(separator: "  ")]
        case .menuChose(let tap): ["menu: \(self.tap(tap, number: 0))"]
        case .barChose(let tap): ["bar: \(self.tap(tap, number: 0))"]
        case .older(0): ["/more: no older messages; the whole conversation is shown"]
        case .older(let count): ["more: \(count) older message\(count == 1 ? "" : "s") shown"]
        case .route(let url, let route): ["route: \(url)", "  \(route.reason): \(route.explanation)"]
        case .read(let count): ["read: \(count) message\(count == 1 ? "" : "s") marked read"]
        case .retried(let number): ["retry: #\(number) is queued again"]
        case .reacted(let number, ""): ["react #\(number): your reaction is taken back"]
        case .reacted(let number, let emoji): ["react #\(number): \(emoji)"]
        case .recalled(let number, let peer, let text, let takes):
            ["recalled #\(number): " + (takes == false ? "gone from this chat and your devices; \(peer)'s imhost is older and keeps it"
                : takes == nil ? "gone from this chat and your devices; it leaves \(peer)'s once their imhost answers"
                : "gone from this chat, your devices and \(peer)'s")
             + (text.map { "; it said: \(TerminalText.safe($0, newlines: false))" } ?? "")]
        case .blocked(let peer): ["blocked \(peer): their messages are refused and not stored; /unblock \(peer) takes them again"]
        case .unblocked(let peer): ["unblocked \(peer): their messages are taken again (those refused meanwhile are not)"]
        case .cleared(let peer, let count):
            ["cleared the chat with \(peer) on this device: \(count) message\(count == 1 ? "" : "s") left it (your other devices keep theirs, and catching up with them does not bring these back)"]
        case .clearAsks: ["menu: Clear removes every message of this chat from this device; type /clear to do it"]
        case .reported(let peer, true): ["reported \(peer) to the app's operator, with their last messages in this chat (sent when you are online)"]
        case .reported(let peer, false): ["report of \(peer) kept on this device: host.json names no broker, so it reaches the app's operator only once it does"]
        case .reportAsks: ["menu: Report sends the app's operator a report of this person, with their last \(UserReport.messageLimit) messages here; type /report to do it"]
        case .peerTyping(let peer): ["\(peer) is typing…"]
        case .peerSeen(let peer, true, _): ["\(peer) is online"]
        case .peerSeen(let peer, false, let last?): ["\(peer) was last seen \(StoreViews.time(last)) (UTC)"]
        case .peerSeen(let peer, false, nil): ["\(peer) is not online"]
        case .connection(let online, let answer): ["\(online ? "/online" : "/offline"): " + connection(answer)]
        case .notice(let words, _): [words]
        case .arrived(let peer, let count, let unread, let more):
            ["\(count)\(more ? " more" : "") new message\(count == 1 ? "" : "s") from \(peer)\(unread.map { " (\($0) unread)" } ?? ""): imhost chat --peer \(peer), or /chats"]
        case .fleetApplied(let version, let summary, let route):
            ["fleet configuration version \(version) applied (\(summary)): \(route.reason): \(route.explanation)"]
        case .fleetAppliedNotReopened(let version, let why): ["imhost: fleet configuration version \(version) applied; cannot reopen the chat: \(why)"]
        case .draftTakenUp(.text(let text)): ["taking up what you typed before the chat restarted: \(text)"]
        case .draftTakenUp(let action): ["taking up what you typed before the chat restarted: \(typed(action))"]
        case .refused(let refusal): [line(refusal)]
        }
    }

    /// Whether `reply` is the host's diagnostic (standard error), not an answer in the chat.
    package static func isDiagnostic(_ reply: ChatReply) -> Bool {
        switch reply {
        case .refused(let refusal): refusal.isDiagnostic
        case .fleetAppliedNotReopened: true
        default: false
        }
    }

    /// What is wrong with an input's value, after its id: `is required`, `is after 18:00`.
    package static func inputError(_ error: ChatRefusal.InputError) -> String {
        let limit = TerminalText.safe(error.limit ?? "", newlines: false)
        return switch error.code {
        case CardValueError.Code.required.name: "is required"
        case CardValueError.Code.tooShort.name: "needs at least \(limit) characters"
        case CardValueError.Code.tooLong.name: "takes at most \(limit) characters"
        case CardValueError.Code.notAnOption.name: "is not one of its options"
        case CardValueError.Code.notADate.name: "is not a date written YYYY-MM-DD"
        case CardValueError.Code.notATime.name: "is not a time written HH:MM"
        case CardValueError.Code.tooEarly.name: "is before \(limit)"
        case CardValueError.Code.tooLate.name: "is after \(limit)"
        case CardValueError.Code.oneValue.name: "takes one value"
        case CardValueError.Code.noSuchInput.name: "is not an input of this card"
        default: "is refused (\(TerminalText.safe(error.code, newlines: false)))"
        }
    }

    /// What a tap of message `number` (a menu's or a bar's item: 0) did.
    package static func tap(_ tap: ChatReply.Tap, number: Int) -> String {
        switch tap {
        case .placeholder: "nothing happens: it shows as a placeholder (/why \(number) says why)"
        case .ignored(button: true): "nothing happens (the card's builder does not act on this button)"
        case .ignored(button: false): "nothing happens (neither the page nor the message's builder acts on it)"
        case .handled(let what): what
        case .failed(let why): "failed: \(why)"
        }
    }

    /// Where being online stands.
    package static func connection(_ answer: ChatReply.Connection) -> String {
        switch answer {
        case .online: "online: connecting"
        case .offline: "offline: what you send waits, queued, until /online"
        case .noTransport(let file):
            "there is no transport in \(file): nothing is sent anywhere, and your messages stay queued; add \"transport\" to chat with others"
        case .heldElsewhere(let holder):
            "\(holder.map { "\($0) holds this user's connection" } ?? "this process does not hold the connection"): it sends what you send; this chat works through the database"
        }
    }

    /// Why an action was refused, in one line.
    package static func line(_ refusal: ChatRefusal) -> String {
        let verb = refusal.verb, number = refusal.number ?? 0, detail = refusal.detail ?? "", file = TerminalText.safe(refusal.file ?? "")
        switch refusal.code {
        case .noChat: return "no chat is open; open one first, e.g. /open im://chat?rootCateID=1&cateID=12&peer=u1"
        case .noMessage: return "\(verb): there is no message #\(number) on screen"
        case .noButtons: return "\(verb): message #\(number) has no buttons; /tap \(number) taps it"
        case .noSuchButton:
            return "\(verb): message #\(number) has no button '\(TerminalText.safe(refusal.component ?? ""))'; its buttons: \((refusal.items ?? []).joined(separator: ", "))"
        case .invalidValues:
            let each = (refusal.inputs ?? []).map { "\(TerminalText.safe($0.input)) " + inputError($0) }.joined(separator: "; ")
            return "\(verb): nothing sent: \(each); give each a good value and press it again, e.g. /tap \(number) \(TerminalText.safe(refusal.component ?? "BUTTON")) day=2026-12-05"
        case .staleCard: return "\(verb): nothing sent: message #\(number)'s card changed since it was shown; look at it again"
        case .noComponent: return "\(verb): this page has no \(refusal.component ?? "such component") (\(detail))"
        case .quickRepliesUnavailable: return "\(verb): quick replies are unavailable: the page has no input bar to send them (\(detail))"
        case .noSuchItem: return "\(verb): there is no \(refusal.component ?? "item") \(number)"
        case .notRetryable: return "\(verb): #\(number) is not a failed message of yours in this chat"
        case .noSignIn: return "\(verb): nobody is signed in"
        case .badPeer: return "\(verb): the peer id \(detail)"
        case .textRefused: return detail
        case .notSent: return "\(verb): not sent: \(detail)"
        case .notStored: return "\(verb): not stored: \(detail)"
        case .unreadableFile: return "\(verb): not sent: cannot read \(file): \(detail)"
        case .photoTooLarge: return "\(verb): not sent: \(file) is larger than a photo may be: \(refusal.limit ?? 0) bytes (limits.photoBytes in host.json)"
        case .notAPhoto: return "\(verb): not sent: \(file) is not a photo this host sends: \(detail)"
        case .notAFile: return "\(verb): not sent: \(file): \(detail)"
        case .notAVoice: return "\(verb): not sent: \(file) is not a voice message this host sends (WebM or Ogg with Opus, at most \(Voice.secondsLimit) s and \(Voice.byteLimit >> 20) MiB): \(detail)"
        case .failed: return "\(verb): \(detail)"
        case .reloadRefused: return "imhost: reload refused: \(detail); keeping the last good configuration"
        case .reopenFailed: return "imhost: reload: cannot reopen the chat: \(detail)"
        case .notOwnMessage: return "\(verb): #\(number) is \(detail)'s message: only its sender recalls a message"
        case .recallTooLate:
            return "\(verb): #\(number) was sent \(detail) ago: a message can be recalled within \(FailureWords.duration(seconds: refusal.limit ?? 0)) of sending it (limits.recallSeconds in host.json)"
        case .recalledAlready: return "\(verb): #\(number) was recalled already"
        case .notQuotable: return "\(verb): #\(number) was recalled: there is nothing of it to reply to"
        case .notReactable: return "\(verb): #\(number) was recalled: there is nothing of it to react to"
        case .notAReaction:
            return "\(verb): \(TerminalText.safe(detail)) is not a reaction; react with one of \(Envelope.Reaction.emoji.joined(separator: " ")), or /react \(number) alone to take yours back"
        }
    }

    /// An action as a person would type it in a terminal's chat, for a scenario's transcript.
    package static func typed(_ action: ChatAction) -> String {
        switch action {
        case .text(let text): "type \"\(text)\""
        case .send(let key, let payload): "/send \(key) \(payload)"
        case .receive(let key, let payload): "/recv \(key) \(payload)"
        case .withPhotos("photo", "{}", let files, false) where files.count == 1: "/photo \(files[0])"
        case .withPhotos(let key, let payload, let files, let receive):
            // A scenario's files by name: the transcript is the same wherever it runs.
            "\(receive ? "/recv" : "/send") \(key) \(payload) with photos \(files.map(FileSystem.baseName).joined(separator: ", "))"
        case .photo(let data): "/photo (a picture of \(data.count) bytes)"
        case .voiceFile(let file): "/voice \(FileSystem.baseName(file))"
        case .fileFrom(let file): "/file \(FileSystem.baseName(file))"
        case .file(let name, let data): "/file (\(name), \(data.count) bytes)"
        case .voice(let data): "/voice (a recording of \(data.count) bytes)"
        case .tap(let number, let button): "/tap \(number)" + (button.map { " \($0)" } ?? "")
        case .submit(let number, let button, let values, _):
            "/tap \(number) \(button)" + values.keys.sorted().map { " \($0)=" + (values[$0] ?? []).joined(separator: ",") }.joined()
        case .why(let number): "/why \(number)"
        case .quick(let number): "/quick \(number)"
        case .menu(let number): "/menu" + (number.map { " \($0)" } ?? "")
        case .bar(let number): "/bar \(number)"
        case .more(let count): "/more \(count)"
        case .open(let url): "/open \(url)"
        case .search(let words): "/search \(words)"
        case .retry(let number): "/retry \(number)"
        case .reply(let number, let text): "/reply \(number) \(text)"
        case .recall(let number): "/recall \(number)"
        case .react(let number, let emoji): "/react \(number)" + (emoji.isEmpty ? "" : " " + emoji)
        case .seen(let through): "(seen up to #\(through))"
        case .block(let peer): "/block" + (peer.map { " \($0)" } ?? "")
        case .unblock(let peer): "/unblock" + (peer.map { " \($0)" } ?? "")
        case .clear: "/clear"
        case .report: "/report"
        case .typing: "(typing)"
        default: action.verb
        }
    }
}

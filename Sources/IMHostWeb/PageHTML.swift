@_spi(Host) import IMHost
import IMHostRuntime
import IMKit

/// The page value (``PageView``) as HTML: the one place the browser's front end turns text into
/// markup. Every string from a line, a peer or the store goes through ``escape(_:)``; nothing
/// else is ever inserted. Elements that act carry the act they post (`data-do` and its data:
/// ``WebAction``), so the page's script needs no knowledge of lines.
///
/// The page speaks to the person: names, times and states. What a developer needs (message
/// numbers, why this page, the line, a message's causes, how a peer drew it) is drawn only for
/// `imhost web --dev`, in elements of class `dev`, which the page's toggle shows or hides.
public enum PageHTML {
    /// `text` as HTML text or an attribute value: `&`, `<`, `>`, `"` and `'` become references,
    /// and control characters (other than a newline and a tab) their visible escapes.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n", "\t": out.unicodeScalars.append(scalar)
            default:
                if TerminalText.needsEscape(scalar, newlines: false) {
                    out += escape(TerminalText.safe(String(scalar), newlines: false))
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// The page's body: header, components, messages, input bar. The chat's document frame
    /// (``WebDocument/chat(page:)``) holds it; a live update replaces it. The platform's words
    /// are in `say`'s language; the line's are the line's.
    public static func body(_ page: PageView, dev: Bool = false, say: WebLanguage = .english) -> String {
        var html = "<header class=\"title" + (page.isLegacy ? " legacy" : "") + "\" data-peer=\"" + escape(page.conversation) + "\"><h1>" + escape(page.title) + "</h1>"
        if dev {
            let tag = page.isLegacy ? "legacy page" : (page.lineID.map { "\($0) page" } ?? "base page")
            html += "<span class=\"tag dev" + (page.isLegacy ? " legacy" : "") + "\">" + escape(tag) + "</span>"
            if let version = page.lineVersion { html += "<span class=\"tag dev version\">version " + escape(version) + "</span>" }
            html += "<details class=\"route dev\"><summary>why this page</summary>" + escape(page.route.reason) + ": " + escape(page.route.explanation)
                + (page.route.source.map { " (" + escape($0) + ")" } ?? "") + "</details>"
        }
        html += "</header>"
        // The bar and the menu share one row: on a phone the bar's items are behind one button.
        var tools = ""
        for component in page.components where component.kind != .inputBar {
            switch component {
            case .bottomBar, .menu: tools += self.component(component, say)
            default: html += self.component(component, say)
            }
        }
        if !tools.isEmpty {
            let toggle = page.component(.bottomBar) != nil
                ? "<button type=\"button\" class=\"tools-toggle\" aria-expanded=\"false\" aria-controls=\"bar\">" + say("Tools") + "</button>" : ""
            html += "<div class=\"tools\">" + toggle + tools + "</div>"
        }
        html += "<main class=\"messages\" aria-label=\"" + say("Messages") + "\">" + earlier(page.total - page.messages.count, say)
        if page.messages.isEmpty { html += "<p class=\"empty\">" + say("No messages yet.") + "</p>" }
        for message in page.messages { html += self.message(message, peer: page.conversation, dev: dev, say) }
        html += "</main>"
        if let warning = page.peerPlaceholder { html += peerPlaceholder(warning, dev: dev, say) }
        if page.component(.inputBar) != nil {
            html += "<form class=\"input\" data-send aria-label=\"" + say("Write a message") + "\"><button type=\"button\" class=\"attach\" data-file aria-label=\""
                + say("Send a file") + "\" title=\"" + say("Send a file") + "\">📎</button>"
                + "<input name=\"text\" autocomplete=\"off\" dir=\"auto\" enterkeyhint=\"send\" placeholder=\"" + say("Message") + "\" aria-label=\"" + say("Message") + "\">"
                + "<button type=\"submit\">" + say("Send") + "</button></form><input type=\"file\" class=\"file-pick\" hidden>"
        } else {
            html += "<p class=\"no-input\">" + say("This page has no input bar.") + "</p>"
        }
        return html
    }

    /// What the person is told above where they write and send when the peer's app will show
    /// this page's cards as a placeholder (its receipts said it has no such line); they may send
    /// them still. The keys for `--dev`.
    static func peerPlaceholder(_ warning: PageView.PeerPlaceholder, dev: Bool = false, _ say: WebLanguage = .english) -> String {
        let words = switch warning.code {
        case .noLine: say("{0}'s app has no {1} line: {0} will see its cards as a placeholder.", escape(warning.peer), escape(warning.line))
        }
        return "<p class=\"peer-placeholder\" role=\"note\">" + words
            + (dev ? " <small class=\"dev\">(" + escape(warning.keys.joined(separator: ", ")) + ")</small>" : "") + "</p>"
    }

    /// The control that loads earlier messages, when `count` are not shown.
    static func earlier(_ count: Int, _ say: WebLanguage = .english) -> String {
        guard count > 0 else { return "" }
        return "<button class=\"older\" data-do=\"more\" data-count=\"20\">" + say(count == 1 ? "Show {0} earlier message" : "Show {0} earlier messages", "\(count)") + "</button>"
    }

    /// What changed in a page its tabs show (``PageChanges``), as the page's script applies it:
    /// a JSON array of `{"op":"append","html":…}` (a message after the last),
    /// `{"op":"replace","id":"m3","html":…}`, `{"op":"remove","id":"m1"}` and
    /// `{"op":"earlier","html":…}` (the control for earlier messages; empty when none are left),
    /// each message's HTML drawn as ``body(_:dev:)`` draws it.
    public static func changes(_ changes: [PageChanges.Change], peer: String, dev: Bool = false, say: WebLanguage = .english) -> String {
        let ops = changes.map { change -> String in
            switch change {
            case .added(let message):
                return "{\"op\":\"append\",\"html\":" + JSONNode.quoted(self.message(message, peer: peer, dev: dev, say)) + "}"
            case .changed(let message):
                return "{\"op\":\"replace\",\"id\":\"m\(message.number)\",\"html\":" + JSONNode.quoted(self.message(message, peer: peer, dev: dev, say)) + "}"
            case .removed(let number):
                return "{\"op\":\"remove\",\"id\":\"m\(number)\"}"
            case .earlier(let count):
                return "{\"op\":\"earlier\",\"html\":" + JSONNode.quoted(earlier(count, say)) + "}"
            }
        }
        return "[" + ops.joined(separator: ",") + "]"
    }

    /// Why a line's item that answered "ignored" is drawn disabled.
    static let ignoredWhy = "This does nothing in this chat."

    /// A bar or menu item as a button that posts `verb` with its number; a line's item that
    /// answered "ignored" is disabled, and says why.
    static func item(_ item: PageView.Item, verb: String, _ say: WebLanguage = .english) -> String {
        let kind = item.byLine ? "line" : "platform"
        // The platform's item names are the platform's words; a line's are the line's.
        let name = item.byLine ? escape(item.name) : escape(say(item.name))
        guard !item.ignored else {
            return "<button class=\"\(kind) ignored\" disabled title=\"" + say(ignoredWhy) + "\">" + name
                + "<span class=\"why\"> (" + say(String(ignoredWhy.dropLast())) + ")</span></button>"
        }
        // The platform's Clear asks the person first (the page's dialog), then clears.
        if !item.byLine, item.name == PageView.clearItem { return "<button class=\"platform\" data-ask=\"clear\">" + name + "</button>" }
        // So does Report.
        if !item.byLine, item.name == PageView.reportItem { return "<button class=\"platform\" data-ask=\"report\">" + name + "</button>" }
        return "<button class=\"\(kind)\" data-do=\"\(verb)\" data-item=\"\(item.number)\">" + name + "</button>"
    }

    static func component(_ component: PageView.Component, _ say: WebLanguage = .english) -> String {
        switch component {
        case .topPost(let post):
            guard let post else { return "" }
            return "<section class=\"top-post\" aria-label=\"" + say("Pinned") + "\" dir=\"auto\"><strong>" + escape(post.title) + "</strong>"
                + (post.detail.isEmpty ? "" : "<span>" + escape(post.detail) + "</span>") + "</section>"
        case .quickReplies(let phrases, let available):
            let buttons = phrases.enumerated().map { index, phrase in
                "<button" + (available ? " data-do=\"quick\" data-item=\"\(index + 1)\"" : " disabled") + " dir=\"auto\">" + escape(phrase) + "</button>"
            }
            return "<nav class=\"quick-replies" + (available ? "" : " unavailable") + "\" aria-label=\"" + say("Quick replies") + "\">"
                + buttons.joined() + "</nav>"
        case .bottomBar(let items):
            return "<nav class=\"bottom-bar\" id=\"bar\" aria-label=\"" + say("Tools") + "\">" + items.filter(\.isShown).map { item in
                // The platform's Photo item picks a file; the page's script sends its bytes.
                if !item.byLine, item.name == "Photo" {
                    return "<button class=\"platform\" data-photo>" + say("Photo") + "</button>"
                        + "<input type=\"file\" class=\"photo-file\" accept=\"image/png,image/jpeg,image/webp\" hidden>"
                }
                // The platform's Voice item records in the browser (the page's script), at most
                // Voice.secondsLimit seconds, and sends the recording.
                if !item.byLine, item.name == "Voice" {
                    return "<button class=\"platform\" data-voice data-limit=\"\(Voice.secondsLimit)\" aria-pressed=\"false\">" + say("Voice") + "</button>"
                }
                // The platform's Location item sends where the browser says the person is.
                if !item.byLine, item.name == "Location" { return "<button class=\"platform\" data-location>" + say("Location") + "</button>" }
                return self.item(item, verb: "bar", say)
            }.joined() + "</nav>"
        case .menu(let items):
            return "<nav class=\"chat-menu\" aria-label=\"" + say("Menu") + "\"><details class=\"menu\"><summary><span aria-hidden=\"true\">☰ </span>" + say("Menu") + "</summary>"
                + items.filter(\.isShown).map { self.item($0, verb: "menu", say) }.joined() + "</details></nav>"
        case .inputBar:
            return ""
        }
    }

    static func message(_ message: PageView.Message, peer: String, dev: Bool = false, _ say: WebLanguage = .english) -> String {
        let side = message.isOutgoing ? "sent" : "received"
        // Each message is a stop for the keyboard (the page's script moves between them with the
        // arrow keys); its buttons follow it.
        var html = "<article class=\"message \(side)\" id=\"m\(message.number)\" data-number=\"\(message.number)\" tabindex=\"0\">"
        html += "<p class=\"meta\">" + (dev ? "<span class=\"dev number\">#\(message.number)</span> " : "")
            + "<span class=\"who\">" + (message.isOutgoing ? say("You") : escape(message.envelope.from)) + "</span> · " + time(message.envelope.timestamp)
        if let before = message.sentBefore { html += " · <a href=\"#m\(before)\">" + say("sent earlier") + "</a>" }
        // A card changed in place says so, by whom and when, on both sides.
        if let revised = message.revised {
            let who = revised.by == peer ? escape(peer) : say("you")
            html += " · <span class=\"revised\">" + say("updated by {0} at {1}", who, time(revised.at)) + "</span>"
        }
        html += "</p>"
        if let quote = message.reply { html += self.quote(quote, peer: peer, say) }
        switch message.body {
        case .text("") where !message.photos.isEmpty, .lines([]) where !message.photos.isEmpty:
            // A photo without a caption: the photo is the message.
            break
        case .text(let text):
            html += "<div class=\"bubble text\" dir=\"auto\">" + TextHTML.html(text, say) + "</div>"
        case .voice(let voice):
            html += self.voice(message.voice, said: voice, number: message.number, peer: peer, say)
        case .location(let place):
            html += location(place, say)
        case .file(let said):
            html += self.file(message.file, said: said, number: message.number, peer: peer, say)
        case .image(let image):
            // The address is a link only when it is one whole web address; nothing is fetched.
            let pieces = TextHTML.pieces(image.url)
            html += "<p class=\"bubble image\">" + say("Picture") + " \(max(0, image.width))×\(max(0, image.height)): "
                + (pieces.count == 1 && pieces[0].isLink ? TextHTML.html(image.url) : escape(image.url)) + "</p>"
        case .lines(let lines):
            // A line's own view (IMKit 1.0–1.2), laid out in columns: drawn as laid out.
            html += "<pre class=\"bubble lines\" data-do=\"tap\" data-message=\"\(message.number)\" role=\"button\" tabindex=\"0\" dir=\"auto\">" + escape(lines.joined(separator: "\n"))
            if let folded = message.folded { html += "\n<span class=\"folded\">" + escape(PageView.foldMarker(folded)) + "</span>" }
            html += "</pre>"
        case .card(let card):
            html += self.card(card, message: message, peer: peer, say)
        case .recalled:
            html += "<p class=\"bubble recalled\" role=\"note\">" + (message.isOutgoing ? say("You recalled a message") : say("{0} recalled a message", escape(message.envelope.from))) + "</p>"
        case .placeholder(let why):
            html += "<details class=\"bubble placeholder\"><summary>" + escape(say(MessagePresenter.placeholderText))
                + (dev ? " <small class=\"dev\">(" + escape(why.short) + ")</small>" : "") + "</summary><p>"
                + (dev ? escape(message.causes.isEmpty ? why.description : message.causes.map(\.description).joined(separator: "; and "))
                       : say("This app cannot show this kind of message yet."))
                + "</p></details>"
        }
        if message.body.degrade == nil {
            for (index, slot) in message.photosAfterBody {
                html += "<figure class=\"photo\">" + photo(slot, index: index, number: message.number, peer: peer, inCard: false, alt: photoAlt(slot, message: message, say), say) + "</figure>"
            }
        }
        if message.isOutgoing { html += state(message, dev: dev, say) }
        if !message.reactions.isEmpty { html += reactions(message.reactions, peer: peer, say) }
        if message.body != .recalled { html += actions(message, peer: peer, say) }
        if message.isOutgoing, let drawn = message.peerDrawn {
            // How the peer drew it, as its read receipt said: its words escaped. The person hears
            // only that the peer could not see it.
            if dev {
                html += "<p class=\"drawn dev" + (drawn.isPlaceholder ? " placeholder" : "") + "\">" + escape(drawn.said(at: message.envelope.to)) + "</p>"
            } else if drawn.isPlaceholder {
                html += "<p class=\"drawn placeholder\">" + say("{0}'s app cannot show this message.", escape(message.envelope.to)) + "</p>"
            }
        }
        return html + "</article>"
    }

    /// A message's reactions, under it: each emoji with who gave it.
    static func reactions(_ reactions: [PageView.Reaction], peer: String, _ say: WebLanguage = .english) -> String {
        "<ul class=\"reactions\" aria-label=\"" + say("Reactions") + "\">" + reactions.map { reaction in
            let who = reaction.people.map { $0 == peer ? escape(peer) : say("You") }.joined(separator: ", ")
            let mine = reaction.people.contains { $0 != peer } ? " data-mine" : ""
            return "<li\(mine) title=\"" + who + "\">" + escape(reaction.emoji) + " <span class=\"who\">" + who + "</span></li>"
        }.joined() + "</ul>"
    }

    /// A reply's quote of the message it answers: who wrote it and its first words, a link to
    /// it (the page's script loads earlier messages when it is not shown yet).
    static func quote(_ quote: PageView.Quote, peer: String, _ say: WebLanguage = .english) -> String {
        let who = quote.from == peer ? escape(peer) : say("You")
        let words: String = switch quote.excerpt {
        case .text(let text): escape(text)
        case .photo(let caption?): say("Photo: {0}", escape(caption))
        case .photo(nil): say("Photo")
        case .voice(let seconds): say("Voice {0}", duration(seconds))
        case .location(let name): name.isEmpty ? say("Location") : say("Location: {0}", escape(name))
        case .file(let name): say("File: {0}", escape(name))
        case .image: say("Picture")
        case .recalled: say("Recalled message")
        case .placeholder: say("A message this app cannot show")
        case .missing: say("A message not on this device")
        }
        let body = "<span class=\"quote-who\">" + who + "</span> <span class=\"quote-text\" dir=\"auto\">" + words + "</span>"
        guard let number = quote.number else { return "<p class=\"quote missing\">" + body + "</p>" }
        return "<a class=\"quote\" href=\"#m\(number)\" data-quote=\"\(number)\" aria-label=\"" + say("Reply to {0}: {1}. Go to that message", who, words.replacingOccurrences(of: "\"", with: "&quot;")) + "\">" + body + "</a>"
    }

    /// What a person can do with a message: reply to it; recall their own, while they may (the
    /// page's script takes the button away when that time is up).
    static func actions(_ message: PageView.Message, peer: String, _ say: WebLanguage = .english) -> String {
        // React opens the short set the page's script draws once for every message (a change
        // stays small): the one given is pressed, and pressing it again takes it back.
        var html = "<div class=\"actions\"><button type=\"button\" class=\"reply\" data-reply=\"\(message.number)\">" + say("Reply") + "</button>"
            + "<button type=\"button\" class=\"react\" data-react=\"\(message.number)\" aria-expanded=\"false\">" + say("React") + "</button>"
        if let until = message.recallableUntil {
            html += "<button type=\"button\" class=\"recall\" data-do=\"recall\" data-message=\"\(message.number)\" data-until=\"\(until)\">" + say("Recall") + "</button>"
        }
        return html + "</div>"
    }

    /// A length in seconds as a person reads it: `0:12`, `1:05:00`.
    static func duration(_ seconds: Int) -> String {
        let s = max(0, seconds)
        let pad = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return s >= 3600 ? "\(s / 3600):" + pad(s / 60 % 60) + ":" + pad(s % 60) : "\(s / 60):" + pad(s % 60)
    }

    /// A place: its name, where it is, and a link to it on OpenStreetMap (opened only when the
    /// person follows it; nothing is fetched for the page).
    static func location(_ place: LocationContent, _ say: WebLanguage = .english) -> String {
        var html = "<div class=\"bubble location\"><strong dir=\"auto\">" + escape(place.name.isEmpty ? say("Location") : place.name) + "</strong>"
        let lat = place.latitude, lon = place.longitude
        if lat.isFinite, lon.isFinite, abs(lat) <= 90, abs(lon) <= 180 {
            let map = "https://www.openstreetmap.org/?mlat=\(lat)&mlon=\(lon)#map=16/\(lat)/\(lon)"
            html += "<span class=\"coordinates\">\(lat), \(lon)</span><a href=\"" + escape(map) + "\" rel=\"noopener noreferrer\" target=\"_blank\">" + say("Open map") + "</a>"
        } else {
            html += "<span class=\"coordinates\">" + say("No valid position") + "</span>"
        }
        return html + "</div>"
    }

    /// Where the page fetches photo `index` of message `number` of the chat with `peer`: from
    /// this host's own store, through its own server (nothing is fetched from anywhere else).
    public static func photoAddress(peer: String, number: Int, index: Int) -> String {
        "/photo?peer=" + WebDocument.percentEncoded(peer) + "&n=\(number)&i=\(index)"
    }

    /// Where the page fetches the recording of voice message `number` of the chat with `peer`:
    /// from this host's own store, through its own server.
    public static func voiceAddress(peer: String, number: Int) -> String {
        "/voice?peer=" + WebDocument.percentEncoded(peer) + "&n=\(number)"
    }

    /// A voice message: a player of the recording it carries, with the length decoded from it;
    /// why it is not played; or, for one that only names a `url` (never fetched), its length
    /// as its sender said.
    static func voice(_ slot: VoiceSlot?, said: VoiceContent, number: Int, peer: String, _ say: WebLanguage = .english) -> String {
        switch slot {
        case .voice(let voice)?:
            return "<div class=\"bubble voice\"><audio controls preload=\"none\" src=\"" + escape(voiceAddress(peer: peer, number: number))
                + "\" aria-label=\"" + escape(say("Voice message, {0}", voice.shown)) + "\"></audio><span class=\"duration\">" + voice.shown + "</span></div>"
        case .refused(let why)?:
            return "<p class=\"bubble voice not-shown\">" + escape(say("Voice not shown: {0}", why)) + "</p>"
        case nil:
            return "<p class=\"bubble voice\">" + say("Voice message · {0}", duration(said.seconds)) + "</p>"
        }
    }

    /// Where the page downloads the file of message `number` of the chat with `peer`: from this
    /// host's own store, through its own server, never from anywhere a message names.
    public static func fileAddress(peer: String, number: Int) -> String {
        "/file?peer=" + WebDocument.percentEncoded(peer) + "&n=\(number)"
    }

    /// A file message: a link that downloads the file (never opens it), with its name, type and
    /// size; or why it is not offered.
    static func file(_ slot: FileSlot?, said: FileContent, number: Int, peer: String, _ say: WebLanguage = .english) -> String {
        switch slot {
        case .file(let file)?:
            return "<div class=\"bubble file\"><a class=\"download\" href=\"" + escape(fileAddress(peer: peer, number: number)) + "\" download=\""
                + escape(file.name) + "\" dir=\"auto\">" + escape(file.name) + "</a><span class=\"file-facts\">" + escape(file.shownSize + " · " + kindName(file.type, say))
                + "</span></div>"
        case .refused(let why)?:
            return "<p class=\"bubble file not-shown\">" + escape(say("File not offered: {0}", why)) + "</p>"
        case nil:
            return "<p class=\"bubble file not-shown\" dir=\"auto\">" + escape(say("File {0} (not on this device)", said.name)) + "</p>"
        }
    }

    /// A media type as people call it.
    static func kindName(_ type: String, _ say: WebLanguage = .english) -> String {
        say(kindName(type))
    }

    private static func kindName(_ type: String) -> String {
        switch type {
        case "application/pdf": "PDF"
        case let word where word.contains("wordprocessingml") || word == "application/msword" || word.contains("opendocument.text"): "Document"
        case let sheet where sheet.contains("spreadsheet") || sheet == "application/vnd.ms-excel": "Spreadsheet"
        case let slides where slides.contains("presentation") || slides == "application/vnd.ms-powerpoint": "Slides"
        case "application/zip": "ZIP archive"
        case let text where text.hasPrefix("text/plain"): "Text"
        case let image where image.hasPrefix("image/"): "Picture"
        default: "File"
        }
    }

    /// Where the page fetches a picture a line ships.
    public static func pictureAddress(line: String, version: String, name: String) -> String {
        "/picture/" + WebDocument.percentEncoded(line) + "/" + WebDocument.percentEncoded(version) + "/" + WebDocument.percentEncoded(name)
    }

    /// A message's photo: the picture, at its size (so the page does not jump as it loads), or
    /// why it is not shown.
    static func photo(_ slot: PhotoSlot, index: Int, number: Int, peer: String, inCard: Bool, alt: String, _ say: WebLanguage = .english) -> String {
        let kind = inCard ? "card-image" : "photo-image"
        switch slot {
        case .photo(let photo):
            return "<img class=\"\(kind)\" src=\"" + escape(photoAddress(peer: peer, number: number, index: index)) + "\" width=\"\(photo.width)\" height=\"\(photo.height)\" alt=\""
                + escape(alt) + "\" loading=\"lazy\">"
        case .refused(let why):
            let words = escape(say("Photo not shown: {0}", why))
            return "<div class=\"\(kind) not-shown\" role=\"img\" aria-label=\"" + words + "\">" + words + "</div>"
        }
    }

    /// A photo's text alternative: the words sent with it (a photo message's caption), or who
    /// sent it and its size ("Photo from alice, 640×400").
    static func photoAlt(_ slot: PhotoSlot, message: PageView.Message, _ say: WebLanguage = .english) -> String {
        if case .text(let caption) = message.body, !caption.isEmpty, message.body.degrade == nil {
            return say("Photo: {0}", String(caption.prefix(200)))
        }
        let who = message.isOutgoing ? say("you") : message.envelope.from
        guard case .photo(let photo) = slot else { return say("Photo from {0}", who) }
        return say("Photo from {0}, {1}", who, "\(photo.width)×\(photo.height)")
    }

    static func state(_ message: PageView.Message, dev: Bool = false, _ say: WebLanguage = .english) -> String {
        let english: String = switch message.state {
        case .queued: "queued"
        case .sent: "sent"
        case .delivered: "delivered"
        case .read: "read"
        case .failed, .givenUp: "not sent"
        case .unknown: "not known yet"
        case .received: "received"
        }
        let words = say(english)
        // The ticks are drawn, not read: a screen reader says "read", not "check mark".
        let ticks = message.state == .read ? " ✓✓" : message.state == .delivered ? " ✓" : ""
        var html = "<p class=\"state \(message.state.rawValue)\">" + escape(words) + (ticks.isEmpty ? "" : "<span aria-hidden=\"true\">" + ticks + "</span>")
        if let failure = message.failure, message.state == .failed || message.state == .givenUp || message.state == .unknown {
            html += (say == .chinese ? "：" : ": ") + escape(failureWords(failure, say))
        }
        if message.state == .failed || message.state == .givenUp {
            html += " <button data-do=\"retry\" data-message=\"\(message.number)\">" + say("Try again") + "</button>"
        }
        return html + "</p>"
    }

    /// A message's time: `HH:MM` in UTC, in a `<time>` the page's script shows in the reader's
    /// own time zone.
    static func time(_ milliseconds: Int64) -> String {
        "<time datetime=\"\(milliseconds)\">" + clockTime(milliseconds) + "</time>"
    }

    /// Why a message failed, for the person whose message it is: the page's retry button beside
    /// it sends it again.
    static func failureWords(_ failure: MessageFailure, _ say: WebLanguage = .english) -> String {
        switch failure {
        case .refusedByPeer(let refusal):
            let peer = refusal.peer, said = refusal.reason.map { " (\($0))" } ?? ""
            return switch refusal.code {
            case .kind?, .version?: say("{0}'s imhost is older than yours and cannot take it; retry once {0} has updated", peer)
            case .blocked?: say("{0} blocked you", peer)
            case .budget?: say("{0} takes no more messages from you today; retry tomorrow", peer)
            case .tooLarge?: say("too large for {0}'s imhost{1}", peer, said)
            case let code?: say("refused by {0} ({1}){2}", peer, code.rawValue, said)
            case nil: say("refused by {0}{1}", peer, said)
            }
        case .tooLargeForBroker(let refusal):
            return refusal.limit.map { say("too large for the server: it takes up to {0}, this is {1}; retry once its operator has raised the limit", FailureWords.size($0), FailureWords.size(refusal.bytes)) }
                ?? say("too large for the server: this is {0}; retry once its operator has raised the limit", FailureWords.size(refusal.bytes))
        case .notDelivered(let hours):
            return say("not delivered within {0} hours", FailureWords.hours(hours))
        case .unknownState(let state):
            return say("this imhost does not know the state \"{0}\" the store holds", state)
        case .unknownCode(let code):
            return say("for a reason this imhost does not know (\"{0}\", stored by a newer one)", code)
        case .other(let text):
            return text
        }
    }

    /// `HH:MM` in UTC for a time in milliseconds.
    static func clockTime(_ milliseconds: Int64) -> String {
        let minutes = (milliseconds / 60_000) % (24 * 60)
        let hours = minutes / 60, rest = minutes % 60
        return (hours < 10 ? "0" : "") + "\(hours):" + (rest < 10 ? "0" : "") + "\(rest)"
    }
}

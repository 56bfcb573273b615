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
    /// (``WebDocument/chat(page:)``) holds it; a live update replaces it.
    public static func body(_ page: PageView, dev: Bool = false) -> String {
        var html = "<header class=\"title" + (page.isLegacy ? " legacy" : "") + "\" data-peer=\"" + escape(page.conversation) + "\"><h1>" + escape(page.title) + "</h1>"
        if dev {
            let tag = page.isLegacy ? "legacy page" : (page.lineID.map { "\($0) page" } ?? "base page")
            html += "<span class=\"tag dev" + (page.isLegacy ? " legacy" : "") + "\">" + escape(tag) + "</span>"
            if let version = page.lineVersion { html += "<span class=\"tag dev version\">version " + escape(version) + "</span>" }
            html += "<details class=\"route dev\"><summary>why this page</summary>" + escape(page.route.reason) + ": " + escape(page.route.explanation)
                + (page.route.source.map { " (" + escape($0) + ")" } ?? "") + "</details>"
        }
        html += "</header>"
        for component in page.components where component.kind != .inputBar {
            html += self.component(component)
        }
        html += "<main class=\"messages\">" + earlier(page.total - page.messages.count)
        if page.messages.isEmpty { html += "<p class=\"empty\">No messages yet.</p>" }
        for message in page.messages { html += self.message(message, peer: page.conversation, dev: dev) }
        html += "</main>"
        if page.component(.inputBar) != nil {
            html += "<form class=\"input\" data-send><button type=\"button\" class=\"attach\" data-file aria-label=\"Send a file\" title=\"Send a file\">📎</button>"
                + "<input name=\"text\" autocomplete=\"off\" placeholder=\"Message\" aria-label=\"Message\">"
                + "<button type=\"submit\">Send</button></form><input type=\"file\" class=\"file-pick\" hidden>"
        } else {
            html += "<p class=\"no-input\">This page has no input bar.</p>"
        }
        return html
    }

    /// The control that loads earlier messages, when `count` are not shown.
    static func earlier(_ count: Int) -> String {
        guard count > 0 else { return "" }
        return "<button class=\"older\" data-do=\"more\" data-count=\"20\">Show \(count) earlier message\(count == 1 ? "" : "s")</button>"
    }

    /// What changed in a page its tabs show (``PageChanges``), as the page's script applies it:
    /// a JSON array of `{"op":"append","html":…}` (a message after the last),
    /// `{"op":"replace","id":"m3","html":…}`, `{"op":"remove","id":"m1"}` and
    /// `{"op":"earlier","html":…}` (the control for earlier messages; empty when none are left),
    /// each message's HTML drawn as ``body(_:dev:)`` draws it.
    public static func changes(_ changes: [PageChanges.Change], peer: String, dev: Bool = false) -> String {
        let ops = changes.map { change -> String in
            switch change {
            case .added(let message):
                return "{\"op\":\"append\",\"html\":" + JSONNode.quoted(self.message(message, peer: peer, dev: dev)) + "}"
            case .changed(let message):
                return "{\"op\":\"replace\",\"id\":\"m\(message.number)\",\"html\":" + JSONNode.quoted(self.message(message, peer: peer, dev: dev)) + "}"
            case .removed(let number):
                return "{\"op\":\"remove\",\"id\":\"m\(number)\"}"
            case .earlier(let count):
                return "{\"op\":\"earlier\",\"html\":" + JSONNode.quoted(earlier(count)) + "}"
            }
        }
        return "[" + ops.joined(separator: ",") + "]"
    }

    /// Why a line's item that answered "ignored" is drawn disabled.
    static let ignoredWhy = "This does nothing in this chat."

    /// A bar or menu item as a button that posts `verb` with its number; a line's item that
    /// answered "ignored" is disabled, and says why.
    static func item(_ item: PageView.Item, verb: String) -> String {
        let kind = item.byLine ? "line" : "platform"
        guard !item.ignored else {
            return "<button class=\"\(kind) ignored\" disabled title=\"\(ignoredWhy)\">" + escape(item.name)
                + "<span class=\"why\"> (" + ignoredWhy.dropLast() + ")</span></button>"
        }
        // The platform's Clear asks the person first (the page's dialog), then clears.
        if !item.byLine, item.name == PageView.clearItem { return "<button class=\"platform\" data-ask=\"clear\">Clear</button>" }
        // So does Report.
        if !item.byLine, item.name == PageView.reportItem { return "<button class=\"platform\" data-ask=\"report\">Report</button>" }
        return "<button class=\"\(kind)\" data-do=\"\(verb)\" data-item=\"\(item.number)\">" + escape(item.name) + "</button>"
    }

    static func component(_ component: PageView.Component) -> String {
        switch component {
        case .topPost(let post):
            guard let post else { return "" }
            return "<section class=\"top-post\"><strong>" + escape(post.title) + "</strong>"
                + (post.detail.isEmpty ? "" : "<span>" + escape(post.detail) + "</span>") + "</section>"
        case .quickReplies(let phrases, let available):
            let buttons = phrases.enumerated().map { index, phrase in
                "<button" + (available ? " data-do=\"quick\" data-item=\"\(index + 1)\"" : " disabled") + ">" + escape(phrase) + "</button>"
            }
            return "<nav class=\"quick-replies" + (available ? "" : " unavailable") + "\" aria-label=\"Quick replies\">"
                + buttons.joined() + "</nav>"
        case .bottomBar(let items):
            return "<nav class=\"bottom-bar\" aria-label=\"Tools\">" + items.filter(\.isShown).map { item in
                // The platform's Photo item picks a file; the page's script sends its bytes.
                if !item.byLine, item.name == "Photo" {
                    return "<button class=\"platform\" data-photo>Photo</button>"
                        + "<input type=\"file\" class=\"photo-file\" accept=\"image/png,image/jpeg,image/webp\" hidden>"
                }
                // The platform's Voice item records in the browser (the page's script), at most
                // Voice.secondsLimit seconds, and sends the recording.
                if !item.byLine, item.name == "Voice" {
                    return "<button class=\"platform\" data-voice data-limit=\"\(Voice.secondsLimit)\" aria-pressed=\"false\">Voice</button>"
                }
                // The platform's Location item sends where the browser says the person is.
                if !item.byLine, item.name == "Location" { return "<button class=\"platform\" data-location>Location</button>" }
                return self.item(item, verb: "bar")
            }.joined() + "</nav>"
        case .menu(let items):
            return "<details class=\"menu\"><summary>☰ Menu</summary>" + items.filter(\.isShown).map { self.item($0, verb: "menu") }.joined() + "</details>"
        case .inputBar:
            return ""
        }
    }

    static func message(_ message: PageView.Message, peer: String, dev: Bool = false) -> String {
        let side = message.isOutgoing ? "sent" : "received"
        var html = "<article class=\"message \(side)\" id=\"m\(message.number)\" data-number=\"\(message.number)\">"
        html += "<p class=\"meta\">" + (dev ? "<span class=\"dev number\">#\(message.number)</span> " : "")
            + "<span class=\"who\">" + (message.isOutgoing ? "You" : escape(message.envelope.from)) + "</span> · " + time(message.envelope.timestamp)
        if let before = message.sentBefore { html += " · <a href=\"#m\(before)\">sent earlier</a>" }
        html += "</p>"
        if let quote = message.reply { html += self.quote(quote, peer: peer) }
        switch message.body {
        case .text("") where !message.photos.isEmpty, .lines([]) where !message.photos.isEmpty:
            // A photo without a caption: the photo is the message.
            break
        case .text(let text):
            html += "<div class=\"bubble text\">" + TextHTML.html(text) + "</div>"
        case .voice(let voice):
            html += self.voice(message.voice, said: voice, number: message.number, peer: peer)
        case .location(let place):
            html += location(place)
        case .file(let said):
            html += self.file(message.file, said: said, number: message.number, peer: peer)
        case .image(let image):
            // The address is a link only when it is one whole web address; nothing is fetched.
            let pieces = TextHTML.pieces(image.url)
            html += "<p class=\"bubble image\">Picture \(max(0, image.width))×\(max(0, image.height)): "
                + (pieces.count == 1 && pieces[0].isLink ? TextHTML.html(image.url) : escape(image.url)) + "</p>"
        case .lines(let lines):
            // A line's own view (IMKit 1.0–1.2), laid out in columns: drawn as laid out.
            html += "<pre class=\"bubble lines\" data-do=\"tap\" data-message=\"\(message.number)\">" + escape(lines.joined(separator: "\n"))
            if let folded = message.folded { html += "\n<span class=\"folded\">" + escape(PageView.foldMarker(folded)) + "</span>" }
            html += "</pre>"
        case .card(let card):
            html += self.card(card, message: message, peer: peer)
        case .recalled:
            html += "<p class=\"bubble recalled\">" + (message.isOutgoing ? "You recalled a message" : escape(message.envelope.from) + " recalled a message") + "</p>"
        case .placeholder(let why):
            html += "<details class=\"bubble placeholder\"><summary>" + escape(MessagePresenter.placeholderText)
                + (dev ? " <small class=\"dev\">(" + escape(why.short) + ")</small>" : "") + "</summary><p>"
                + (dev ? escape(message.causes.isEmpty ? why.description : message.causes.map(\.description).joined(separator: "; and "))
                       : "This app cannot show this kind of message yet.")
                + "</p></details>"
        }
        if message.body.degrade == nil {
            for (index, slot) in message.photosAfterBody {
                html += "<figure class=\"photo\">" + photo(slot, index: index, number: message.number, peer: peer, inCard: false) + "</figure>"
            }
        }
        if message.isOutgoing { html += state(message, dev: dev) }
        if !message.reactions.isEmpty { html += reactions(message.reactions, peer: peer) }
        if message.body != .recalled { html += actions(message, peer: peer) }
        if message.isOutgoing, let drawn = message.peerDrawn {
            // How the peer drew it, as its read receipt said: its words escaped. The person hears
            // only that the peer could not see it.
            if dev {
                html += "<p class=\"drawn dev" + (drawn.isPlaceholder ? " placeholder" : "") + "\">" + escape(drawn.said(at: message.envelope.to)) + "</p>"
            } else if drawn.isPlaceholder {
                html += "<p class=\"drawn placeholder\">" + escape(message.envelope.to) + "'s app cannot show this message.</p>"
            }
        }
        return html + "</article>"
    }

    /// A message's reactions, under it: each emoji with who gave it.
    static func reactions(_ reactions: [PageView.Reaction], peer: String) -> String {
        "<ul class=\"reactions\" aria-label=\"Reactions\">" + reactions.map { reaction in
            let who = reaction.people.map { $0 == peer ? escape(peer) : "You" }.joined(separator: ", ")
            let mine = reaction.people.contains { $0 != peer } ? " data-mine" : ""
            return "<li\(mine) title=\"" + who + "\">" + escape(reaction.emoji) + " <span class=\"who\">" + who + "</span></li>"
        }.joined() + "</ul>"
    }

    /// A reply's quote of the message it answers: who wrote it and its first words, a link to
    /// it (the page's script loads earlier messages when it is not shown yet).
    static func quote(_ quote: PageView.Quote, peer: String) -> String {
        let who = quote.from == peer ? escape(peer) : "You"
        let words: String = switch quote.excerpt {
        case .text(let text): escape(text)
        case .photo(let caption?): "Photo: " + escape(caption)
        case .photo(nil): "Photo"
        case .voice(let seconds): "Voice " + duration(seconds)
        case .location(let name): "Location" + (name.isEmpty ? "" : ": " + escape(name))
        case .file(let name): "File: " + escape(name)
        case .image: "Picture"
        case .recalled: "Recalled message"
        case .placeholder: "A message this app cannot show"
        case .missing: "A message not on this device"
        }
        let body = "<span class=\"quote-who\">" + who + "</span> <span class=\"quote-text\" dir=\"auto\">" + words + "</span>"
        guard let number = quote.number else { return "<p class=\"quote missing\">" + body + "</p>" }
        return "<a class=\"quote\" href=\"#m\(number)\" data-quote=\"\(number)\" aria-label=\"Reply to " + who + ": " + words.replacingOccurrences(of: "\"", with: "&quot;") + ". Go to that message\">" + body + "</a>"
    }

    /// What a person can do with a message: reply to it; recall their own, while they may (the
    /// page's script takes the button away when that time is up).
    static func actions(_ message: PageView.Message, peer: String) -> String {
        // React opens the short set the page's script draws once for every message (a change
        // stays small): the one given is pressed, and pressing it again takes it back.
        var html = "<div class=\"actions\"><button type=\"button\" class=\"reply\" data-reply=\"\(message.number)\">Reply</button>"
            + "<button type=\"button\" class=\"react\" data-react=\"\(message.number)\" aria-expanded=\"false\">React</button>"
        if let until = message.recallableUntil {
            html += "<button type=\"button\" class=\"recall\" data-do=\"recall\" data-message=\"\(message.number)\" data-until=\"\(until)\">Recall</button>"
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
    static func location(_ place: LocationContent) -> String {
        var html = "<div class=\"bubble location\"><strong>" + escape(place.name.isEmpty ? "Location" : place.name) + "</strong>"
        let lat = place.latitude, lon = place.longitude
        if lat.isFinite, lon.isFinite, abs(lat) <= 90, abs(lon) <= 180 {
            let map = "https://www.openstreetmap.org/?mlat=\(lat)&mlon=\(lon)#map=16/\(lat)/\(lon)"
            html += "<span class=\"coordinates\">\(lat), \(lon)</span><a href=\"" + escape(map) + "\" rel=\"noopener noreferrer\" target=\"_blank\">Open map</a>"
        } else {
            html += "<span class=\"coordinates\">No valid position</span>"
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
    static func voice(_ slot: VoiceSlot?, said: VoiceContent, number: Int, peer: String) -> String {
        switch slot {
        case .voice(let voice)?:
            return "<div class=\"bubble voice\"><audio controls preload=\"none\" src=\"" + escape(voiceAddress(peer: peer, number: number))
                + "\" aria-label=\"" + escape("Voice message, \(voice.shown)") + "\"></audio><span class=\"duration\">" + voice.shown + "</span></div>"
        case .refused(let why)?:
            return "<p class=\"bubble voice not-shown\">" + escape("Voice not shown: " + why) + "</p>"
        case nil:
            return "<p class=\"bubble voice\">Voice message · " + duration(said.seconds) + "</p>"
        }
    }

    /// Where the page downloads the file of message `number` of the chat with `peer`: from this
    /// host's own store, through its own server, never from anywhere a message names.
    public static func fileAddress(peer: String, number: Int) -> String {
        "/file?peer=" + WebDocument.percentEncoded(peer) + "&n=\(number)"
    }

    /// A file message: a link that downloads the file (never opens it), with its name, type and
    /// size; or why it is not offered.
    static func file(_ slot: FileSlot?, said: FileContent, number: Int, peer: String) -> String {
        switch slot {
        case .file(let file)?:
            return "<div class=\"bubble file\"><a class=\"download\" href=\"" + escape(fileAddress(peer: peer, number: number)) + "\" download=\""
                + escape(file.name) + "\" dir=\"auto\">" + escape(file.name) + "</a><span class=\"file-facts\">" + escape(file.shownSize + " · " + kindName(file.type))
                + "</span></div>"
        case .refused(let why)?:
            return "<p class=\"bubble file not-shown\">" + escape("File not offered: " + why) + "</p>"
        case nil:
            return "<p class=\"bubble file not-shown\">" + escape("File " + said.name + " (not on this device)") + "</p>"
        }
    }

    /// A media type as people call it.
    static func kindName(_ type: String) -> String {
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
    static func photo(_ slot: PhotoSlot, index: Int, number: Int, peer: String, inCard: Bool) -> String {
        let kind = inCard ? "card-image" : "photo-image"
        switch slot {
        case .photo(let photo):
            return "<img class=\"\(kind)\" src=\"" + escape(photoAddress(peer: peer, number: number, index: index)) + "\" width=\"\(photo.width)\" height=\"\(photo.height)\" alt=\""
                + escape("photo \(index + 1), \(photo.kind.name) \(photo.width)×\(photo.height)") + "\" loading=\"lazy\">"
        case .refused(let why):
            return "<div class=\"\(kind) not-shown\" role=\"img\">" + escape("Photo not shown: " + why) + "</div>"
        }
    }

    /// A card: the picture's place, the title with its badge, the subtitle, the fields, the
    /// buttons. A click on the card taps the message (`/tap N`); a button sends `/tap N ID`.
    static func card(_ card: PageView.Card, message: PageView.Message, peer: String) -> String {
        let number = message.number
        var html = "<section class=\"bubble card\" data-do=\"tap\" data-message=\"\(number)\">"
        switch card.image {
        case .picture(let name, let line?, let version?, let photo?)?:
            html += "<img class=\"card-image picture\" src=\"" + escape(pictureAddress(line: line, version: version, name: name)) + "\" width=\"\(photo.width)\" height=\"\(photo.height)\" alt=\""
                + escape("picture " + name) + "\">"
        case .picture(let name, _, _, _)?:
            html += "<div class=\"card-image not-shown\" role=\"img\">" + escape("No picture \"\(name)\": its line registered none by that name") + "</div>"
        case .photo(let index)? where message.photos.indices.contains(index):
            html += photo(message.photos[index], index: index, number: number, peer: peer, inCard: true)
        case .photo?, nil:
            // A photo the message does not carry keeps no place (a listing sent without one).
            break
        }
        html += "<header class=\"card-head\"><h2 class=\"card-title\">" + escape(card.title) + "</h2>"
        if let badge = card.badge {
            html += "<span class=\"badge \(badge.tone.rawValue)\">" + escape(badge.text) + "</span>"
        }
        html += "</header>"
        if let subtitle = card.subtitle { html += "<p class=\"card-subtitle\">" + escape(subtitle) + "</p>" }
        if !card.fields.isEmpty {
            html += "<dl class=\"card-fields\">" + card.fields.map { field in
                "<div><dt>" + escape(field.label) + "</dt><dd>" + escape(field.value) + "</dd></div>"
            }.joined() + "</dl>"
        }
        if !card.buttons.isEmpty {
            html += "<div class=\"card-buttons\">" + card.buttons.map { button in
                // One that answered "ignored" here is drawn disabled, saying so.
                button.ignored == true
                    ? "<button type=\"button\" class=\"ignored\" disabled title=\"\(ignoredWhy)\">" + escape(button.label)
                        + "<span class=\"why\"> (" + ignoredWhy.dropLast() + ")</span></button>"
                    : "<button type=\"button\" data-do=\"tap\" data-message=\"\(number)\" data-button=\"" + escape(button.id) + "\">" + escape(button.label) + "</button>"
            }.joined() + "</div>"
        }
        return html + "</section>"
    }

    static func state(_ message: PageView.Message, dev: Bool = false) -> String {
        let words: String = switch message.state {
        case .queued: "queued"
        case .sent: "sent"
        case .delivered: "delivered ✓"
        case .read: "read ✓✓"
        case .failed, .givenUp: "not sent"
        case .unknown: "not known yet"
        case .received: "received"
        }
        var html = "<p class=\"state \(message.state.rawValue)\">" + escape(words)
        if let failure = message.failure, message.state == .failed || message.state == .givenUp || message.state == .unknown {
            html += ": " + escape(failureWords(failure))
        }
        if message.state == .failed || message.state == .givenUp {
            html += " <button data-do=\"retry\" data-message=\"\(message.number)\">Try again</button>"
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
    static func failureWords(_ failure: MessageFailure) -> String {
        switch failure {
        case .refusedByPeer(let refusal):
            let peer = refusal.peer, said = refusal.reason.map { " (\($0))" } ?? ""
            return switch refusal.code {
            case .kind?, .version?: "\(peer)'s imhost is older than yours and cannot take it; retry once \(peer) has updated"
            case .blocked?: "\(peer) blocked you"
            case .budget?: "\(peer) takes no more messages from you today; retry tomorrow"
            case .tooLarge?: "too large for \(peer)'s imhost\(said)"
            case let code?: "refused by \(peer) (\(code))\(said)"
            case nil: "refused by \(peer)\(said)"
            }
        case .tooLargeForBroker(let refusal):
            return "too large for the server: " + (refusal.limit.map { "it takes up to \(FailureWords.size($0)), this is \(FailureWords.size(refusal.bytes))" }
                ?? "this is \(FailureWords.size(refusal.bytes))") + "; retry once its operator has raised the limit"
        case .notDelivered(let hours):
            return "not delivered within \(FailureWords.hours(hours)) hours"
        case .unknownState(let state):
            return "this imhost does not know the state \"\(state)\" the store holds"
        case .unknownCode(let code):
            return "for a reason this imhost does not know (\"\(code)\", stored by a newer one)"
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

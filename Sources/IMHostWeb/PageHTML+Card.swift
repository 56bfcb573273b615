@_spi(Host) import IMHost
import IMHostRuntime
import IMKit

/// A line's card as HTML: its picture, title and badge, subtitle, fields, the inputs it asks
/// (IMKit 1.4) and its buttons; and what the page says beside an input the host refused.
extension PageHTML {
    /// A card: the picture's place, the title with its badge, the subtitle, the fields, the
    /// buttons. A click on the card taps the message (`/tap N`); a button sends `/tap N ID`.
    static func card(_ card: PageView.Card, message: PageView.Message, peer: String, _ say: WebLanguage = .english) -> String {
        let number = message.number
        var html = "<section class=\"bubble card\" data-do=\"tap\" data-message=\"\(number)\">"
        switch card.image {
        case .picture(let name, let line?, let version?, let photo?, let alt)?:
            // What it shows, in its line's words; a line built before IMKit 1.4 said nothing,
            // and its picture is taken as decoration (the card's title says what the card is).
            html += "<img class=\"card-image picture\" src=\"" + escape(pictureAddress(line: line, version: version, name: name)) + "\" width=\"\(photo.width)\" height=\"\(photo.height)\" alt=\""
                + escape(alt ?? "") + "\">"
        case .picture(let name, _, _, _, _)?:
            let words = escape(say("No picture \"{0}\": its line registered none by that name", name))
            html += "<div class=\"card-image not-shown\" role=\"img\" aria-label=\"" + words + "\">" + words + "</div>"
        case .photo(let index)? where message.photos.indices.contains(index):
            html += photo(message.photos[index], index: index, number: number, peer: peer, inCard: true, alt: photoAlt(message.photos[index], message: message, say), say)
        case .photo?, nil:
            // A photo the message does not carry keeps no place (a listing sent without one).
            break
        }
        // The title is the card's button for a keyboard and a screen reader (a click anywhere on
        // the card taps it too).
        html += "<header class=\"card-head\"><h2 class=\"card-title\" dir=\"auto\"><button type=\"button\" class=\"card-open\" data-do=\"tap\" data-message=\"\(number)\">"
            + escape(card.title) + "</button></h2>"
        if let badge = card.badge {
            html += "<span class=\"badge \(badge.tone.rawValue)\">" + escape(badge.text) + "</span>"
        }
        html += "</header>"
        if let subtitle = card.subtitle { html += "<p class=\"card-subtitle\" dir=\"auto\">" + escape(subtitle) + "</p>" }
        if !card.fields.isEmpty {
            html += "<dl class=\"card-fields\">" + card.fields.map { field in
                "<div><dt dir=\"auto\">" + escape(field.label) + "</dt><dd dir=\"auto\">" + escape(field.value) + "</dd></div>"
            }.joined() + "</dl>"
        }
        let inputs = card.inputs ?? []
        // A card that asks is a form: the host checks what is given (novalidate: the browser's
        // own checks would word it otherwise), and says each input's error beside it.
        if !inputs.isEmpty {
            html += "<form class=\"card-form\" data-message=\"\(number)\" data-revision=\"\(message.revised?.number ?? 0)\" novalidate aria-label=\"" + escape(card.title) + "\">"
                + inputs.map { cardInput($0, number: number, say) }.joined()
        }
        if !card.buttons.isEmpty {
            html += "<div class=\"card-buttons\">" + card.buttons.map { button in
                // One that answered "ignored" here is drawn disabled, saying so.
                if button.ignored == true {
                    return "<button type=\"button\" class=\"ignored\" disabled title=\"" + say(ignoredWhy) + "\">" + escape(button.label)
                        + "<span class=\"why\"> (" + say(String(ignoredWhy.dropLast())) + ")</span></button>"
                }
                let kind = button.submits == true && !inputs.isEmpty ? "submit\" class=\"submits" : "button"
                return "<button type=\"\(kind)\" data-do=\"tap\" data-message=\"\(number)\" data-button=\"" + escape(button.id) + "\">" + escape(button.label) + "</button>"
            }.joined() + "</div>"
        }
        if !inputs.isEmpty { html += "</form>" }
        return html + "</section>"
    }

    /// One input of a card: its label (saying when it is required), the control, and the place
    /// its error is said (filled by the page when the host refuses a value). Ids are the
    /// message's number and the input's id, unique on the page.
    static func cardInput(_ input: PageView.Card.Input, number: Int, _ say: WebLanguage = .english) -> String {
        let id = "in-\(number)-" + escape(input.id)
        let error = "<p class=\"input-error\" id=\"" + id + "-error\" hidden></p>"
        let required = input.required == true
        let mark = required ? " <span class=\"required\">" + say("(required)") + "</span>" : ""
        let common = " name=\"" + escape(input.id) + "\" aria-describedby=\"" + id + "-error\"" + (required ? " aria-required=\"true\"" : "")
        switch input.kind {
        case .choice, .choices:
            let multiple = input.kind == .choices
            let chosen = multiple ? Set(input.chosen ?? []) : Set([input.value].compactMap { $0 })
            let options = (input.options ?? []).enumerated().map { index, option in
                "<label class=\"option\"><input type=\"" + (multiple ? "checkbox" : "radio") + "\" name=\"" + escape(input.id) + "\" value=\"" + escape(option.id) + "\""
                    + (chosen.contains(option.id) ? " checked" : "") + (index == 0 ? " id=\"" + id + "\"" : "") + "> <span dir=\"auto\">" + escape(option.label) + "</span></label>"
            }.joined()
            // One of several is a radio group, which can say it is required; several of several
            // say it in their legend only (a group of boxes has no such state).
            let group = multiple ? "" : " role=\"radiogroup\"" + (required ? " aria-required=\"true\"" : "")
            return "<fieldset class=\"card-input choice\"" + group + " aria-describedby=\"" + id + "-error\"><legend dir=\"auto\">"
                + escape(input.label) + mark + "</legend>" + options + error + "</fieldset>"
        case .text, .date, .time:
            let type = input.kind == .text ? "text" : input.kind == .date ? "date" : "time"
            var attributes = " type=\"\(type)\" id=\"" + id + "\"" + common
            if let value = input.value { attributes += " value=\"" + escape(value) + "\"" }
            if let placeholder = input.placeholder, input.kind == .text { attributes += " placeholder=\"" + escape(placeholder) + "\"" }
            if input.kind == .text { attributes += " maxlength=\"\(min(input.maxLength ?? CardInput.textLimit, CardInput.textLimit))\" dir=\"auto\"" }
            if let earliest = input.earliest { attributes += " min=\"" + escape(earliest) + "\"" }
            if let latest = input.latest { attributes += " max=\"" + escape(latest) + "\"" }
            return "<div class=\"card-input\"><label for=\"" + id + "\" dir=\"auto\">" + escape(input.label) + mark + "</label><input" + attributes + ">" + error + "</div>"
        }
    }

    /// What the page says beside an input whose value the host refused (IMKit's code).
    static func inputError(_ error: ChatRefusal.InputError, _ say: WebLanguage = .english) -> String {
        let limit = error.limit ?? ""
        return switch error.code {
        case CardValueError.Code.required.name: say("Fill this in.")
        case CardValueError.Code.tooShort.name: say("Write at least {0} characters.", limit)
        case CardValueError.Code.tooLong.name: say("Write at most {0} characters.", limit)
        case CardValueError.Code.notAnOption.name: say("Choose one of the options.")
        case CardValueError.Code.notADate.name: say("Give a date.")
        case CardValueError.Code.notATime.name: say("Give a time.")
        case CardValueError.Code.tooEarly.name: say("Choose {0} or later.", limit)
        case CardValueError.Code.tooLate.name: say("Choose {0} or earlier.", limit)
        case CardValueError.Code.oneValue.name: say("Choose one.")
        default: say("This value cannot be used.")
        }
    }
}

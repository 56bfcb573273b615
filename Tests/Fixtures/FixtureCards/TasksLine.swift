// A small line of cards, the docs' smallest examples (docs/writing-a-line.md, "A card",
// "Buttons" and "Inputs"): a card with a title only, a card with a field, a badge and a button
// its builder answers, a card that asks one question and changes to its answer, and a card with
// a button id no one could type, which the host shows as a placeholder.
import IMKit

/// `tasks.note`: the smallest card, a title.
struct NoteBuilder: MessageBuilder {
    struct Content: Codable, Sendable { var text: String }
    let key = "tasks.note"
    func model(for note: Content, layout: MessageLayout) throws -> MessageModel {
        MessageModel(content: note, card: MessageCard(title: "📝 \(note.text)"), layout: layout)
    }
}

/// `tasks.task`: a card with a field, a badge and one button.
struct TaskBuilder: MessageBuilder {
    struct Task: Codable, Sendable { var title: String; var due: String }
    let key = "tasks.task"

    func model(for task: Task, layout: MessageLayout) throws -> MessageModel {
        let card = MessageCard(title: "☑️ \(task.title)", fields: [CardField("Due", task.due)], badge: CardBadge("Open"),
                               buttons: [CardButton(id: "done", label: "Mark done")])
        return MessageModel(content: task, card: card, layout: layout)
    }

    func didTapButton(_ button: String, content task: Task, message: ShownMessage, context: ChatContext) -> TapResult {
        guard button == "done" else { return .ignored }
        return .handled("marked \"\(task.title)\" done")
    }
}

/// `tasks.question`: a card that asks one thing, and shows the answer once it is given.
struct QuestionBuilder: MessageBuilder {
    struct Question: Codable, Sendable { var text: String; var answer: String? }
    let key = "tasks.question"

    func model(for question: Question, layout: MessageLayout) throws -> MessageModel {
        let card = if let answer = question.answer {
            MessageCard(title: "❓ \(question.text)", fields: [CardField("Answer", answer)], badge: CardBadge("Answered", tone: .positive))
        } else {
            MessageCard(title: "❓ \(question.text)", inputs: [.text(id: "answer", label: "Your answer", required: true, maxLength: 200)],
                        buttons: [CardButton(id: "send", label: "Answer", submits: true)])
        }
        return MessageModel(content: question, card: card, layout: layout)
    }

    func didSubmit(_ button: String, values: CardValues, content question: Question, message: ShownMessage, context: ChatContext) -> TapResult {
        guard let answer = values["answer"] else { return .ignored }
        do {
            try context.revise(message, to: Question(text: question.text, answer: answer), with: self)
        } catch {
            return .failed("could not answer: \(error)")
        }
        return .handled("answered \"\(answer)\"")
    }

    var samples: [MessageSample<Question>] {
        [MessageSample("asking", Question(text: "Which day suits you?")),
         MessageSample("answered", Question(text: "Which day suits you?", answer: "Saturday"))]
    }
}

/// `tasks.broken`: a button whose id has a space, which `/tap N ID` could not name.
struct BrokenBuilder: MessageBuilder {
    struct Content: Codable, Sendable { var text: String }
    let key = "tasks.broken"
    func model(for content: Content, layout: MessageLayout) throws -> MessageModel {
        MessageModel(content: content, card: MessageCard(title: content.text, buttons: [CardButton(id: "do it", label: "Do it")]),
                     layout: layout)
    }
    /// What `imhost plugins --samples` and the workbench refuse, saying where.
    var samples: [MessageSample<Content>] { [MessageSample("a space in an id", Content(text: "Do this"))] }
}

final class TasksPage: CarrierPage {
    override var title: String { "Tasks with \(context.peerID)" }
}

enum TasksLine: BusinessLine {
    static let id = "tasks"
    static let displayName = "Tasks"
    static let version = "1.0.0"
    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(TasksPage.self)
        try registrar.registerBuilder(NoteBuilder())
        try registrar.registerBuilder(TaskBuilder())
        try registrar.registerBuilder(QuestionBuilder())
        try registrar.registerBuilder(BrokenBuilder())
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: TasksLine.self)
}

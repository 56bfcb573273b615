import IMHost
import IMHostRuntime

/// The line author's workbench (`imhost preview`): what a web server serves beside the chats
/// when it has one. Its page (`/workbench`) lays out, for each of a line's samples, the chat page
/// drawing only that sample, in frames at a phone's and a desktop's width, light and dark, with
/// the terminal's drawing, the card's rule errors and the accessibility check's findings; it
/// hears what changes on a stream of its own (`/events?workbench`).
///
/// The preview owns what is in it (``state``, as JSON, made from the samples' page as last
/// drawn); the server owns when it is said: a new build taken (``WebServer/takeBuild(_:)``) and
/// every drawing of the samples' page.
package final class Workbench {
    /// The jump URL of the chat that holds the samples.
    package let chat: String
    /// axe-core's script, served to the workbench's page to check each card; `nil`: not found
    /// on this machine (the page says so).
    package let axe: [UInt8]?
    /// The state as JSON, from the samples' page as last drawn (`nil` before its first drawing)
    /// and the build that page was drawn by.
    package let state: (_ page: PageView?, _ drawnBy: Int) -> String

    /// The builds taken so far, and the build the samples' page was last drawn by.
    package internal(set) var build = 0
    package internal(set) var drawnBy = 0
    /// The build the samples' page's new worker opens, until it has drawn.
    var replacing: Int?
    var streams: [EventStream] = []

    package init(chat: String, axe: [UInt8]?, state: @escaping (_ page: PageView?, _ drawnBy: Int) -> String) {
        self.chat = chat
        self.axe = axe
        self.state = state
    }
}

extension WebServer {
    /// The samples' page as last drawn, if open.
    private var workbenchPage: Page? {
        guard let workbench else { return nil }
        return pages.values.first { $0.url == workbench.chat && !$0.ended }
    }

    /// The preview took build `number` of the line (its file is in the plugin folder, its
    /// samples stored): the samples' page moves to a new worker that opens it, and the
    /// workbench hears of it once that worker has drawn.
    package func takeBuild(_ number: Int) {
        guard let workbench else { return }
        workbench.build = number
        // A spare read the plugin folder as it was.
        spares.retire(again: true)
        if let page = workbenchPage, page.isRunning {
            page.link.send(.replace)
        } else {
            workbench.drawnBy = number
        }
        sayWorkbench()
    }

    /// Something the workbench shows changed: its page hears the state again.
    package func sayWorkbench() {
        guard let workbench else { return }
        workbench.streams.removeAll(where: Self.gone)
        guard !workbench.streams.isEmpty else { return }
        let json = workbench.state(workbenchPage?.view, workbench.drawnBy)
        for stream in workbench.streams { stream.send("workbench", data: json) }
    }

    /// A page's worker was replaced: when it is the samples', its next drawing is the new build's.
    func replaced(_ page: Page) {
        guard let workbench, page.url == workbench.chat else { return }
        workbench.replacing = workbench.build
    }

    /// A page was drawn: when it is the samples', the workbench hears it.
    func drawn(_ page: Page) {
        guard let workbench, page.url == workbench.chat else { return }
        if let build = workbench.replacing {
            workbench.drawnBy = build
            workbench.replacing = nil
        }
        sayWorkbench()
    }

    /// `/events?workbench`: the workbench page's stream, which hears the state at once.
    func workbenchStream(_ stream: EventStream) -> HTTPReply? {
        guard let workbench else { return .text(404, "not found: this server has no workbench (imhost preview serves one)\n") }
        workbench.streams.append(stream)
        stream.send("workbench", data: workbench.state(workbenchPage?.view, workbench.drawnBy))
        return nil
    }
}

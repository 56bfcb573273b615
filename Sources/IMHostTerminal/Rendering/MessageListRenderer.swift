@_spi(Host) import IMHost
import IMKit

/// Stored messages turned into rendered rows — each message through the builder registered for
/// its key, in its cell — without a page: what a page does for its message list, for tools and
/// benchmarks.
public struct MessageListRenderer {
    private let presenter: MessagePresenter
    private let page: PageRenderer
    private let userID: String

    /// A renderer over `registry` for `userID`'s view, at `width` columns. With a breadcrumb
    /// at `breadcrumb`, each builder call is recorded as the host records it.
    public init(registry: MessageRegistry, userID: String, width: Int = PageRenderer.defaultWidth,
                legacy: Bool = false, killedKeys: Set<String> = [], breadcrumb: String? = nil) {
        presenter = MessagePresenter(registry: registry, killedKeys: killedKeys, legacy: legacy, breadcrumb: breadcrumb)
        page = PageRenderer(width: width, colors: false)
        self.userID = userID
    }

    /// The rows of one message, numbered `number`.
    public func rows(number: Int, _ message: MessageEnvelope) -> [String] {
        let presented = presenter.present(message, outgoing: message.from == userID,
                                          width: ChatPage.bodyWidth(forPage: page.width))
        return page.cell(number: number, envelope: message, view: presented.view, outgoing: presented.shown.isOutgoing,
                         degrade: presented.degrade)
    }
}

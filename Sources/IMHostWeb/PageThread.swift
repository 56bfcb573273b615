import CIMHostSupport
import IMHost
import IMHostRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the web server and one open page's thread say to each other: a queue each way, and a
/// pipe each way that wakes the side it is for. Everything in it is behind a lock, so both
/// threads may hold it; nothing else crosses.
final class PageLink: Sendable {
    /// From the server to the page.
    enum Input: Sendable {
        /// An act of the person's on the page.
        case act(ChatAction)
        /// Read host.json and the quarantine again.
        case reload
        /// The store changed: show what is new.
        case refresh
        /// The page is closed: end its worker.
        case close
        /// Start a new worker (the workbench took a line's new build): it opens the files as
        /// they are now.
        case replace
    }

    /// From the page to the server.
    enum Output: Sendable {
        case page(PageView)
        /// The pictures the page's lines ship, which its cards show.
        case pictures([ShippedPicture])
        /// What the chat said, for the reader.
        case reply(ChatReply)
        /// What the page's supervision said (a line's new build taken).
        case text(String)
        /// A line's crash and what it cost.
        case crash(String)
        /// Any other diagnostic (a note said once, a refusal).
        case diagnostic(String)
        /// The chat is over, with its worker's exit code.
        case ended(Int32)
        /// The old worker ended (``Input/replace``): the drawings that follow are the new one's.
        case replaced
    }

    private let inputs = Mutex<[Input]>([])
    private let outputs = Mutex<[Output]>([])
    /// The page's thread waits on `inputWake.read`; the server on `outputWake.read`.
    let inputWake: (read: Int32, write: Int32)
    let outputWake: (read: Int32, write: Int32)

    init() {
        inputWake = Self.pipe()
        outputWake = Self.pipe()
    }

    deinit {
        for fd in [inputWake.read, inputWake.write, outputWake.read, outputWake.write] where fd >= 0 { close(fd) }
    }

    private static func pipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard imhost_pipe_cloexec(&fds) == 0 else { return (-1, -1) }
        // Neither side ever waits on a full or empty wake pipe: a wake is one byte, often many.
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return (fds[0], fds[1])
    }

    /// The server hands the page something to do.
    func send(_ input: Input) {
        inputs.withLock { $0.append(input) }
        Self.wake(inputWake.write)
    }

    /// The page's thread takes what it was handed.
    func takeInputs() -> [Input] {
        Self.drain(inputWake.read)
        return inputs.withLock { queued in defer { queued = [] }; return queued }
    }

    /// The page says something to the server.
    func emit(_ output: Output) {
        outputs.withLock { $0.append(output) }
        Self.wake(outputWake.write)
    }

    /// The server takes what the page said.
    func takeOutputs() -> [Output] {
        Self.drain(outputWake.read)
        return outputs.withLock { queued in defer { queued = [] }; return queued }
    }

    private static func wake(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    private static func drain(_ fd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(fd, &bytes, bytes.count) > 0 {}
    }
}

/// One open page of `imhost web`: a chat under its own supervisor, on a thread of its own, so a
/// page whose line is slow or crashes holds up no other page and costs no other page's restart
/// budget. The thread owns the chat's supervision (nothing of it leaves the thread); the server
/// talks to it only through its ``PageLink``.
enum PageThread {
    /// What a page is opened with.
    struct Opening: Sendable {
        var url: String
        var config: HostConfig
        var configPath: String
        var user: String
        var verbose: Bool
        /// More for the worker: a data folder and a broker other than host.json's (a demo's).
        var workerOptions: [String] = []
        /// A worker started before this page was asked for, to take instead of starting one.
        var spare: SpareWorker? = nil

        /// The worker's arguments for the chat at `url`.
        func workerArguments(url: String) -> [String] {
            ["chat", url, "--config", configPath, "--user", user, "--web-page", "--width", "\(ChatPage.linesPageWidth)"] + workerOptions
                + (verbose ? ["--verbose"] : [])
        }

        /// A spare worker for pages opened like this one.
        func startSpare() -> SpareWorker? {
            ChatRuntime.startSpare(config: config, dataFolder: config.dataFolder, workerArguments: workerArguments(url: "-"))
        }
    }

    /// Starts the page's thread; returns false when no thread could be made.
    static func start(_ opening: Opening, link: PageLink) -> Bool {
        DetachedThread.start { run(opening, link: link) }
    }

    private static func run(_ opening: Opening, link: PageLink) {
        let arguments = opening.workerArguments(url: opening.url)
        let output = Output(out: { link.emit(.text($0)) }, err: { link.emit(.diagnostic($0)) })
        let chat = ChatRuntime(config: opening.config, configPath: opening.configPath, dataFolder: opening.config.dataFolder, user: opening.user,
                               workerArguments: arguments, output: output, chat: true,
                               openChat: OpenChats.Record(dataFolder: opening.config.dataFolder, page: true)) { shown in
            switch shown {
            case .reply(let reply): link.emit(.reply(reply))
            case .page(let page): link.emit(.page(page))
            case .pictures(let pictures): link.emit(.pictures(pictures))
            }
        }
        chat.crashNotices = { link.emit(.crash($0)) }
        if let code = chat.start(spare: opening.spare, url: opening.url) {
            link.emit(.ended(code))
            return
        }
        while true {
            var polls = ([link.inputWake.read] + chat.watched).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&polls, nfds_t(polls.count), chat.waitMilliseconds)
            let inputs = link.takeInputs()
            if inputs.isEmpty, let code = chat.idle() {
                link.emit(.ended(code))
                return
            }
            for input in inputs {
                let ended: Int32? = switch input {
                case .close: chat.finish()
                case .reload: chat.reload()
                case .refresh: chat.hand(.refresh)
                case .act(let action): chat.act(action)
                case .replace: chat.replaceWorker { link.emit(.replaced) }
                }
                if let ended {
                    link.emit(.ended(ended))
                    return
                }
            }
        }
    }
}

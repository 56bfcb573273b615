import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Decodes photos whole, every pixel row, before a host stores or serves them: a photo a peer
/// sent, one the person sends from a file or picks in the browser, a picture a line ships, and
/// the copies between a user's devices. Voice recordings too (``checkVoice(_:limit:)``): every
/// Opus packet decoded by libopus, in the same child. Reading the header (``Photo/read(_:limit:)``) says what a
/// file claims to be; only decoding it says that it is one, and that nothing follows its end.
///
/// The decoding is done by the platform's libraries (libpng, libjpeg-turbo, libwebp) in a child
/// that holds nothing else (`imhost __decode-photo`, ``PhotoDecoderChild``), as the plugin
/// scanner opens plugins: a library's bug reached by a crafted file costs that photo ("the photo
/// decoder crashed on it"), never the process that holds a chat. One child is kept per process
/// and reused, one photo at a time; one that died is replaced at the next photo, one that takes
/// longer than ``timeLimit`` is killed and the photo refused. The child's memory is bounded
/// (RLIMIT_AS) and a picture's size is checked against ``Photo/pixelLimit`` before anything is
/// allocated for it.
public final class PhotoDecoder: Sendable {
    /// This process's decoder. Its executable is this program, as for the plugin scanner: set
    /// by `imhost` as it starts and by every ``ChatHost`` from its options' `scanner`. Until then
    /// it has none, and refuses every photo.
    public static let shared = PhotoDecoder()
    /// Seconds a photo may take to decode.
    public static let timeLimit = 5.0
    /// Seconds a new child may take to start, on a busy machine.
    static let startLimit = 10.0

    /// What the child said of a photo, or why it said nothing.
    enum Outcome: Equatable {
        case verdict(code: String, width: Int, height: Int, trailing: Int, detail: String)
        case heard(code: String, samples: Int, trailing: Int, detail: String)
        case crashed(String)
        case timedOut
        case unavailable(String)
    }

    private struct State {
        var executable: String?
        var watch: ChildWatch<DecoderAnswer>?
        var started = 0
    }

    private let state: Mutex<State>
    private let environment: [String: String]
    private let timeLimit: Double

    /// A decoder of its own, running `executable` (this program, or `imhost`) with `environment`
    /// added to this process's; ``shared`` is the one hosts use.
    public init(executable: String? = nil, environment: [String: String] = [:], timeLimit: Double = PhotoDecoder.timeLimit) {
        state = Mutex(State(executable: executable))
        self.environment = environment
        self.timeLimit = timeLimit
    }

    /// Runs `executable` as the decoder from the next photo on.
    public func use(executable: String) {
        state.withLock { state in
            guard state.executable != executable else { return }
            state.executable = executable
            state.watch = nil
        }
    }

    /// The child's process id while one runs (for tests that stop or kill it).
    package var childID: pid_t? {
        state.withLock { state in state.watch.flatMap { $0.child.poll() == nil ? $0.child.pid : nil } }
    }

    /// How many children this decoder started.
    package var started: Int { state.withLock { $0.started } }

    /// `bytes` as a picture of at most `limit` bytes: its header read (``Photo/read(_:limit:)``),
    /// then the whole of it decoded. Refused in one line, with a code, when it is not one.
    public func check(_ bytes: [UInt8], limit: Int) throws(Photo.Refusal) -> Photo {
        let photo = try Photo.read(bytes, limit: limit)
        let name = photo.kind.name
        switch decode(bytes, kind: photo.kind) {
        case .verdict("ok", let width, let height, _, _):
            guard width == photo.width, height == photo.height else {
                throw Photo.Refusal("its \(name) header says \(photo.width)×\(photo.height) pixels, but its data is \(width)×\(height)",
                                    code: .sizeMismatch)
            }
            return photo
        case .verdict(let word, _, _, let trailing, let said):
            let detail = said.isEmpty ? "" : " (\(said.prefix(160)))"
            switch Photo.Refusal.Code(rawValue: word) ?? .corrupt {
            case .truncated: throw Photo.Refusal("its \(name) data ends before the picture does\(detail)", code: .truncated)
            case .trailingBytes:
                throw Photo.Refusal("it has \(trailing) bytes after the end of its \(name) picture (a picture with something else after it)", code: .trailingBytes)
            case .tooLarge: throw Photo.Refusal("decoding it needs more memory than a photo may take\(detail)", code: .tooLarge)
            case .unsupported: throw Photo.Refusal("its \(name) data uses what this host does not decode\(detail)", code: .unsupported)
            default: throw Photo.Refusal("its \(name) data is damaged\(detail)", code: .corrupt)
            }
        case .heard:
            throw Photo.Refusal("the photo decoder answered for a recording", code: .decoderUnavailable)
        case .crashed(let how):
            throw Photo.Refusal("the photo decoder crashed on it (\(how))", code: .decoderCrashed)
        case .timedOut:
            throw Photo.Refusal("the photo decoder took more than \(Int(timeLimit)) s on it", code: .decoderTimedOut)
        case .unavailable(let why):
            throw Photo.Refusal("it could not be checked: the photo decoder did not start (\(why))",
                                code: .decoderUnavailable)
        }
    }

    /// `bytes` as a voice recording of at most `limit` bytes: its container from its first
    /// bytes, then every Opus packet decoded, its length the sum of the samples. Refused in one
    /// line, with a code, when it is not one, or is longer than ``Voice/secondsLimit``.
    public func checkVoice(_ bytes: [UInt8], limit: Int = Voice.byteLimit) throws(Voice.Refusal) -> Voice {
        let kind = try Voice.kind(of: bytes, limit: limit)
        let name = kind.name
        switch decode(bytes, kind: kind.rawValue) {
        case .heard("ok", let samples, _, _):
            return Voice(kind: kind, milliseconds: samples / 48, size: bytes.count)
        case .heard(let word, _, let trailing, let said):
            let detail = said.isEmpty ? "" : " (\(said.prefix(160)))"
            switch Voice.Refusal.Code(rawValue: word) ?? .corrupt {
            case .truncated: throw Voice.Refusal("its \(name) data ends before the recording does\(detail)", code: .truncated)
            case .trailingBytes: throw Voice.Refusal("it has \(trailing) bytes after the end of its recording", code: .trailingBytes)
            case .tooLong: throw Voice.Refusal("it is longer than \(Voice.secondsLimit) s", code: .tooLong)
            case .unsupported: throw Voice.Refusal("it is not a recording this host plays\(detail)", code: .unsupported)
            default: throw Voice.Refusal("its \(name) data is damaged\(detail)", code: .corrupt)
            }
        case .verdict:
            throw Voice.Refusal("the decoder answered for a photo", code: .decoderUnavailable)
        case .crashed(let how):
            throw Voice.Refusal("the decoder crashed on it (\(how))", code: .decoderCrashed)
        case .timedOut:
            throw Voice.Refusal("the decoder took more than \(Int(timeLimit)) s on it", code: .decoderTimedOut)
        case .unavailable(let why):
            throw Voice.Refusal("it could not be checked: the decoder did not start (\(why))", code: .decoderUnavailable)
        }
    }

    /// Hands `bytes` to the child, starting one if none runs, and waits for its verdict.
    func decode(_ bytes: [UInt8], kind: Photo.Kind) -> Outcome {
        decode(bytes, kind: kind.rawValue)
    }

    /// Hands `bytes` of `kind` (a ``Photo/Kind`` or a ``Voice/Kind``) to the child, starting one
    /// if none runs, and waits for its answer.
    func decode(_ bytes: [UInt8], kind: String) -> Outcome {
        state.withLock { state in
            if let watch = state.watch, watch.child.poll() != nil { state.watch = nil }
            if state.watch == nil {
                guard let executable = state.executable else { return .unavailable("no decoder is set up in this process") }
                do throws(StartFailure) {
                    state.watch = try start(executable)
                    state.started += 1
                } catch {
                    return .unavailable(error.reason)
                }
            }
            let outcome = exchange(state.watch!, kind: kind, bytes: bytes)
            // A child that did not answer was killed, or died: the next photo gets a new one.
            switch outcome {
            case .verdict, .heard: break
            default: state.watch = nil
            }
            return outcome
        }
    }

    private struct StartFailure: Error {
        var reason: String
    }

    /// A new child, once it said hello.
    private func start(_ executable: String) throws(StartFailure) -> ChildWatch<DecoderAnswer> {
        let child: ChildProcess
        do {
            child = try ChildProcess(executable: executable, arguments: ["__decode-photo"], stdin: .pipe, stdout: .null, stderr: .pipe,
                                     control: true, environment: environment)
        } catch {
            throw StartFailure(reason: "\(error.call): \(error)")
        }
        // Written without blocking, so a child that stops reading cannot hold the host past its deadline.
        _ = fcntl(child.input, F_SETFL, fcntl(child.input, F_GETFL) | O_NONBLOCK)
        let watch = ChildWatch<DecoderAnswer>(child)
        let deadline = Clock.monotonic() + UInt64(Self.startLimit * 1e9)
        while !watch.heard {
            guard Clock.monotonic() < deadline else {
                watch.kill()
                throw StartFailure(reason: "it did not start within \(Int(Self.startLimit)) s")
            }
            switch watch.next(waiting: 5) {
            case .quiet, .message: continue
            case .mismatch(let version):
                watch.kill()
                throw StartFailure(reason: "it speaks version \(version), this host \(DecoderAnswer.version): \(executable) changed while the host ran")
            case .ended(let how):
                throw StartFailure(reason: "it ended (\(how)) before it was ready\(watch.takeLastWords().map { ": \($0)" } ?? "")")
            }
        }
        return watch
    }

    /// One request and its answer, within the time limit.
    private func exchange(_ watch: ChildWatch<DecoderAnswer>, kind: String, bytes: [UInt8]) -> Outcome {
        let deadline = Clock.monotonic() + UInt64(timeLimit * 1e9)
        switch Self.write(Array("\(kind) \(bytes.count)\n".utf8) + bytes, to: watch.child.input, until: deadline) {
        case .written: break
        case .late:
            watch.kill()
            return .timedOut
        case .gone:
            // Its input closed: it is ending. What it ended of is its answer.
            if let how = watch.child.wait(milliseconds: 1000) { return .crashed(how.description) }
            watch.kill()
            return .crashed("it stopped reading")
        }
        while true {
            let now = Clock.monotonic()
            guard now < deadline else {
                watch.kill()
                return .timedOut
            }
            switch watch.next(waiting: Int32(min(100, (deadline - now) / 1_000_000 + 1))) {
            case .message(.verdict(let code, let width, let height, let trailing, let detail)):
                return .verdict(code: code, width: width, height: height, trailing: trailing, detail: detail)
            case .message(.heard(let code, let samples, let trailing, let detail)):
                return .heard(code: code, samples: samples, trailing: trailing, detail: detail)
            case .message(.hello), .quiet: continue
            case .ended(let how): return .crashed(how.description)
            case .mismatch(let version):
                watch.kill()
                return .unavailable("it speaks version \(version), this host \(DecoderAnswer.version)")
            }
        }
    }

    private enum Written { case written, late, gone }

    /// Writes all of `bytes` to the non-blocking `fd` by `deadline`. SIGPIPE is held on this
    /// thread meanwhile, so a child that died makes the write fail with EPIPE in any program (the
    /// tests and benchmarks, which may not ignore SIGPIPE as `imhost` does), and one raised is
    /// taken before the mask is restored.
    private static func write(_ bytes: [UInt8], to fd: Int32, until deadline: UInt64) -> Written {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer {
            var pending = sigset_t()
            if sigismember(&previous, SIGPIPE) == 0, sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 {
                var now = timespec()
                _ = sigtimedwait(&pipeSignal, nil, &now)
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if wrote > 0 {
                done += wrote
                continue
            }
            guard wrote < 0, errno == EAGAIN || errno == EINTR else { return .gone }
            let now = Clock.monotonic()
            guard now < deadline else { return .late }
            var writable = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
            _ = poll(&writable, 1, Int32(min(100, (deadline - now) / 1_000_000 + 1)))
        }
        return .written
    }
}

#if canImport(Glibc)
import Glibc
#endif
import IMHost
import IMHostRuntime

/// `imhost __decode-photo`: the photo decoder child (internal); see ``PhotoDecoderChild``.
enum DecodePhotoCommand {
    static let command = CommandLineTool.Command(
        name: "__decode-photo",
        summary: "the photo decoder (internal)",
        help: "Decodes photos a host hands it on standard input and answers on file descriptor 3; not for people.",
        hidden: true,
        run: { _, output in
            // Ended by its parent (which kills it, or closes its input), never by Ctrl-C in the
            // terminal the group shares: that must not look like a crash on a photo.
            for number in [SIGINT, SIGHUP, SIGTERM, SIGQUIT] { signal(number, SIG_IGN) }
            guard let answers = ControlPipe() else {
                output.diagnostic("imhost __decode-photo: no answer pipe on descriptor 3; this command is for imhost itself")
                return CommandLineTool.ExitCode.usage
            }
            return PhotoDecoderChild.childMain(answers: answers)
        })
}

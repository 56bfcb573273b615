import IMHostTerminal
#if canImport(Glibc)
import Glibc
#endif

// A write past a file-size limit fails with EFBIG, reported like a full disk, instead of killing
// the host with SIGXFSZ; a write to a closed pipe fails with EPIPE instead of SIGPIPE.
signal(SIGXFSZ, SIG_IGN)
signal(SIGPIPE, SIG_IGN)
exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst())))

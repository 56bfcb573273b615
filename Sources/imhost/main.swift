import IMHostTerminal
#if canImport(Glibc)
import Glibc
#endif

// A write past a file-size limit fails with EFBIG, reported like a full disk, instead of killing
// the host with SIGXFSZ; a write to a closed pipe fails with EPIPE instead of SIGPIPE.
signal(SIGXFSZ, SIG_IGN)
signal(SIGPIPE, SIG_IGN)
// Arguments are decoded from their bytes here, so one that is not UTF-8 is refused by its bytes
// instead of turning into another path, id or URL (U+FFFD where the bad bytes were).
var arguments: [String] = []
// (A stride, not 1..<argc: a process may be started with no arguments at all.)
for index in stride(from: 1, to: Int(CommandLine.argc), by: 1) {
    guard let pointer = CommandLine.unsafeArgv[index] else { continue }
    guard let argument = String(validatingCString: pointer) else {
        // argv[index] is a NUL-terminated C string the kernel gave us; its bytes are read as
        // UInt8 (CChar's bits) up to its length.
        let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
        exit(CommandLineTool.refuseUndecodable(argument: index, bytes: bytes))
    }
    arguments.append(argument)
}
exit(CommandLineTool.run(arguments))

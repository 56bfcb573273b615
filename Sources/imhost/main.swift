import IMHostTerminal
#if canImport(Glibc)
import Glibc
#endif

exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst())))

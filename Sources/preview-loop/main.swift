import Glibc
import PreviewLoopCLI

// Parse, run, exit: 0 success, 1 failure, 64 usage error (see `ExitStatus` in PreviewLoopCLI).
exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst())))

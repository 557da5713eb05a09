import Glibc
import PreviewLoopCLI
import PreviewLoopServer

// Parse, run, exit: 0 success, 1 failure, 64 usage error (see `ExitStatus` in PreviewLoopCLI).
// Arguments are read as bytes (CommandLineTool.processArguments): a file name need not be UTF-8.
exit(CommandLineTool.run(CommandLineTool.processArguments(), serve: ServeRun.run))

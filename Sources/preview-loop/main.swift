import Glibc
import PreviewLoopCLI
import PreviewLoopServer

// Parse, run, exit: 0 success, 1 failure, 64 usage error (see `ExitStatus` in PreviewLoopCLI).
if let argument = CommandLineTool.nonUTF8Argument() {
    let line = "Error: the argument '\(argument)' is not valid UTF-8; preview-loop takes UTF-8 paths only (rename the file, "
        + "or give a symbolic link with a UTF-8 name)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(64)
}
exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst()), serve: ServeCommand.run))

// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PreviewLoop",
    products: [
        .library(name: "PreviewLoop", targets: ["PreviewLoop"]),
        .library(name: "PreviewLoopServer", targets: ["PreviewLoopServer"]),
        .executable(name: "preview-loop", targets: ["preview-loop"]),
    ],
    targets: [
        // FFmpeg 5.1 from Debian's -dev packages, found through pkg-config.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat libavcodec libswscale libavutil",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswscale-dev", "libavutil-dev"])]
        ),
        // FreeType 2 from Debian's libfreetype-dev: draws the contact sheet's text (Sources/PreviewLoop/Text).
        .systemLibrary(
            name: "CFreeType",
            pkgConfig: "freetype2",
            providers: [.apt(["libfreetype-dev"])]
        ),
        // GNU libmicrohttpd from Debian's libmicrohttpd-dev: the HTTP server under `serve` (request parsing,
        // connection limits and timeouts, suspended connections for responses that finish later).
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // libcurl from Debian's libcurl4-openssl-dev: the HTTP client of remote range reads (s3:// inputs).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // FFmpeg's log callback takes a `va_list`, which Swift cannot: a C trampoline with one handler slot.
        .target(
            name: "CFFmpegLog",
            dependencies: ["CFFmpeg"]
        ),
        // The FFmpeg layer: the only module that imports CFFmpeg. Owners of FFmpeg objects, the error
        // funnel `check(...)`, version compatibility; `package` access, so nothing reaches clients.
        .target(
            name: "PreviewLoopFFmpeg",
            dependencies: ["CFFmpeg", "CFFmpegLog"]
        ),
        // Object storage and remote bytes: bounded range reads over libcurl (the only module that imports
        // CCurl), AWS Signature Version 4, the AWS SDKs' credential and endpoint resolution, SHA-256.
        // It knows nothing of FFmpeg: the library hands its reader to the FFmpeg layer's custom I/O.
        .target(
            name: "PreviewLoopRemote",
            dependencies: ["CCurl"]
        ),
        .target(
            name: "PreviewLoop",
            dependencies: ["PreviewLoopFFmpeg", "PreviewLoopRemote", "CFreeType"]
        ),
        // The jobs: one type per output (thumb, strip, sheet, loop, render, sprites, card, probe, batch,
        // wall, serve's settings), each owning its parameters' declarations (name, default, range, help),
        // its checks and its work; the image API's routes read the same declarations.
        .target(
            name: "PreviewLoopJobs",
            dependencies: ["PreviewLoop"],
            // The feed page's style and script, compiled into the binary (no file to install or fetch).
            resources: [.embedInCode("Feed/feed.css"), .embedInCode("Feed/feed.js")]
        ),
        // The command line as a view of the jobs: argument scanning, dispatch, help, the manual page and
        // the completion scripts, testable in-process.
        .target(
            name: "PreviewLoopCLI",
            dependencies: ["PreviewLoop", "PreviewLoopJobs"]
        ),
        // The image API server (`serve`), embeddable by a Swift service: routes, validators, cache,
        // render queue; the only module that imports CMicroHTTPD. It reads the jobs, never the CLI.
        .target(
            name: "PreviewLoopServer",
            dependencies: ["PreviewLoop", "PreviewLoopJobs", "PreviewLoopRemote", "CMicroHTTPD"]
        ),
        .executableTarget(
            name: "preview-loop",
            dependencies: ["PreviewLoopCLI", "PreviewLoopServer"]
        ),
        // The tests, one target per layer, over one support target: fixtures found through #filePath,
        // the one process runner (Child), the ffmpeg/ffprobe oracles and image comparison, the
        // 127.0.0.1 servers, the bad-input catalogue and the tags (.slow, .network).
        .target(
            name: "PreviewLoopTestSupport",
            dependencies: ["PreviewLoop", "PreviewLoopJobs", "PreviewLoopCLI"],
            path: "Tests/PreviewLoopTestSupport"
        ),
        // Pure: geometry, imaging, palettes, time positions, argument parsing in-process. No FFmpeg
        // layer, no binary, no subprocess.
        .testTarget(
            name: "PreviewLoopPureTests",
            dependencies: ["PreviewLoop", "PreviewLoopRemote", "PreviewLoopJobs", "PreviewLoopCLI", "PreviewLoopTestSupport"]
        ),
        // FFmpeg integration: the library on real fixtures, checked against the ffmpeg CLI.
        .testTarget(
            name: "PreviewLoopTests",
            dependencies: ["PreviewLoop", "PreviewLoopRemote", "PreviewLoopFFmpeg", "PreviewLoopJobs", "PreviewLoopCLI", "preview-loop", "PreviewLoopTestSupport"]
        ),
        // CLI end to end: the built `preview-loop` binary as a subprocess, and commands run in-process.
        .testTarget(
            name: "PreviewLoopCLITests",
            dependencies: ["PreviewLoop", "PreviewLoopRemote", "PreviewLoopJobs", "PreviewLoopCLI", "PreviewLoopServer", "preview-loop", "PreviewLoopTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

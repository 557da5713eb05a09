#!/bin/sh
# Type-checks Examples/Client against the debug build's PreviewLoop module: a second of work instead of
# rebuilding the library in the client's own package. Two targets, each type-checked as its own module:
# - Client: a client with its own Size, Source and Shape that names the library's as PreviewLoop.Size …,
#   plus the README's library example;
# - LibraryExample: the whole program Docs/library.md shows (LibraryExampleTests checks the page shows
#   this file word for word), with warnings as errors, so the page's code compiles without a warning.
# `make client` builds the client package for real (`swift build --package-path Examples/Client`).
set -eu
cd "$(dirname "$0")/.."
SWIFTC="${SWIFTC:-swiftc}"
typecheck() {
  "$SWIFTC" -typecheck -swift-version 6 -I .build/debug/Modules \
    -Xcc -fmodule-map-file=Sources/CFFmpeg/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CFreeType/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CCurl/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CFFmpegLog/include/module.modulemap -Xcc -ISources/CFFmpegLog/include \
    $(pkg-config --cflags-only-I freetype2 | sed 's/-I/-Xcc -I/g') "$@"
}
typecheck Examples/Client/Sources/Client/*.swift
echo "Examples/Client type-checks against PreviewLoop (PreviewLoop.Size, PreviewLoop.Source, PreviewLoop.Shape)"
typecheck -warnings-as-errors Examples/Client/Sources/LibraryExample/main.swift
echo "Examples/Client/Sources/LibraryExample (Docs/library.md's program) type-checks without a warning"

#!/bin/sh
# Builds the DocC archive of the PreviewLoop library without a package plugin: the symbol graph is
# extracted from the debug build's module (swift-symbolgraph-extract, seconds, no rebuild), then
# `docc convert` turns the catalog (Sources/PreviewLoop/PreviewLoop.docc) and the graph into
# .build/docs/PreviewLoop.doccarchive. Any DocC warning (a broken symbol link, a missing article) is
# an error. Run `swift build` first (`make docs` does).
set -eu
cd "$(dirname "$0")/.."
BIN="$(dirname "$(command -v swift)")"
OUT=.build/docs
GRAPHS="$OUT/symbol-graphs"
rm -rf "$OUT"
mkdir -p "$GRAPHS"
"$BIN/swift-symbolgraph-extract" -module-name PreviewLoop -target "$(uname -m)-unknown-linux-gnu" \
  -I .build/debug/Modules -minimum-access-level public -skip-inherited-docs -output-dir "$GRAPHS" \
  -Xcc -fmodule-map-file=Sources/CFFmpeg/module.modulemap \
  -Xcc -fmodule-map-file=Sources/CFreeType/module.modulemap \
  -Xcc -fmodule-map-file=Sources/CFFmpegLog/include/module.modulemap -Xcc -ISources/CFFmpegLog/include \
  $(pkg-config --cflags-only-I freetype2 | sed 's/-I/-Xcc -I/g')
"$BIN/docc" convert Sources/PreviewLoop/PreviewLoop.docc --additional-symbol-graph-dir "$GRAPHS" \
  --fallback-display-name PreviewLoop --fallback-bundle-identifier org.previewloop.PreviewLoop \
  --output-path "$OUT/PreviewLoop.doccarchive" --warnings-as-errors
echo "DocC archive: $OUT/PreviewLoop.doccarchive (no warnings)"

#!/bin/sh
# Builds the DocC archive of the PreviewLoop library without a package plugin: the symbol graph is
# extracted from the debug build's module (swift-symbolgraph-extract, seconds, no rebuild), then
# `docc convert` turns the catalog (Sources/PreviewLoop/PreviewLoop.docc) and the graph into
# .build/docs/PreviewLoop.doccarchive, and counts DocC's warnings (broken or ambiguous symbol links,
# undocumented parameters). `--strict` passes --warnings-as-errors: any warning fails the build;
# .ci/run runs it (`make docs-strict`) after `make test`. Run `swift build` first (`make docs` does).
set -eu
cd "$(dirname "$0")/.."
STRICT=""
[ "${1:-}" = "--strict" ] && STRICT=1
BIN="$(dirname "$(command -v swift)")"
OUT=.build/docs
GRAPHS="$OUT/symbol-graphs"
rm -rf "$OUT"
mkdir -p "$GRAPHS"
"$BIN/swift-symbolgraph-extract" -module-name PreviewLoop -target "$(uname -m)-unknown-linux-gnu" \
  -I .build/debug/Modules -minimum-access-level public -skip-inherited-docs -output-dir "$GRAPHS" \
  -Xcc -fmodule-map-file=Sources/CFFmpeg/module.modulemap \
  -Xcc -fmodule-map-file=Sources/CFreeType/module.modulemap \
  -Xcc -fmodule-map-file=Sources/CCurl/module.modulemap \
  -Xcc -fmodule-map-file=Sources/CFFmpegLog/include/module.modulemap -Xcc -ISources/CFFmpegLog/include \
  $(pkg-config --cflags-only-I freetype2 | sed 's/-I/-Xcc -I/g')
"$BIN/docc" convert Sources/PreviewLoop/PreviewLoop.docc --additional-symbol-graph-dir "$GRAPHS" \
  --fallback-display-name PreviewLoop --fallback-bundle-identifier org.previewloop.PreviewLoop \
  --output-path "$OUT/PreviewLoop.doccarchive" ${STRICT:+--warnings-as-errors} > "$OUT/docc.log" 2>&1 || { cat "$OUT/docc.log"; exit 1; }
warnings=$(grep -c '^warning:' "$OUT/docc.log" || true)
echo "DocC archive: $OUT/PreviewLoop.doccarchive ($warnings DocC warnings, listed in $OUT/docc.log)"

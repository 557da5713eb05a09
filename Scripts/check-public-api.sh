#!/bin/sh
# Compares the PreviewLoop module's public API (from the debug build, through swift-api-digester) with
# the checked-in list Tests/public-api.txt, so that a new (or lost) public symbol is a choice:
#   ./Scripts/check-public-api.sh          fails and prints the difference when they differ
#   ./Scripts/check-public-api.sh --update rewrites the list (commit it with the change that made it)
set -eu
cd "$(dirname "$0")/.."
DIGESTER="${DIGESTER:-$(dirname "$(command -v swiftc)")/swift-api-digester}"
dump=$(mktemp) current=$(mktemp)
trap 'rm -f "$dump" "$current"' EXIT
"$DIGESTER" -dump-sdk -module PreviewLoop -I .build/debug/Modules -o "$dump" \
  -Xcc -fmodule-map-file=Sources/CFFmpeg/module.modulemap \
  -Xcc -fmodule-map-file=Sources/CFreeType/module.modulemap \
  -Xcc -fmodule-map-file=Sources/CCurl/module.modulemap \
  -Xcc -fmodule-map-file=Sources/CFFmpegLog/include/module.modulemap -Xcc -ISources/CFFmpegLog/include \
  $(pkg-config --cflags-only-I freetype2 | sed 's/-I/-Xcc -I/g')
python3 Scripts/public-api.py "$dump" > "$current"
if [ "${1:-}" = "--update" ]; then
  cp "$current" Tests/public-api.txt
  echo "Tests/public-api.txt: $(wc -l < Tests/public-api.txt) public declarations"
elif ! diff -u Tests/public-api.txt "$current"; then
  echo "The public API changed (above: - the checked-in list, + the build). If that was meant, run" >&2
  echo "./Scripts/check-public-api.sh --update and commit Tests/public-api.txt." >&2
  exit 1
else
  echo "public API: $(wc -l < "$current") declarations, as in Tests/public-api.txt"
fi

#!/usr/bin/env bash
# Prints a regular expression matching the suites and tests tagged with any of the given tags, for
# `swift test --skip` or `--filter`: Swift 6.3's `swift test` cannot select by tag itself (its
# `--filter tag:slow` matches nothing). The tags are read where they are written (Tests/*/*.swift): a
# `.tags(...)` trait on an @Suite or @Test attribute applies to the next `struct` or `func` declared.
#
# Usage: Scripts/tagged-tests.sh slow network
#        swift test --skip "$(Scripts/tagged-tests.sh slow network)"
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ $# -eq 0 ]; then echo "usage: $0 TAG..." >&2; exit 64; fi
tags=$(IFS='|'; echo "$*")
pattern=$(awk -v tags="$tags" '
    FNR == 1 { module = FILENAME; sub(/^Tests\//, "", module); sub(/\/.*/, "", module); type = ""; pending = 0 }
    $0 ~ ("\\.tags\\([^)]*\\.(" tags ")[,)]") { pending = 1 }
    /^(public |package |final )*(struct|class|enum|actor) [A-Za-z_][A-Za-z_0-9]*/ {
        match($0, /(struct|class|enum|actor) [A-Za-z_][A-Za-z_0-9]*/)
        split(substr($0, RSTART, RLENGTH), words, " "); type = words[2]
        if (pending) { print module "\\." type "/"; pending = 0 }
        next
    }
    pending && /func [A-Za-z_][A-Za-z_0-9]*\(/ {
        match($0, /func [A-Za-z_][A-Za-z_0-9]*\(/)
        name = substr($0, RSTART + 5, RLENGTH - 6)
        print module "\\." type "/" name "\\("; pending = 0
    }
' Tests/*/*.swift | paste -sd '|')
if [ -z "$pattern" ]; then echo "no suite or test is tagged $*" >&2; exit 1; fi
echo "$pattern"

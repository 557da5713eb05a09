#!/usr/bin/env bash
# Memory soak: builds the tests in release and runs Tests/PreviewLoopTests/SoakTests.swift, which
# repeats open → sample one still → close (and a short loop, and refused inputs) 1,000 times in one
# process, printing VmRSS every 100 iterations and failing when it grows by 10 MB or more between
# iteration 100 and 1,000.
#
# Usage: Scripts/soak.sh            (any cwd; about 2 minutes the first time, mostly building)
#
# Builds in .build/soak so the ordinary debug and release builds are left alone. `@testable import`
# in the other test files needs -enable-testing in release.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="/opt/swift/usr/bin:$PATH"

SCRATCH=.build/soak
swift build -c release --scratch-path "$SCRATCH" --build-tests -Xswiftc -enable-testing
# The CLI the other tests run is the debug one; the soak tests do not use it.
PREVIEW_LOOP_SOAK=1 swift test -c release --scratch-path "$SCRATCH" --skip-build -Xswiftc -enable-testing \
    --filter SoakTests 2>&1 | grep -E "soak |✔|✘|Test run" | grep -v "started\.$"
exit "${PIPESTATUS[0]}"

#!/usr/bin/env bash
# The layer rules the compiler cannot hold (run by `make test`; exits 1 naming every violation).
#
# The compiler already holds the target graph: CLI -> PreviewLoop -> PreviewLoopFFmpeg -> CFFmpeg/CFFmpegLog
# (a lower target cannot import a higher one). This script checks what a target graph cannot:
#   1. `import CFFmpeg` / `import CFFmpegLog` (any access level) only in Sources/PreviewLoopFFmpeg.
#   2. No FFmpeg C identifiers (`AV[A-Z]…`, `av_…`, `avformat_…`, `avcodec_…`, `avio_…`, `sws_…`,
#      `cffmpeg_…`) in the code (comments stripped) of Sources/PreviewLoop, Sources/PreviewLoopCLI or Sources/preview-loop.
#   3. PreviewLoop imports the FFmpeg layer only as `internal import PreviewLoopFFmpeg` (a plain or
#      public import would hand its `package` types to clients); the CLI does not import it at all.
#   4. Folder layers inside Sources/PreviewLoop: a file may name types declared in its own folder or in
#      lower ones, never in a higher one nor in another folder of its own layer. Ranks: Geometry,
#      Support = 0; Imaging = 1; Text, Frames, Safety = 2; Decoding = 3; Loop, Sampling = 4; Output = 5 (it
#      renders loops and samples); Card, Sheet, Wall = 6; Batch = 7 (it makes sheets).
#   5. FFmpeg fields and functions deprecated after 5.1 (`pkt_duration`, `key_frame`,
#      `av_stream_get_side_data`, `interlaced_frame`, `top_field_first`, `channel_layout`, `channels`,
#      `ticks_per_frame`, …) appear in code only in Sources/CFFmpeg/CFFmpegCompat.h, which picks each
#      one or its replacement with FFmpeg's version macros, so a port to FFmpeg 6/7 changes one file.
#   6. Test targets: Tests/PreviewLoopPureTests starts no process and reads no fixture (no `Child`,
#      `Process(`, `TestPaths.fixture`, `cliBinary`, test servers, oracles or the bad-input catalogue),
#      and neither it, Tests/PreviewLoopCLITests nor Tests/PreviewLoopTestSupport imports PreviewLoopFFmpeg
#      or CFFmpeg (SwiftPM lets a target import a module it does not declare once that module is built).
#   7. `import CMicroHTTPD` only in Sources/PreviewLoopServer/HTTPDaemon.swift, and the server imports
#      neither FFmpeg nor its layer, nor the CLI: it sets a job's options from a query, so its code
#      neither uses the command-line parser nor spells a `--option` argument.
# Rules 1 and 2 have a transitional list (TRANSITIONAL below): files that still call FFmpeg directly
# until their C moves into the layer. It is a ratchet: a listed file that no longer needs the exemption
# fails the check too, so the list can only shrink.
#
# Usage: Scripts/check-layers.sh [ROOT]   (ROOT defaults to the repository; used by the self-test)
set -euo pipefail
ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$ROOT"

TRANSITIONAL=(
)
# Folder-layer arrows that still run upward (rule 4), as "file:Type"; the same ratchet applies.
KNOWN_UPWARD=(
)

python3 - "${TRANSITIONAL[@]}" --known "${KNOWN_UPWARD[@]}" <<'PY'
import os, re, sys
args = sys.argv[1:]
split = args.index("--known")
transitional, known = set(args[:split]), set(args[split + 1:])
failures = []

def code_of(path):
    """The file's text without // and /* */ comments and without string literal contents."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'"""(.*?)"""', '""', text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)

def swift_files(top):
    for folder, _, names in os.walk(top):
        for name in sorted(names):
            if name.endswith(".swift"):
                yield os.path.join(folder, name)

c_import = re.compile(r"^\s*(@\w+\s+)*((public|package|internal|fileprivate|private)\s+)?import\s+(CFFmpeg|CFFmpegLog)\b", re.M)
c_identifier = re.compile(r"\b(AV[A-Z][A-Za-z0-9_]*|av_\w+|avformat_\w+|avcodec_\w+|avio_\w+|sws_\w+|cffmpeg_\w+)")
layer_import = re.compile(r"^\s*(@\w+\s+)*((public|package|internal|fileprivate|private)\s+)?import\s+PreviewLoopFFmpeg\b", re.M)

upper = [p for top in ("Sources/PreviewLoop", "Sources/PreviewLoopJobs", "Sources/PreviewLoopCLI", "Sources/preview-loop")
         for p in swift_files(top)]
exempt_used = set()
for path in upper:
    code = code_of(path)
    hits = [m.group(0).split()[-1] for m in c_import.finditer(code)]
    identifiers = sorted(set(m.group(1) for m in c_identifier.finditer(code)))
    if path in transitional:
        if hits or identifiers:
            exempt_used.add(path)
        continue
    for module in hits:
        failures.append(f"{path}: imports {module} (only Sources/PreviewLoopFFmpeg may)")
    if identifiers:
        failures.append(f"{path}: names FFmpeg C identifiers outside the FFmpeg layer: {', '.join(identifiers[:6])}")
    for m in layer_import.finditer(code):
        line = m.group(0).strip()
        if path.startswith(("Sources/preview-loop/", "Sources/PreviewLoopCLI/", "Sources/PreviewLoopJobs/")):
            failures.append(f"{path}: the CLI imports the FFmpeg layer ({line})")
        elif not line.startswith("internal import"):
            failures.append(f"{path}: `{line}` must be `internal import PreviewLoopFFmpeg` (no package type may reach clients)")
for path in sorted(transitional - exempt_used):
    failures.append(f"{path}: listed as transitional but no longer calls FFmpeg: remove it from TRANSITIONAL")

rank = {"Geometry": 0, "Support": 0, "Imaging": 1, "Text": 2, "Frames": 2, "Safety": 2, "Decoding": 3,
        "Loop": 4, "Sampling": 4, "Output": 5, "Card": 6, "Sheet": 6, "Wall": 6, "Batch": 7}
declaration = re.compile(r"^(?:(?:public|package|internal|fileprivate|private|final|indirect)\s+)*"
                         r"(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z]\w*)", re.M)
declared = {}            # type name -> folder
files = list(swift_files("Sources/PreviewLoop"))
for path in files:
    parts = path.split("/")
    if len(parts) < 4:
        continue
    for m in declaration.finditer(code_of(path)):          # top-level declarations only
        declared.setdefault(m.group(1), parts[2])
known_used = set()
for path in files:
    parts = path.split("/")
    if len(parts) < 4 or parts[2] not in rank:
        continue
    code = code_of(path)
    for name, folder in declared.items():
        if folder not in rank or rank[folder] < rank[parts[2]] or folder == parts[2]:
            continue
        if re.search(r"\b" + re.escape(name) + r"\b", code):
            key = f"{path}:{name}"
            if key in known:
                known_used.add(key)
            else:
                how = "a folder of the same layer" if rank[folder] == rank[parts[2]] else "a higher layer"
                failures.append(f"{path}: {parts[2]}/ (layer {rank[parts[2]]}) uses {name} from {folder}/ (layer {rank[folder]}, {how})")
compat = "Sources/CFFmpeg/CFFmpegCompat.h"
deprecated = re.compile(r"\b(pkt_duration|key_frame|av_stream_get_side_data|interlaced_frame|top_field_first|"
                        r"channel_layout|ticks_per_frame|pkt_pos|pkt_size|coded_picture_number|display_picture_number|"
                        r"reordered_opaque|avcodec_close|av_init_packet)\b|\.channels\b")
for top in ("Sources", "Fuzz"):
    if not os.path.isdir(top):
        continue
    for folder, _, names in os.walk(top):
        for name in sorted(names):
            path = os.path.join(folder, name)
            if path == compat or not name.endswith((".swift", ".c", ".h")):
                continue
            hits = sorted(set(m.group(0) for m in deprecated.finditer(code_of(path))))
            if hits:
                failures.append(f"{path}: uses FFmpeg API deprecated after 5.1 ({', '.join(hits)}): go through {compat}")

ffmpeg_import = re.compile(r"^\s*(@\w+\s+)*((public|package|internal|fileprivate|private)\s+)?import\s+(PreviewLoopFFmpeg|CFFmpeg|CFFmpegLog)\b", re.M)
outside = re.compile(r"\b(Child|Process|HTTPTestServer|HostileServer|Oracle|WebOracle|BadInputs)\b|TestPaths\.(fixture|cliBinary)")
for top in ("Tests/PreviewLoopPureTests", "Tests/PreviewLoopCLITests", "Tests/PreviewLoopTestSupport"):
    for path in swift_files(top) if os.path.isdir(top) else []:
        code = code_of(path)
        if ffmpeg_import.search(code):
            failures.append(f"{path}: imports the FFmpeg layer; only Tests/PreviewLoopTests (FFmpeg integration) may")
        hits = sorted(set(m.group(0) for m in outside.finditer(code))) if top == "Tests/PreviewLoopPureTests" else []
        if hits:
            failures.append(f"{path}: a pure test uses {', '.join(hits)}; move it to Tests/PreviewLoopTests or Tests/PreviewLoopCLITests")

# Rule 7: libmicrohttpd is reached through one file, the daemon wrapper.
mhd_import = re.compile(r"^\s*(@\w+\s+)*((public|package|internal|fileprivate|private)\s+)?import\s+CMicroHTTPD\b", re.M)
daemon_file = "Sources/PreviewLoopServer/HTTPDaemon.swift"
for top in ("Sources", "Tests"):
    for path in swift_files(top):
        if path != daemon_file and mhd_import.search(code_of(path)):
            failures.append(f"{path}: imports CMicroHTTPD (only {daemon_file} may)")
        if path.startswith("Sources/PreviewLoopServer/") and (c_import.search(code_of(path)) or layer_import.search(code_of(path))):
            failures.append(f"{path}: the server imports FFmpeg or its layer (it renders through the jobs)")
        if path.startswith("Sources/PreviewLoopServer/"):
            code = code_of(path)
            if re.search(r"^\s*(@\w+\s+)*((public|package|internal|fileprivate|private)\s+)?import\s+PreviewLoopCLI\b", code, re.M):
                failures.append(f"{path}: the server imports the CLI (it reads the jobs, PreviewLoopJobs)")
            literals = re.sub(r"^\s*//[^\n]*", "", open(path, encoding="utf-8").read(), flags=re.M)
            if re.search(r"\bCommandLineParser\b", code) or re.search(r"\"--[a-z]", literals):
                failures.append(f"{path}: the server parses or spells a command line (set the job's options from the query)")

for key in sorted(known - known_used):
    failures.append(f"{key}: listed in KNOWN_UPWARD but no longer used: remove it")

for line in failures:
    print("check-layers: " + line)
if failures:
    print(f"check-layers: {len(failures)} violation(s)")
    sys.exit(1)
print(f"check-layers: ok ({len(upper)} files above the FFmpeg layer, {len(transitional)} transitional, {len(known)} known upward uses)")
PY

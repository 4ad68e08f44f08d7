# imgbake — `make demo` runs the embedded example, `make test` runs the tests. Both install the Debian
# packages they need first (Swift itself is not a Debian package: it must be on PATH).
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBS := pkg-config libvips-dev libcurl4-openssl-dev libgumbo-dev libcmark-gfm-dev \
        libcmark-gfm-extensions-dev libexif-dev libwebp-dev libsqlite3-dev libssl-dev python3 python3-jsonschema \
        python3-pip openssl curl make nginx
# The remote-cache tests start an S3-compatible server: moto's, from PyPI (Debian 12 does not package it).
MOTO := moto[server]>=5,<6

.PHONY: all deps build release demo test clean
all: build

deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: imgbake needs a Swift 6 toolchain on PATH (https://swift.org/install)"; exit 1; }
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build --product imgbake

release: deps
	$(SWIFT) build -c release --product imgbake

demo: release
	bash Examples/demo.sh

test: deps
	@python3 -c 'import jsonschema' 2>/dev/null || python3 -m pip install -q jsonschema
	@python3 -c 'import moto.server, boto3' 2>/dev/null || python3 -m pip install -q '$(MOTO)' \
	  || python3 -m pip install -q --break-system-packages '$(MOTO)'
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

clean:
	rm -rf .build out

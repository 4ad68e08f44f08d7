#!/usr/bin/env bash
# The Swift toolchain for CI, in a debian:12 container: swift.org's Debian 12 tarball, its signature
# checked against swift.org's published keys, unpacked into /opt/swift and put on PATH for the steps
# that follow. Swift is not a Debian package, and the project's Makefile expects it on PATH; the
# official `swift:*-bookworm` images are the same tarball on the same Debian, but a plain debian:12
# keeps CI's root the one `make dist-check` installs the package into, and the version is pinned here.
# Also the packages the toolchain itself needs (swift.org's list for Debian 12) and git, which the
# Makefile asks whether the tree has uncommitted changes.
set -euo pipefail
SWIFT_VERSION=${SWIFT_VERSION:-6.3.1}
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  binutils ca-certificates curl git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev \
  libncurses-dev libpython3-dev libsqlite3-0 libstdc++-12-dev libxml2-dev libz3-dev make pkg-config \
  python3 tzdata unzip zlib1g-dev >/dev/null

name="swift-${SWIFT_VERSION}-RELEASE"
url="https://download.swift.org/swift-${SWIFT_VERSION}-release/debian12/${name}/${name}-debian12.tar.gz"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -fsSL --retry 3 -o "$work/swift.tar.gz" "$url"
curl -fsSL --retry 3 -o "$work/swift.tar.gz.sig" "$url.sig"
export GNUPGHOME="$work/gnupg"
mkdir -m 700 "$GNUPGHOME"
curl -fsSL --retry 3 https://www.swift.org/keys/all-keys.asc | gpg --batch --quiet --import
gpg --batch --verify "$work/swift.tar.gz.sig" "$work/swift.tar.gz"
$SUDO mkdir -p /opt/swift
$SUDO tar -xzf "$work/swift.tar.gz" -C /opt/swift --strip-components=1
/opt/swift/usr/bin/swift --version
# Later steps of the job find it on PATH.
if [ -n "${GITHUB_PATH:-}" ]; then echo /opt/swift/usr/bin >> "$GITHUB_PATH"; fi

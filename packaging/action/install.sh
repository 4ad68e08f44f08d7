#!/usr/bin/env bash
# The action's first step: install imgbake from its release tarball, or the tarball `package` names,
# into the runner's tool cache ($RUNNER_TOOL_CACHE/imgbake/<version>/x64, as setup actions keep their
# tools), checked against the release's SHA256SUMS, and put it on PATH for the job's later steps. The
# tarball carries its libraries, so any x86_64 Linux runner will do: ubuntu-latest as it is, or a
# container. jq comes along for the job summary where the runner lacks it.
set -euo pipefail
: "${IMGBAKE_VERSION:?}" "${RUNNER_TEMP:?}" "${GITHUB_PATH:?}"
fail() { echo "::error::$*"; exit 1; }
[ "$(uname -s) $(uname -m)" = "Linux x86_64" ] || fail "imgbake is built for Linux on x86_64; this runner is $(uname -s) $(uname -m)"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

if [ -n "${IMGBAKE_PACKAGE:-}" ]; then
  tarball=$(realpath "$IMGBAKE_PACKAGE")
  version=$(basename "$tarball" | sed -n 's/^imgbake-\(.*\)-linux-x86_64\.tar\.gz$/\1/p')
  [ -n "$version" ] || fail "package: want an imgbake-<version>-linux-x86_64.tar.gz (make dist), not $IMGBAKE_PACKAGE"
else
  version=$IMGBAKE_VERSION
  name="imgbake-${version}-linux-x86_64.tar.gz"
  base="https://github.com/imgbake/imgbake/releases/download/v${IMGBAKE_VERSION}"
  tarball="$RUNNER_TEMP/$name"
  curl -fsSL --retry 3 -o "$tarball" "$base/$name" || fail "cannot download $base/$name"
  curl -fsSL --retry 3 -o "$RUNNER_TEMP/imgbake-SHA256SUMS" "$base/SHA256SUMS" || fail "cannot download $base/SHA256SUMS"
  (cd "$RUNNER_TEMP" && grep " $name\$" imgbake-SHA256SUMS | sha256sum -c --quiet -) || fail "$name does not match the release's SHA256SUMS"
fi

# Unpacked once per version (a tarball given as `package` each time: it may be a new build).
tools=${RUNNER_TOOL_CACHE:-$RUNNER_TEMP/tools}
dest="$tools/imgbake/$version/x64"
if [ -n "${IMGBAKE_PACKAGE:-}" ] || [ ! -f "$dest.complete" ]; then
  rm -rf "$dest" "$dest.complete"
  mkdir -p "$dest"
  tar -xzf "$tarball" -C "$dest" --strip-components=1
  touch "$dest.complete"
fi
echo "$dest/bin" >> "$GITHUB_PATH"
"$dest/bin/imgbake" --version
installed=$("$dest/bin/imgbake" --version | sed -n '1s/^imgbake \([^ ]*\) .*/\1/p')
[ "$installed" = "$version" ] || fail "asked for imgbake $version, the tarball holds $installed"

if ! command -v jq >/dev/null; then
  command -v apt-get >/dev/null || fail "the job summary needs jq, and this runner has neither jq nor apt-get"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends jq >/dev/null
fi

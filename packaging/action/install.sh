#!/usr/bin/env bash
# The action's first step: install imgbake's Debian package (never Swift). The package is the .deb given
# as `package`, else release `version` from GitHub, checked against the release's SHA256SUMS; apt
# installs the libraries it depends on. jq comes along for the job summary.
set -euo pipefail
: "${IMGBAKE_VERSION:?}" "${RUNNER_TEMP:?}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

command -v dpkg >/dev/null || { echo "::error::imgbake installs as a Debian package: this runner has no dpkg (use a Debian 12 runner or container: debian:12)"; exit 1; }
arch=$(dpkg --print-architecture)
# shellcheck source=/dev/null # the runner's own file, read for PRETTY_NAME in the error below
. /etc/os-release 2>/dev/null || true

$SUDO apt-get update -qq
tools="jq"
[ -n "${IMGBAKE_PACKAGE:-}" ] || command -v curl >/dev/null || tools="$tools curl ca-certificates"
# shellcheck disable=SC2086 # a list of package names
$SUDO apt-get install -y -qq --no-install-recommends $tools >/dev/null

if [ -n "${IMGBAKE_PACKAGE:-}" ]; then
  deb=$(realpath "$IMGBAKE_PACKAGE")
else
  name="imgbake_${IMGBAKE_VERSION}_${arch}.deb"
  base="https://github.com/imgbake/imgbake/releases/download/v${IMGBAKE_VERSION}"
  deb="$RUNNER_TEMP/$name"
  curl -fsSL --retry 3 -o "$deb" "$base/$name"
  curl -fsSL --retry 3 -o "$RUNNER_TEMP/imgbake-SHA256SUMS" "$base/SHA256SUMS"
  (cd "$RUNNER_TEMP" && grep " $name\$" imgbake-SHA256SUMS | sha256sum -c --quiet -)
fi

if ! $SUDO apt-get install -y -qq --no-install-recommends "$deb" >/dev/null; then
  echo "::error::the imgbake package is built for Debian 12 (bookworm) and its libraries; this runner is ${PRETTY_NAME:-unknown}. Run the job in a Debian 12 container (container: debian:12)."
  exit 1
fi
imgbake --version
installed=$(imgbake --version | sed -n '1s/^imgbake \([^ ]*\) .*/\1/p')
if [ -z "${IMGBAKE_PACKAGE:-}" ] && [ "$installed" != "$IMGBAKE_VERSION" ]; then
  echo "::error::asked for imgbake $IMGBAKE_VERSION, the package installed $installed"
  exit 1
fi

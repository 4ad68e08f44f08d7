#!/usr/bin/env bash
# The npm package `make dist` builds: dist/imgbake-<version>.tgz, for `npm install --save-dev imgbake`
# in the projects of the JavaScript generators (Astro, Eleventy, VitePress, Docusaurus, Next.js,
# SvelteKit), whose build scripts then run `imgbake build dist`. Laid out as the tarball is, so the
# binary finds its library through $ORIGIN/../lib/imgbake wherever npm puts the package:
#
#   package/bin/imgbake                      the tarball's bin/imgbake, the same file ("bin": imgbake)
#   package/lib/imgbake/libvips-*.so.42      the stack's libvips, as in the tarball
#   package/licenses/                        the licences the wheel and the tarball carry
#   package/README.md, package/LICENSE, package/package.json
#
# One package for the one platform there is (docs/install.md says why, and how more platforms are
# added): "os", "cpu" and "libc" make npm refuse it elsewhere with EBADPLATFORM, naming what it needs.
# No install script: nothing runs and nothing is downloaded when it is installed.
#
# Usage (from dist.sh): packaging/npm.sh VERSION BINARY LIBRARY LICENCES_DIR OUT_DIR
# Prints the package's path. Needs npm (any version: `npm pack` only reads the folder) and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$1 binary=$2 library=$3 licences=$4 out=$5
fail() { echo "npm: error: $*" >&2; exit 1; }
if ! [ -x "$binary" ] || ! [ -f "$library" ] || ! [ -d "$licences" ]; then
  fail "usage: $0 VERSION BINARY LIBRARY LICENCES_DIR OUT_DIR"
fi
command -v npm >/dev/null || fail "npm is not installed (make dist-deps installs Debian's)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# npm writes its logs and cache under $HOME unless told otherwise; this run keeps them to itself and
# asks no registry anything (pack needs none).
export npm_config_cache=$work/npm-cache npm_config_update_notifier=false npm_config_fund=false \
  npm_config_audit=false npm_config_loglevel=warn npm_config_offline=true

pkg=$work/package
install -D -m 0755 "$binary" "$pkg/bin/imgbake"
install -D -m 0644 "$library" "$pkg/lib/imgbake/$(basename "$library")"
install -d "$pkg/licenses"
cp "$licences"/* "$pkg/licenses/"
cp LICENSE "$pkg/LICENSE"
cp packaging/npm/README.md "$pkg/README.md"

# "bin" is the binary itself, not a Node script that starts it: no Node process stands between the
# shell and imgbake, so `imgbake serve`'s signals (Ctrl-C stops it and the dev server it started) and
# the exit status are imgbake's own, and nothing is added to each run's start. npm links it as
# node_modules/.bin/imgbake; the kernel resolves that link, so $ORIGIN is the package's bin/.
# "preferUnplugged": Yarn's Plug'n'Play keeps packages zipped unless told otherwise, and the binary
# must be a file next to its lib/. The fields' values are npm's names for Linux, x86_64 and glibc
# (process.platform, process.arch, and npm's own libc detection).
jq -n --arg version "$version" '{
  name: "imgbake",
  version: $version,
  description: "Makes every image of a static site local, responsive and cached, as one step after the generator (Astro, Eleventy, VitePress, Docusaurus, Next.js export, SvelteKit)",
  keywords: ["images", "responsive-images", "avif", "webp", "static-site", "astro", "eleventy", "vitepress", "docusaurus", "nextjs", "sveltekit"],
  homepage: "https://github.com/imgbake/imgbake",
  repository: { type: "git", url: "git+https://github.com/imgbake/imgbake.git" },
  bugs: { url: "https://github.com/imgbake/imgbake/issues" },
  license: "MIT",
  bin: { imgbake: "bin/imgbake" },
  files: ["bin/", "lib/", "licenses/"],
  os: ["linux"],
  cpu: ["x64"],
  libc: ["glibc"],
  preferUnplugged: true
}' > "$pkg/package.json"

# npm pack writes the tar (the package/ prefix, its own fixed times and modes) and gzips it. Its gzip
# leaves this package at 40.8 MB, over the 40 MB every artefact is held to (dist-check), where gzip -9
# makes 39.1 MB of the same tar: the tar npm wrote is kept byte for byte and only compressed again.
mkdir -p "$work/packed" "$out"
(cd "$pkg" && npm pack --pack-destination "$work/packed" >/dev/null)
packed=$(ls "$work"/packed/*.tgz)
made=$out/imgbake-$version.tgz
gzip -dc "$packed" | gzip -9n > "$made"
cmp -s <(gzip -dc "$packed") <(gzip -dc "$made") || fail "the tar in $made is not the one npm pack wrote"
# What npm put in it: the binary the tarball has, its library, and nothing of the build's own.
listed=$(tar -tzf "$made" | sort)
for want in package/bin/imgbake "package/lib/imgbake/$(basename "$library")" package/package.json; do
  grep -qx "$want" <<<"$listed" || fail "$made lacks $want"
done
cmp -s "$binary" <(tar -xzOf "$made" package/bin/imgbake) || fail "$made's bin/imgbake is not $binary"
echo "$made"

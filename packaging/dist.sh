#!/usr/bin/env bash
# `make dist`: dist/imgbake_<version>_<arch>.deb, dist/imgbake-<version>-linux-<machine>.tar.gz, the
# wheel dist/imgbake-<version>-py3-none-manylinux_*.whl (packaging/wheel.sh) and the npm package
# dist/imgbake-<version>.tgz (packaging/npm.sh), from
# the release binary (`make release`: the Swift runtime and the stack's static libraries linked in) and
# the stack's libvips beside it in lib/imgbake/ (packaging/stack/stack.sh), with the manual page
# generated from the argument parser's own definitions, the completions it writes for bash, zsh and
# fish, the README, the CHANGELOG and the licences; then lintian on the package. Both need nothing from
# the system but glibc 2.34, libstdc++ and libgcc_s (packaging/abi-floor.sh measures it). Run through
# `make dist`, which builds the binary first and installs dpkg-dev, lintian, patchelf, jq and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
BIN=${BIN:-.build/release/imgbake}
STACK=${STACK:-.build/stack}
DIST=${DIST:-dist}
# Debian policy wants a name and an address; the project's own goes here when it has one.
MAINTAINER=${DEB_MAINTAINER:-the imgbake authors <imgbake@users.noreply.github.com>}

fail() { echo "dist: error: $*" >&2; exit 1; }

# The stack's libvips, which the binary names (NEEDED) and finds through $ORIGIN/../lib/imgbake.
vips_lib=$(readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(libvips-.*\.so\.42\)\]/\1/p')
[ -n "$vips_lib" ] && [ -f "$STACK/lib/$vips_lib" ] || fail "$BIN needs no libvips-*.so.42 found in $STACK/lib (make stack)"

# The version is the binary's: SystemInfo.version, with +dirty when the tree had uncommitted changes.
version=$("$BIN" --version | sed -n '1s/^imgbake \([^ ]*\) (.*/\1/p')
[ -n "$version" ] || fail "$BIN --version names no version"
arch=$(dpkg --print-architecture)
machine=$(uname -m)
release_date=$(sed -n 's/^## [0-9][0-9.]* — \([0-9-]*\)$/\1/p' CHANGELOG.md | head -n1)
[ -n "$release_date" ] || fail "CHANGELOG.md has no released version heading (## X.Y.Z — YYYY-MM-DD)"
# Files get the last commit's time, so the same commit gives the same archives.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date -d "$release_date" +%s)}

# The manual: swift-argument-parser's generator over the definitions the parser dumps
# (--experimental-dump-help), so it says what --help says. Its plugin builds the products itself, in a
# configuration of its own: debug, since a release build without --static-swift-stdlib would compile
# everything again and relink the packaged binary. The page is for the packaged binary only if both
# binaries dump the same definitions, so that is checked.
"$SWIFT" package generate-manual --configuration debug --date "$release_date" >&2
debug_bin="$("$SWIFT" build --show-bin-path)/imgbake"
manual=.build/plugins/GenerateManual/outputs/ImgBakeCLI/imgbake.1
[ -s "$manual" ] || fail "the generate-manual plugin wrote no $manual"
cmp -s <("$BIN" --experimental-dump-help) <("$debug_bin" --experimental-dump-help) ||
  fail "$BIN and $debug_bin define different arguments: the manual would not describe the package"

umask 022
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Lay out one tree under `prefix` with the given zsh folder; the package and the tarball share it.
lay_out() { # root prefix zsh-folder
  local root=$1 prefix=$2 zsh=$3
  install -d "$root$prefix/bin" "$root$prefix/lib/imgbake" "$root$prefix/share/man/man1" \
    "$root$prefix/share/bash-completion/completions" "$root$prefix/share/$zsh" \
    "$root$prefix/share/fish/vendor_completions.d" "$root$prefix/share/doc/imgbake"
  # Symbols and the compiler's notes out (Debian keeps debug symbols apart); the Swift metadata sections
  # stay. The run path keeps only $ORIGIN/../lib/imgbake: the build's own .build/stack is not shipped.
  strip --strip-unneeded --remove-section=.comment -o "$root$prefix/bin/imgbake" "$BIN"
  patchelf --set-rpath '$ORIGIN/../lib/imgbake' "$root$prefix/bin/imgbake"
  chmod 0755 "$root$prefix/bin/imgbake"
  # The wheel's library as it ships (already stripped), as a shared library is installed, and the
  # licences of what the stack holds (packaging/copyright says which is whose).
  install -m 0644 "$STACK/lib/$vips_lib" "$root$prefix/lib/imgbake/$vips_lib"
  install -d "$root$prefix/share/doc/imgbake/stack"
  install -m 0644 "$STACK"/share/licenses/* "$STACK/stack.txt" "$root$prefix/share/doc/imgbake/stack/"
  gzip -9n < "$manual" > "$root$prefix/share/man/man1/imgbake.1.gz"
  # bash-completion sources its files: no #! line (lintian: bash-completion-with-hashbang).
  "$BIN" --generate-completion-script bash | sed '1{/^#!/d}' > "$root$prefix/share/bash-completion/completions/imgbake"
  "$BIN" --generate-completion-script zsh > "$root$prefix/share/$zsh/_imgbake"
  "$BIN" --generate-completion-script fish > "$root$prefix/share/fish/vendor_completions.d/imgbake.fish"
}

# The Debian package.
deb_root=$work/deb
lay_out "$deb_root" /usr zsh/vendor-completions
doc=$deb_root/usr/share/doc/imgbake
gzip -9n < README.md > "$doc/README.md.gz"
gzip -9n < CHANGELOG.md > "$doc/CHANGELOG.md.gz"
# A native package's changelog.gz is read as a Debian changelog: one entry for this version, which
# points at the project's own.
{
  printf 'imgbake (%s) bookworm; urgency=medium\n\n' "$version"
  printf '  * Release %s: what changed is in CHANGELOG.md.gz beside this file.\n\n' "$version"
  printf ' -- %s  %s\n' "$MAINTAINER" "$(date -R -u -d "$release_date")"
} | gzip -9n > "$doc/changelog.gz"
cp packaging/copyright "$doc/copyright"
install -d "$deb_root/usr/share/lintian/overrides"
cp packaging/lintian-overrides "$deb_root/usr/share/lintian/overrides/imgbake"

# Depends from the libraries the binary needs, as dpkg-shlibdeps finds their packages (it wants a
# debian/control to read, and nothing from it here, and the package tree to have its DEBIAN folder).
install -d "$work/shlibs/debian" "$deb_root/DEBIAN"
printf 'Source: imgbake\n\nPackage: imgbake\nArchitecture: any\n' > "$work/shlibs/debian/control"
# libvips-*.so.42 is the package's own (-l: a private library in the package tree), so only glibc,
# libstdc++ and libgcc_s remain; anything else would be a library taken from the system.
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -l"$deb_root/usr/lib/imgbake" -O "$deb_root/usr/bin/imgbake" \
  "$deb_root/usr/lib/imgbake/$vips_lib" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"
others=$(printf '%s\n' "$depends" | tr ',' '\n' | sed 's/(.*)//; s/ //g' | grep -v -x -e libc6 -e libstdc++6 -e libgcc-s1 || true)
[ -z "$others" ] || fail "the package would depend on more than glibc, libstdc++ and libgcc_s: $others"

installed_size=$(du -sk --apparent-size "$deb_root/usr" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$MAINTAINER|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" -e "s|@DEPENDS@|$depends|" packaging/control.in > "$deb_root/DEBIAN/control"
(cd "$deb_root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$deb_root/DEBIAN/md5sums"
find "$deb_root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$DIST"
rm -f "$DIST"/imgbake_*.deb "$DIST"/imgbake-*.tar.gz "$DIST"/imgbake-*.whl "$DIST"/imgbake-*.tgz "$DIST"/SHA256SUMS
deb="$DIST/imgbake_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$deb_root" "$deb" >&2

# The tarball: the same files under bin/ and share/ for /usr/local or anywhere, zsh's under
# site-functions (zsh looks there below /usr/local), the docs as they are, and INSTALL.
name=imgbake-$version-linux-$machine
tar_root=$work/tar
lay_out "$tar_root" "/$name" zsh/site-functions
doc=$tar_root/$name/share/doc/imgbake
cp README.md CHANGELOG.md LICENSE packaging/copyright "$doc/"
# The licence texts packaging/copyright names (Debian has them in /usr/share/common-licenses).
for text in Apache-2.0 GPL-3 LGPL-2.1 LGPL-3 MPL-2.0; do cp "/usr/share/common-licenses/$text" "$doc/$text"; done
floor=$(bash packaging/abi-floor.sh "$tar_root/$name/bin/imgbake" "$tar_root/$name/lib/imgbake/$vips_lib")
sed -e "s|@VERSION@|$version|g" -e "s|@GLIBC@|$(sed -n 's/^glibc //p' <<<"$floor")|g" \
    -e "s|@GLIBCXX@|$(sed -n 's/^libstdc++ //p' <<<"$floor")|g" packaging/INSTALL.in > "$tar_root/$name/INSTALL"
tarball="$DIST/$name.tar.gz"
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner -C "$tar_root" -cf - "$name" |
  gzip -9n > "$tarball"
# The wheel: the same binary and library, with the MkDocs and Sphinx plugins (packaging/wheel.sh), and
# the licences the tarball carries.
install -d "$work/licences"
cp "$doc"/LICENSE "$doc"/copyright "$doc"/Apache-2.0 "$doc"/GPL-3 "$doc"/LGPL-2.1 "$doc"/LGPL-3 "$doc"/MPL-2.0 "$work/licences/"
for file in "$doc"/stack/*; do cp "$file" "$work/licences/stack-$(basename "$file")"; done
wheel=$(bash packaging/wheel.sh "$version" "$tar_root/$name/bin/imgbake" "$tar_root/$name/lib/imgbake/$vips_lib" "$work/licences" "$DIST")
# The npm package: the same binary and library again, for package.json scripts (packaging/npm.sh).
npm_package=$(bash packaging/npm.sh "$version" "$tar_root/$name/bin/imgbake" "$tar_root/$name/lib/imgbake/$vips_lib" "$work/licences" "$DIST")
(cd "$DIST" && sha256sum "$(basename "$deb")" "$(basename "$tarball")" "$(basename "$npm_package")" "$(basename "$wheel")" > SHA256SUMS)

# Lintian: no errors; the warnings kept are overridden in packaging/lintian-overrides, each with why.
# (--show-overrides would make the overridden ones fail the run too, so they are listed from the file.)
echo "== lintian $deb" >&2
lintian --fail-on error,warning --display-info "$deb" >&2
grep -v -e '^#' -e '^$' packaging/lintian-overrides | sed 's/^/overridden (packaging\/lintian-overrides says why): /' >&2

echo "Depends: $depends" >&2
echo "$floor" | sed 's/^/needs at least: /' >&2
ls -l "$DIST"/imgbake* >&2
echo "$deb"

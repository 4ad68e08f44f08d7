#!/usr/bin/env bash
# `make dist`: dist/imgbake_<version>_<arch>.deb and dist/imgbake-<version>-linux-<machine>.tar.gz from
# the release binary (`make release`: the Swift runtime linked in), with the manual page generated from
# the argument parser's own definitions, the completions it writes for bash, zsh and fish, the README,
# the CHANGELOG and the licence; then lintian on the package. Run through `make dist`, which builds the
# binary first and installs dpkg-dev and lintian.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
BIN=${BIN:-.build/release/imgbake}
DIST=${DIST:-dist}
# Debian policy wants a name and an address; the project's own goes here when it has one.
MAINTAINER=${DEB_MAINTAINER:-the imgbake authors <imgbake@users.noreply.github.com>}

fail() { echo "dist: error: $*" >&2; exit 1; }

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
  install -d "$root$prefix/bin" "$root$prefix/share/man/man1" "$root$prefix/share/bash-completion/completions" \
    "$root$prefix/share/$zsh" "$root$prefix/share/fish/vendor_completions.d" "$root$prefix/share/doc/imgbake"
  # Symbols and the compiler's notes out (Debian keeps debug symbols apart); the Swift metadata sections stay.
  strip --strip-unneeded --remove-section=.comment -o "$root$prefix/bin/imgbake" "$BIN"
  chmod 0755 "$root$prefix/bin/imgbake"
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
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$deb_root/usr/bin/imgbake" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"

installed_size=$(du -sk --apparent-size "$deb_root/usr" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$MAINTAINER|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" -e "s|@DEPENDS@|$depends|" packaging/control.in > "$deb_root/DEBIAN/control"
(cd "$deb_root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$deb_root/DEBIAN/md5sums"
find "$deb_root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$DIST"
rm -f "$DIST"/imgbake_*.deb "$DIST"/imgbake-*.tar.gz "$DIST"/SHA256SUMS
deb="$DIST/imgbake_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$deb_root" "$deb" >&2

# The tarball: the same files under bin/ and share/ for /usr/local or anywhere, zsh's under
# site-functions (zsh looks there below /usr/local), the docs as they are, and INSTALL.
name=imgbake-$version-linux-$machine
tar_root=$work/tar
lay_out "$tar_root" "/$name" zsh/site-functions
doc=$tar_root/$name/share/doc/imgbake
cp README.md CHANGELOG.md LICENSE packaging/copyright "$doc/"
cp /usr/share/common-licenses/Apache-2.0 "$doc/Apache-2.0"
packages=$(printf '%s\n' "$depends" | tr ',' '\n' | sed 's/(.*)//; s/|.*//; s/ //g' | grep . | tr '\n' ' ' | sed 's/ $//')
sonames=$(readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/       \1/p')
python3 - "$work/INSTALL" "$version" "$packages" "$sonames" <<'EOF'
import sys
out, version, packages, sonames = sys.argv[1:]
text = open("packaging/INSTALL.in").read()
text = text.replace("@VERSION@", version).replace("@DEBIAN_PACKAGES@", packages).replace("@SONAMES@", sonames)
open(out, "w").write(text)
EOF
cp "$work/INSTALL" "$tar_root/$name/INSTALL"
tarball="$DIST/$name.tar.gz"
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner -C "$tar_root" -cf - "$name" |
  gzip -9n > "$tarball"
(cd "$DIST" && sha256sum "$(basename "$deb")" "$(basename "$tarball")" > SHA256SUMS)

# Lintian: no errors; the warnings kept are overridden in packaging/lintian-overrides, each with why.
# (--show-overrides would make the overridden ones fail the run too, so they are listed from the file.)
echo "== lintian $deb" >&2
lintian --fail-on error,warning --display-info "$deb" >&2
grep -v -e '^#' -e '^$' packaging/lintian-overrides | sed 's/^/overridden (packaging\/lintian-overrides says why): /' >&2

echo "Depends: $depends" >&2
ls -l "$DIST"/imgbake* >&2
echo "$deb"

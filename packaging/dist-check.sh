#!/usr/bin/env bash
# `make dist-check`: the package proven where a user would install it. In a clean Debian 12 root made
# with mmdebstrap (apt and the essential packages, from this machine's apt sources; cached as a tarball
# under ~/.cache/imgbake-dist, keyed on what made it, and made when absent), it installs dist/'s .deb
# with apt, so the Depends are what brings the libraries; checks that the root has no Swift; runs
# `imgbake --version`; checks the manual page and the completion files; builds Examples/site from a
# loopback HTTPS origin (run here, outside the root) into WebP variants and rewritten pages; then runs
# the GitHub Action's shell steps there (packaging/action/test_action.py). Run through `make dist-check`,
# which makes the package first. Needs root (mmdebstrap's root mode, chroot, mounts).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "dist-check: error: needs root (mmdebstrap, chroot, mount)" >&2; exit 1; }
# Mounts in the root (proc, the apt download cache) go away with this process: a mount namespace of
# its own. The network is the machine's, so the root reaches the origin on loopback.
if [ -z "${IMGBAKE_DIST_CHECK_NS:-}" ]; then
  IMGBAKE_DIST_CHECK_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi

DIST=${DIST:-dist}
CACHE=${IMGBAKE_DIST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/imgbake-dist}
SUITE=bookworm
START=$EPOCHREALTIME
fail() { echo "dist-check: FAIL: $*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }'; }
step() { echo; echo "== $* ($(elapsed "$START"))"; }

arch=$(dpkg --print-architecture)
debs=("$DIST"/imgbake_*_"$arch".deb)
[ ${#debs[@]} = 1 ] && [ -f "${debs[0]}" ] || fail "want exactly one $DIST/imgbake_*_$arch.deb (make dist): ${debs[*]}"
deb=${debs[0]}
version=$(dpkg-deb -f "$deb" Version)
echo "package: $deb ($(du -h "$deb" | cut -f1)), version $version"

# The root: what makes it is its key (mmdebstrap's version, the variant, the suite, this machine's
# Debian sources and the apt settings that say how to fetch).
mapfile -t sources < <(grep -l -s -E '(^|[[:space:]/])deb\.debian\.org|debian' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources || true)
[ ${#sources[@]} -gt 0 ] || fail "no Debian apt sources on this machine"
mapfile -t aptopts < <(grep -l -s '^Acquire::' /etc/apt/apt.conf.d/* || true)
key=$( { dpkg-query -W -f '${Version}' mmdebstrap; echo "variant=apt suite=$SUITE"; cat "${sources[@]}" "${aptopts[@]}"; } | sha256sum | cut -c1-16)
root_tar=$CACHE/root-$SUITE-$key.tar
mkdir -p "$CACHE/apt-archives/partial"

step "clean Debian root"
if [ -f "$root_tar" ]; then
  echo "cached: $root_tar"
else
  t=$EPOCHREALTIME
  mmdebstrap --variant=apt --mode=root --format=tar --quiet \
    "${aptopts[@]/#/--aptopt=}" "$SUITE" "$root_tar.part" "${sources[@]}"
  mv "$root_tar.part" "$root_tar"
  echo "made $root_tar in $(elapsed "$t") ($(du -h "$root_tar" | cut -f1))"
fi
# Older roots (another key) are left to be removed by hand; only this one is used.
root=$(mktemp -d /tmp/imgbake-dist-check.XXXXXX)
origin_pid=""
cleanup() {
  [ -z "$origin_pid" ] || kill "$origin_pid" 2>/dev/null || true
  umount -R "$root/proc" "$root/dev/pts" "$root/var/cache/apt/archives" 2>/dev/null || true
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
t=$EPOCHREALTIME
tar -C "$root" -xf "$root_tar"
echo "unpacked in $(elapsed "$t")"
mount -t proc proc "$root/proc"
mount --bind /dev/pts "$root/dev/pts"
mount --bind "$CACHE/apt-archives" "$root/var/cache/apt/archives"
cp /etc/resolv.conf "$root/etc/resolv.conf"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                   HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

step "install the package with apt"
grep -q '^VERSION_CODENAME=bookworm' "$root/etc/os-release" || fail "the root is not Debian 12"
in_root sh -c 'command -v imgbake' >/dev/null && fail "imgbake is already in the clean root"
mkdir -p "$root/tmp/pkg"
cp "$deb" "$root/tmp/pkg/"
before=$(in_root dpkg-query -W -f '${Package}\n' | wc -l)
in_root apt-get update -qq
in_root apt-get install -y -qq --no-install-recommends "/tmp/pkg/$(basename "$deb")" >/dev/null
after=$(in_root dpkg-query -W -f '${Package}\n' | wc -l)
echo "apt installed imgbake and $((after - before - 1)) packages it depends on: $(dpkg-deb -f "$deb" Depends)"

step "no Swift in the root"
in_root sh -c 'command -v swift || command -v swiftc' && fail "the root has a Swift toolchain"
swift_files=$(find "$root" -xdev \( -name 'libswiftCore*' -o -name 'libFoundation*.so*' -o -name 'libdispatch.so*' \) -print)
[ -z "$swift_files" ] || fail "Swift runtime files in the root: $swift_files"
missing=$(in_root ldd /usr/bin/imgbake | grep -E 'not found|swift' || true)
[ -z "$missing" ] || fail "ldd /usr/bin/imgbake: $missing"
echo "no swift, no swiftc, no Swift runtime library; every library imgbake needs comes from a package"

step "imgbake --version"
in_root imgbake --version | tee "$root/tmp/version.txt"
first=$(head -n1 "$root/tmp/version.txt")
[[ $first == "imgbake $version ("* ]] || fail "--version says '$first', the package is $version"
case "${IMGBAKE_BUILD_STATE:-}" in
  dirty) [[ $version == *+dirty ]] || fail "built from a tree with changes, but the version has no +dirty" ;;
  clean) [[ $version != *+dirty ]] || fail "built from a clean tree, but the version says +dirty" ;;
esac
grep -q '^libvips .*writes WebP: yes' "$root/tmp/version.txt" || fail "libvips in the root cannot write WebP"
for lib in libwebp libcurl SQLite; do grep -q "^$lib [0-9]" "$root/tmp/version.txt" || fail "--version names no $lib version"; done

step "manual page"
page=$root/usr/share/man/man1/imgbake.1.gz
[ -s "$page" ] || fail "no /usr/share/man/man1/imgbake.1.gz"
zcat "$page" > "$root/tmp/imgbake.1"
grep -q '^\.Dt IMGBAKE 1' "$root/tmp/imgbake.1" || fail "the manual page has no .Dt IMGBAKE 1"
warnings=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$root/tmp/imgbake.1" 2>&1 >/dev/null || true)
[ -z "$warnings" ] || fail "man --warnings: $warnings"
# It says what --help says: every subcommand and every option of the installed binary is in it.
for sub in $(in_root imgbake --help | awk '/^SUBCOMMANDS:/ {on=1; next} /^[^ ]/ {on=0} on && /^  [a-z]/ {print $1}'); do
  grep -q "^\.It Em $sub\$" "$root/tmp/imgbake.1" || fail "the manual page lacks the subcommand $sub"
  for option in $(in_root imgbake "$sub" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    grep -q -- "Fl ${option#-}" "$root/tmp/imgbake.1" || fail "the manual page lacks $sub $option"
  done
done
echo "$(wc -l < "$root/tmp/imgbake.1") lines; every subcommand and option of --help is in it; man --warnings says nothing"

step "completions"
for file in /usr/share/bash-completion/completions/imgbake /usr/share/zsh/vendor-completions/_imgbake \
            /usr/share/fish/vendor_completions.d/imgbake.fish; do
  [ -s "$root$file" ] || fail "no $file"
done
# bash, in the root: the completion function completes a subcommand and an option.
words=$(in_root bash -c 'source /usr/share/bash-completion/completions/imgbake
  COMP_WORDS=(imgbake ca); COMP_CWORD=1; COMP_LINE="imgbake ca"; COMP_POINT=${#COMP_LINE}; _imgbake imgbake ca imgbake
  printf "%s\n" "${COMPREPLY[@]}"
  COMPREPLY=(); COMP_WORDS=(imgbake build --che); COMP_CWORD=2; COMP_LINE="imgbake build --che"; COMP_POINT=${#COMP_LINE}
  _imgbake imgbake --che build; printf "%s\n" "${COMPREPLY[@]}"')
[ "$words" = $'cache\n--check' ] || fail "bash completion gave '$words'"
# zsh and fish are not in the root: their files are parsed here.
zsh -n "$root/usr/share/zsh/vendor-completions/_imgbake" || fail "zsh cannot parse _imgbake"
fish --no-execute "$root/usr/share/fish/vendor_completions.d/imgbake.fish" || fail "fish cannot parse imgbake.fish"
echo "bash completes 'imgbake ca' to cache and 'build --che' to --check; zsh and fish parse theirs"

step "imgbake build Examples/site"
# The loopback origin of `make demo`, posing as images.example.com over HTTPS; imgbake in the root
# reaches it through --connect-to and trusts its certificate through --cacert.
gh=$root/tmp/gh
mkdir -p "$gh"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=images.example.com \
  -addext subjectAltName=DNS:images.example.com -keyout "$gh/origin-key.pem" -out "$gh/origin-cert.pem" 2>/dev/null
python3 Tests/Support/origin.py --root Examples/images --tls-cert "$gh/origin-cert.pem" --tls-key "$gh/origin-key.pem" \
  --watch-parent > "$gh/origin.port" &
origin_pid=$!
for _ in $(seq 50); do grep -q PORT "$gh/origin.port" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/PORT/ {print $2}' "$gh/origin.port")
[ -n "$port" ] || fail "the origin did not start"
cp -r Examples/site "$root/tmp/site"
status=0
in_root imgbake build /tmp/site --out /tmp/out --cache-dir /tmp/cache --report /tmp/report.json \
  --connect-to "images.example.com:443:127.0.0.1:$port" --cacert /tmp/gh/origin-cert.pem \
  > "$root/tmp/build.out" 2> "$root/tmp/build.err" || status=$?
cat "$root/tmp/build.out" "$root/tmp/build.err"
[ "$status" = 0 ] || fail "imgbake build exited $status"
webps=$(find "$root/tmp/out" -name '*.webp' | wc -l)
[ "$webps" -gt 0 ] || fail "no WebP variants in the output"
grep -q 'image/webp' "$root/tmp/out/index.html" || fail "index.html offers no WebP"
grep -q '_img/' "$root/tmp/out/index.html" || fail "index.html was not rewritten"
grep -q '_img/' "$root/tmp/out/posts/first-light.md" || fail "posts/first-light.md was not rewritten"
grep -q 'not-there.jpg: HTTP 404' "$root/tmp/build.err" || fail "the missing image was not reported"
python3 - "$root/tmp/report.json" "$version" <<'EOF' || fail "the report does not name the package's version"
import json, sys
report = json.load(open(sys.argv[1]))
sys.exit(0 if report["imgbake"] == sys.argv[2] else 1)
EOF
echo "$webps WebP files; index.html and posts/first-light.md rewritten; the report says imgbake $version"

step "the GitHub Action's steps"
python3 packaging/action/test_action.py --root "$root" --package "$deb" --site Examples/site \
  --args "--connect-to images.example.com:443:127.0.0.1:$port --cacert /tmp/gh/origin-cert.pem"

step "dist-check passed"

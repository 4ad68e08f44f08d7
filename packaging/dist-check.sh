#!/usr/bin/env bash
# `make dist-check`: the artefacts proven where users would install them. In clean Debian 12 (bookworm)
# and Debian 13 (trixie) roots made with `mmdebstrap --variant=minbase` (no libvips, libcurl, gumbo or
# cmark-gfm; cached as tarballs under ~/.cache/imgbake-dist, keyed on what made them), for each root:
#   - the tarball unpacked anywhere starts, `imgbake --version` names libvips 8.16 or later and libjxl;
#   - it builds a site of local JPEG, PNG, animated GIF and WebP images and a remote https:// image from
#     a loopback origin, writing AVIF by default and JPEG XL when asked for it: first with no CA store
#     in the root (the fetch fails and names SSL_CERT_FILE),
#     then with ca-certificates installed and the origin's CA added to the root's store;
#   - `apt install ./dist/imgbake_*.deb` succeeds (its Depends: glibc, libstdc++, libgcc_s and
#     ca-certificates only) and the installed binary builds the same site;
# and every one of those four output trees is byte for byte the same. Then the npm package in Debian 12
# and 13 roots that have Debian's nodejs and npm and nothing else of note (no registry reachable): `npm
# install --offline` of the file into a fresh project, `npx imgbake --version`, and `npm run build` (a
# script that writes a site with a local image and one from a loopback origin, then `imgbake build
# dist`) localising every image, again with nothing encoded, and again in a fresh checkout that kept
# only node_modules (where docs/cache.md puts the cache on hosts that keep that); npm refusing it for
# arm64 and macOS (EBADPLATFORM, naming linux and x64), and for musl where npm reads "libc" (this
# machine's npm, from 10 on; Debian's 9.2 does not). Then, in the Debian 12 root: the
# manual page, the completions and Examples/site; in a third, fresh Debian 13 root, the GitHub Action's
# shell steps with the tarball. Before all that, the glibc floor of the binary and its library (at most
# 2.34), the sizes of the artefacts (at most 40 MB), and the npm package's binary and library being the
# tarball's files.
# Needs root (mmdebstrap's root mode, chroot, mounts). Run through `make dist-check`, which makes the
# artefacts first.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "dist-check: error: needs root (mmdebstrap, chroot, mount)" >&2; exit 1; }
# Mounts in the roots (proc, the apt download cache) go away with this process: a mount namespace of
# its own. The network is the machine's, so a root reaches the origin on loopback.
if [ -z "${IMGBAKE_DIST_CHECK_NS:-}" ]; then
  IMGBAKE_DIST_CHECK_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi

DIST=${DIST:-dist}
CACHE=${IMGBAKE_DIST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/imgbake-dist}
MAX_BYTES=$((40 * 1000 * 1000))
START=$EPOCHREALTIME
fail() { echo "dist-check: FAIL: $*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }'; }
step() { echo; echo "== $* ($(elapsed "$START"))"; }

arch=$(dpkg --print-architecture)
debs=("$DIST"/imgbake_*_"$arch".deb)
tars=("$DIST"/imgbake-*-linux-"$(uname -m)".tar.gz)
wheels=("$DIST"/imgbake-*-py3-none-manylinux_*_"$(uname -m)".whl)
npms=("$DIST"/imgbake-[0-9]*.tgz)
[ ${#debs[@]} = 1 ] && [ -f "${debs[0]}" ] || fail "want exactly one $DIST/imgbake_*_$arch.deb (make dist): ${debs[*]}"
[ ${#tars[@]} = 1 ] && [ -f "${tars[0]}" ] || fail "want exactly one $DIST/imgbake-*-linux-$(uname -m).tar.gz (make dist): ${tars[*]}"
[ ${#wheels[@]} = 1 ] && [ -f "${wheels[0]}" ] || fail "want exactly one $DIST/imgbake-*-py3-none-manylinux_*.whl (make dist): ${wheels[*]}"
[ ${#npms[@]} = 1 ] && [ -f "${npms[0]}" ] || fail "want exactly one $DIST/imgbake-<version>.tgz, the npm package (make dist): ${npms[*]}"
deb=${debs[0]} tarball=${tars[0]} wheel=${wheels[0]} npm_package=${npms[0]}
version=$(dpkg-deb -f "$deb" Version)
[ "$(basename "$npm_package")" = "imgbake-$version.tgz" ] || fail "the npm package is $npm_package, not imgbake-$version.tgz"
echo "package: $deb, tarball: $tarball, wheel: $wheel, npm: $npm_package, version $version"

step "what the artefacts need from the system, and their sizes"
work=$(mktemp -d /tmp/imgbake-dist-check.XXXXXX)
roots=() origin_pid="" npm_origin_pids=()
cleanup() {
  [ -z "$origin_pid" ] || kill "$origin_pid" 2>/dev/null || true
  for pid in "${npm_origin_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for r in "${roots[@]}"; do
    umount -R "$r/proc" "$r/dev/pts" "$r/var/cache/apt/archives" 2>/dev/null || true
  done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
tar -C "$work" -xzf "$tarball"
unpacked=$(echo "$work"/imgbake-*/)
unpacked=${unpacked%/}
floor=$(bash packaging/abi-floor.sh "$unpacked/bin/imgbake" "$unpacked"/lib/imgbake/libvips-*.so.42)
echo "$floor"
glibc=$(sed -n 's/^glibc //p' <<<"$floor")
[ "$(printf '%s\n2.34\n' "$glibc" | sort -V | tail -n1)" = 2.34 ] || fail "the binary needs glibc $glibc, more than 2.34"
needed=$(readelf -d "$unpacked/bin/imgbake" "$unpacked"/lib/imgbake/*.so.42 | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u |
         grep -v -x -e 'libvips-.*\.so\.42' -e 'lib\(c\|m\|dl\|pthread\|resolv\)\.so\.[0-9]' -e 'ld-linux-x86-64\.so\.2' \
                   -e 'libstdc++\.so\.6' -e 'libgcc_s\.so\.1' || true)
[ -z "$needed" ] || fail "the artefacts need libraries beyond glibc, libstdc++ and libgcc_s: $needed"
runpath=$(readelf -d "$unpacked/bin/imgbake" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[ "$runpath" = '$ORIGIN/../lib/imgbake' ] || fail "the shipped binary's run path is '$runpath'"
# The wheel's platform is the measured floor: pip installs it where that glibc is, and nowhere older.
[[ $(basename "$wheel") == *-py3-none-manylinux_${glibc/./_}_$(uname -m).whl ]] || fail "the wheel's tag is not the floor, glibc $glibc: $wheel"
for file in "$tarball" "$deb" "$wheel" "$npm_package"; do
  size=$(stat -c %s "$file")
  echo "$(basename "$file"): $size bytes"
  [ "$size" -le "$MAX_BYTES" ] || fail "$file is over 40 MB"
done
echo "$(basename "$unpacked/bin/imgbake"): $(stat -c %s "$unpacked/bin/imgbake") bytes, lib/imgbake: $(du -sb "$unpacked/lib/imgbake" | cut -f1) bytes"
# The npm package carries the tarball's files, not a build of its own: the same binary and library.
mkdir -p "$work/npm-unpacked"
tar -C "$work/npm-unpacked" -xzf "$npm_package"
for file in bin/imgbake "lib/imgbake/$(basename "$unpacked"/lib/imgbake/libvips-*.so.42)"; do
  cmp -s "$unpacked/$file" "$work/npm-unpacked/package/$file" || fail "the npm package's $file is not the tarball's"
  echo "$file: sha256 $(sha256sum < "$unpacked/$file" | cut -c1-16)… in the tarball and the npm package alike"
done
jq -e '.bin.imgbake == "bin/imgbake" and .os == ["linux"] and .cpu == ["x64"] and .libc == ["glibc"] and (.scripts // {} | length) == 0' \
  "$work/npm-unpacked/package/package.json" >/dev/null || fail "the npm package's package.json: $(cat "$work/npm-unpacked/package/package.json")"
echo "package.json: bin imgbake, os linux, cpu x64, libc glibc, no scripts"

# A clean root of `suite`: made once with mmdebstrap (its key: mmdebstrap's version, the variant, the
# suite, the mirror and the apt settings), unpacked into a folder of this run.
MIRROR=${IMGBAKE_DIST_MIRROR:-http://deb.debian.org/debian}
mapfile -t aptopts < <(grep -l -s '^Acquire::' /etc/apt/apt.conf.d/* || true)
mkdir -p "$CACHE/apt-archives/partial"
# `packages` (comma-separated) are installed into the root when it is made, and are part of its key and
# of its tarball's name: a root of their own, cached beside the plain one.
fresh_root() { # suite [name [packages]] -> prints the root's path
  local suite=$1 name=${2:-$1} packages=${3:-} key root_tar root
  key=$( { dpkg-query -W -f '${Version}' mmdebstrap; echo "variant=minbase suite=$suite mirror=$MIRROR${packages:+ include=$packages}"
           cat "${aptopts[@]}"; } | sha256sum | cut -c1-16)
  root_tar=$CACHE/root-$suite-minbase${packages:+-${packages//,/-}}-$key.tar
  if [ ! -f "$root_tar" ]; then
    mmdebstrap --variant=minbase --mode=root --format=tar --quiet ${packages:+"--include=$packages"} "${aptopts[@]/#/--aptopt=}" \
      "$suite" "$root_tar.part" "$MIRROR" >&2
    mv "$root_tar.part" "$root_tar"
  fi
  root=$work/root-$name
  mkdir -p "$root"
  tar -C "$root" -xf "$root_tar"
  mount -t proc proc "$root/proc"
  mount --bind /dev/pts "$root/dev/pts"
  mount --bind "$CACHE/apt-archives" "$root/var/cache/apt/archives"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  echo "$root"
}
in_root() { # root command...
  local root=$1; shift
  chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

step "the loopback origin"
# Posing as images.example.com over HTTPS, with a certificate of its own that each root comes to trust.
gh=$work/origin
mkdir -p "$gh"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=images.example.com \
  -addext subjectAltName=DNS:images.example.com -keyout "$gh/origin-key.pem" -out "$gh/origin-cert.pem" 2>/dev/null
python3 Tests/Support/origin.py --root Examples/images --tls-cert "$gh/origin-cert.pem" --tls-key "$gh/origin-key.pem" \
  --watch-parent > "$gh/origin.port" &
origin_pid=$!
for _ in $(seq 50); do grep -q PORT "$gh/origin.port" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/PORT/ {print $2}' "$gh/origin.port")
[ -n "$port" ] || fail "the origin did not start"
connect="images.example.com:443:127.0.0.1:$port"
echo "https://images.example.com -> 127.0.0.1:$port"

# The site every artefact builds in every root: one page with each kind of image the stack decodes.
stack_site=$work/stack-site
mkdir -p "$stack_site/img"
cp Examples/images/hubble.jpg Examples/images/coffee.png Examples/images/astronaut-round.png Examples/images/deep-field.gif \
  Tests/Fixtures/stack/astronaut.webp "$stack_site/img/"
cat > "$stack_site/index.html" <<'HTML'
<!doctype html><html><head><title>The stack</title></head><body>
<img src="img/hubble.jpg" alt="JPEG">
<img src="img/coffee.png" alt="PNG photograph (its fallback a JPEG)">
<img src="img/astronaut-round.png" alt="PNG with transparency">
<img src="img/deep-field.gif" alt="animated GIF">
<img src="img/astronaut.webp" alt="WebP">
<img src="https://images.example.com/img/astronaut.jpg" alt="remote, over HTTPS">
</body></html>
HTML
# Builds the stack site in `root` with `binary` into /tmp/out-<name>; prints the tree's digest.
build_stack_site() { # root binary name
  local root=$1 binary=$2 name=$3
  rm -rf "$root/tmp/stack-site" "$root/tmp/out-$name" "$root/tmp/cache-$name"
  cp -r "$stack_site" "$root/tmp/stack-site"
  in_root "$root" "$binary" build /tmp/stack-site --out "/tmp/out-$name" --cache-dir "/tmp/cache-$name" \
    --connect-to "$connect" > "$root/tmp/$name.out" 2> "$root/tmp/$name.err" ||
    { cat "$root/tmp/$name.err" >&2; fail "$name: imgbake build exited non-zero"; }
  grep -q 'warning' "$root/tmp/$name.err" && { cat "$root/tmp/$name.err" >&2; fail "$name: the build warned"; }
  for kind in jpg png gif webp avif; do
    ls "$root/tmp/out-$name/_img/"*."$kind" >/dev/null 2>&1 || fail "$name: no .$kind file in _img"
  done
  grep -q 'images.example.com' "$root/tmp/out-$name/index.html" && fail "$name: the https:// image was not localised"
  # A <picture> for each of the six (a page without styles or scripts: the wrapper changes nothing of
  # it), the WebP's with its AVIF; AVIF first where it is the smallest.
  [ "$(grep -o '<picture style="display:contents"><source hidden type="image/' "$root/tmp/out-$name/index.html" | wc -l)" = 6 ] ||
    fail "$name: not every image became a <picture>"
  grep -q '<source hidden type="image/avif"' "$root/tmp/out-$name/index.html" || fail "$name: no AVIF <source>"
  # JPEG XL, asked for beside WebP: libjxl in the stack writes it.
  printf '[images]\nformats = ["jxl", "webp", "original"]\n' > "$root/tmp/jxl.toml"
  in_root "$root" "$binary" build /tmp/stack-site --out "/tmp/out-$name-jxl" --cache-dir "/tmp/cache-$name" --config /tmp/jxl.toml \
    --connect-to "$connect" --quiet 2> "$root/tmp/$name-jxl.err" || { cat "$root/tmp/$name-jxl.err" >&2; fail "$name: the JPEG XL build failed"; }
  ls "$root/tmp/out-$name-jxl/_img/"*.jxl >/dev/null 2>&1 || fail "$name: no .jxl file in _img"
  grep -q '<source hidden type="image/jxl"' "$root/tmp/out-$name-jxl/index.html" || fail "$name: no JPEG XL <source>"
  rm -rf "$root/tmp/out-$name-jxl"
  (cd "$root/tmp/out-$name" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

declare -A trees=()
for suite in bookworm trixie; do
  step "Debian $suite: a clean minbase root"
  root=$(fresh_root "$suite")
  roots+=("$root")
  sed -n 's/^PRETTY_NAME=//p' "$root/etc/os-release"
  for pkg in libvips42 libvips42t64 libcurl4 libcurl4t64 libgumbo1 libgumbo2 libgumbo3 libcmark-gfm0.29.0.gfm.6 ca-certificates; do
    in_root "$root" dpkg -s "$pkg" >/dev/null 2>&1 && fail "$suite: the clean root has $pkg"
  done
  echo "no libvips, libcurl, gumbo, cmark-gfm or CA certificates in it"

  step "Debian $suite: the tarball, unpacked anywhere"
  mkdir -p "$root/opt/somewhere/else"
  tar -C "$root/opt/somewhere/else" -xzf "$tarball"
  bin=/opt/somewhere/else/$(basename "$unpacked")/bin/imgbake
  in_root "$root" "$bin" --version | tee "$root/tmp/version.txt"
  vips=$(sed -n 's/^libvips \([0-9.]*\) .*/\1/p' "$root/tmp/version.txt")
  [ -n "$vips" ] && [ "$(printf '%s\n8.16\n' "$vips" | sort -V | head -n1)" = 8.16 ] || fail "$suite: libvips '$vips' is not 8.16 or later"
  grep -q '(writes WebP: yes, AVIF: yes;' "$root/tmp/version.txt" || fail "$suite: the stack cannot write WebP and AVIF"
  grep -q '^libjxl 0\.[0-9.]* (writes JPEG XL)$' "$root/tmp/version.txt" || fail "$suite: --version names no libjxl"
  [[ $(head -n1 "$root/tmp/version.txt") == "imgbake $version ("* ]] || fail "$suite: --version does not say $version"

  step "Debian $suite: no CA store yet, so HTTPS says what to set"
  cp -r "$stack_site" "$root/tmp/no-store"
  in_root "$root" "$bin" build /tmp/no-store --out /tmp/out-no-store --cache-dir /tmp/cache-no-store --connect-to "$connect" \
    > /dev/null 2> "$root/tmp/no-store.err" || true
  cat "$root/tmp/no-store.err"
  grep -q 'images.example.com/img/astronaut.jpg: TLS failed: no CA certificates found .*SSL_CERT_FILE.*SSL_CERT_DIR' "$root/tmp/no-store.err" ||
    fail "$suite: without a CA store the build does not name SSL_CERT_FILE and SSL_CERT_DIR"

  step "Debian $suite: the system's store, with the origin's CA in it"
  in_root "$root" apt-get update -qq
  in_root "$root" apt-get install -y -qq --no-install-recommends ca-certificates >/dev/null
  cp "$gh/origin-cert.pem" "$root/usr/local/share/ca-certificates/imgbake-check-origin.crt"
  in_root "$root" update-ca-certificates >/dev/null
  trees[$suite-tarball]=$(build_stack_site "$root" "$bin" tarball)
  # SSL_CERT_FILE names a store of its own: the origin's certificate alone is enough.
  cp "$gh/origin-cert.pem" "$root/tmp/only-origin.pem"
  rm -rf "$root/tmp/out-env" "$root/tmp/cache-env"
  in_root "$root" env SSL_CERT_FILE=/tmp/only-origin.pem "$bin" build /tmp/stack-site --out /tmp/out-env --cache-dir /tmp/cache-env \
    --connect-to "$connect" --quiet || fail "$suite: SSL_CERT_FILE was not honoured"
  grep -q 'images.example.com' "$root/tmp/out-env/index.html" && fail "$suite: with SSL_CERT_FILE the https:// image was not localised"
  echo "JPEG, PNG, animated GIF, WebP and https:// localised, AVIF and JPEG XL written (tree ${trees[$suite-tarball]}); SSL_CERT_FILE honoured"

  step "Debian $suite: apt install the .deb"
  mkdir -p "$root/tmp/pkg"
  cp "$deb" "$root/tmp/pkg/"
  before=$(in_root "$root" dpkg-query -W -f '${Package}\n' | wc -l)
  in_root "$root" apt-get install -y -qq --no-install-recommends "/tmp/pkg/$(basename "$deb")" >/dev/null
  after=$(in_root "$root" dpkg-query -W -f '${Package}\n' | wc -l)
  echo "apt installed imgbake and $((after - before - 1)) other packages (Depends: $(dpkg-deb -f "$deb" Depends))"
  missing=$(in_root "$root" ldd /usr/bin/imgbake | grep -E 'not found|swift' || true)
  [ -z "$missing" ] || fail "$suite: ldd /usr/bin/imgbake: $missing"
  trees[$suite-deb]=$(build_stack_site "$root" /usr/bin/imgbake deb)
  echo "/usr/bin/imgbake built the same site (tree ${trees[$suite-deb]})"
  [ "$suite" = bookworm ] && bookworm_root=$root
done

step "the same output everywhere"
for k in "${!trees[@]}"; do echo "$k ${trees[$k]}"; done | sort
[ "$(printf '%s\n' "${trees[@]}" | sort -u | wc -l)" = 1 ] || fail "the output trees differ between artefacts or roots"
echo "the tarball and the .deb, in Debian 12 and 13, wrote the same bytes"

# The npm package where a JavaScript site's build would install it. The roots have Debian's nodejs and
# npm (made with them, cached as a root of their own) and no registry: npm is pointed at a closed port
# on loopback and told --offline, so the package must install from its file alone. The site's remote
# image comes from an origin inside the root (node's http module, on loopback), named
# images.example.com in the page and routed there by the site's imgbake.toml. The cache is where
# docs/cache.md puts it on hosts that keep node_modules between builds: IMGBAKE_CACHE_DIR=
# node_modules/.cache/imgbake.
npm_site=$work/npm-site
mkdir -p "$npm_site/src"
cp Examples/images/hubble.jpg "$npm_site/src/"
cat > "$npm_site/package.json" <<'JSON'
{
  "name": "npm-site",
  "private": true,
  "scripts": {
    "build": "node build.mjs && imgbake build dist"
  }
}
JSON
cat > "$npm_site/build.mjs" <<'JS'
// The check's generator: writes dist/ from nothing, as a generator's build does, with a local image and
// a remote one. imgbake.toml routes the remote host to the check's loopback origin.
import fs from 'node:fs'
const port = process.env.ORIGIN_PORT
fs.rmSync('dist', { recursive: true, force: true })
fs.mkdirSync('dist/img', { recursive: true })
fs.copyFileSync('src/hubble.jpg', 'dist/img/hubble.jpg')
fs.writeFileSync('dist/index.html', `<!doctype html><html><head><title>An npm site</title></head><body>
<img src="img/hubble.jpg" alt="local">
<img src="http://images.example.com/img/astronaut.jpg" alt="remote">
</body></html>
`)
fs.writeFileSync('dist/imgbake.toml', `[fetch]\nconnect_to = ["images.example.com:80:127.0.0.1:${port}"]\n`)
JS
cat > "$work/npm-origin.mjs" <<'JS'
// The remote image's origin: the files under argv[2], one line per request on stdout, gone after 15 min.
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
const root = process.argv[2]
const server = http.createServer((request, response) => {
  console.log(`${request.method} ${request.url}`)
  const file = path.join(root, path.normalize(decodeURIComponent(request.url.split('?')[0])))
  fs.readFile(file, (error, body) => {
    if (error || !file.startsWith(root + '/')) { response.writeHead(404); response.end(); return }
    response.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': body.length })
    response.end(body)
  })
})
server.listen(0, '127.0.0.1', () => console.log(`PORT ${server.address().port}`))
setTimeout(() => process.exit(0), 15 * 60 * 1000).unref()
JS
# npm as it runs on another machine: process.platform and process.arch are what npm's platform check
# reads, and process.report what it reads for the C library. (npm's --cpu and --os settings apply to
# optional dependencies only: a package named on the command line is checked against the machine.)
cat > "$work/as-platform.cjs" <<'JS'
const [os, cpu, libc] = (process.env.AS_PLATFORM || '').split('/')
if (os) Object.defineProperty(process, 'platform', { value: os })
if (cpu) Object.defineProperty(process, 'arch', { value: cpu })
if (libc === 'musl') {
  const report = process.report.getReport.bind(process.report)
  process.report.getReport = () => {
    const r = report()
    delete r.header.glibcVersionRuntime
    r.sharedObjects = ['/lib/ld-musl-x86_64.so.1']
    return r
  }
}
JS
npm_env=(npm_config_offline=true npm_config_registry=http://127.0.0.1:9/ npm_config_update_notifier=false
         npm_config_fund=false npm_config_audit=false)
declare -A npm_counts=()
# One `npm run build` in the root's project folder `dir`; its summary in $root/tmp/<name>.log.
npm_build() { # root dir name port
  local root=$1 dir=$2 name=$3 port=$4
  in_root "$root" env "${npm_env[@]}" IMGBAKE_CACHE_DIR=node_modules/.cache/imgbake ORIGIN_PORT="$port" \
    sh -c "cd $dir && npm run build" > "$root/tmp/$name.log" 2>&1 || { cat "$root/tmp/$name.log"; fail "$name: npm run build failed"; }
  grep -q 'images.example.com' "$root$dir/dist/index.html" && { cat "$root$dir/dist/index.html"; fail "$name: the remote image was not localised"; }
  grep -q 'img/hubble.jpg' "$root$dir/dist/index.html" && { cat "$root$dir/dist/index.html"; fail "$name: the local image was not localised"; }
  local files
  files=$(grep -o '_img/[^" ,]*' "$root$dir/dist/index.html" | sort -u)
  [ -n "$files" ] || fail "$name: index.html names no file in _img"
  for file in $files; do [ -s "$root$dir/dist/$file" ] || fail "$name: index.html names $file, which is not in dist/"; done
  grep -q '2 of 2 image references localised' "$root/tmp/$name.log" || { cat "$root/tmp/$name.log"; fail "$name: not every image reference was localised"; }
  npm_counts[$name]=$(sed -n 's/^\([0-9]*\) variants encoded.*; \([0-9]*\) requests.*/\1 encoded, \2 requests/p' "$root/tmp/$name.log")
  [ -n "${npm_counts[$name]}" ] || { cat "$root/tmp/$name.log"; fail "$name: no summary from imgbake build"; }
  echo "$name: $(grep -E '^[0-9]+ images:' "$root/tmp/$name.log"); ${npm_counts[$name]}; $(echo "$files" | wc -l) files in _img named by index.html"
}
for suite in bookworm trixie; do
  step "Debian $suite: the npm package, with Debian's nodejs and npm"
  root=$(fresh_root "$suite" "$suite-npm" nodejs,npm)
  roots+=("$root")
  echo "node $(in_root "$root" node --version), npm $(in_root "$root" npm --version) (Debian's: $(in_root "$root" dpkg-query -W -f '${Version}' npm))"
  cp "$npm_package" "$root/tmp/"
  cp "$work/as-platform.cjs" "$root/tmp/"
  mkdir -p "$root/tmp/npm-origin/img"
  cp Examples/images/astronaut.jpg "$root/tmp/npm-origin/img/"
  cp "$work/npm-origin.mjs" "$root/tmp/"
  # exec: $! is then the origin itself (chroot execs env, env execs node), which cleanup can stop.
  (exec chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin node /tmp/npm-origin.mjs /tmp/npm-origin) > "$root/tmp/npm-origin.log" &
  npm_origin_pids+=($!)
  for _ in $(seq 50); do grep -q PORT "$root/tmp/npm-origin.log" 2>/dev/null && break; sleep 0.1; done
  npm_port=$(awk '/PORT/ {print $2}' "$root/tmp/npm-origin.log")
  [ -n "$npm_port" ] || fail "$suite: the origin in the root did not start"

  cp -r "$npm_site" "$root/tmp/site"
  in_root "$root" env "${npm_env[@]}" sh -c "cd /tmp/site && npm install --offline /tmp/$(basename "$npm_package")" > "$root/tmp/npm-install.log" 2>&1 ||
    { cat "$root/tmp/npm-install.log"; fail "$suite: npm install --offline of the package failed"; }
  grep -v '^$' "$root/tmp/npm-install.log" | sed 's/^/npm install: /'
  [ -L "$root/tmp/site/node_modules/.bin/imgbake" ] || fail "$suite: npm made no node_modules/.bin/imgbake"
  in_root "$root" env "${npm_env[@]}" sh -c 'cd /tmp/site && npx imgbake --version' > "$root/tmp/npx-version.txt" ||
    fail "$suite: npx imgbake --version failed"
  head -n2 "$root/tmp/npx-version.txt"
  [[ $(head -n1 "$root/tmp/npx-version.txt") == "imgbake $version ("* ]] || fail "$suite: npx imgbake --version does not say $version"
  grep -q '^libvips [0-9.]* (writes WebP: yes, AVIF: yes;' "$root/tmp/npx-version.txt" || fail "$suite: npx imgbake --version names no libvips that writes WebP and AVIF"

  npm_build "$root" /tmp/site "$suite-cold" "$npm_port"
  [[ ${npm_counts[$suite-cold]} =~ ^[1-9][0-9]*\ encoded,\ [1-9] ]] || fail "$suite: the first build encoded nothing or asked the origin nothing"
  # The next build on a host: npm install again, then the build; the cache under node_modules/.cache
  # survives `npm install` (not `npm ci`, which removes node_modules).
  in_root "$root" env "${npm_env[@]}" sh -c 'cd /tmp/site && npm install --offline' >/dev/null 2>&1 || fail "$suite: npm install again failed"
  [ -d "$root/tmp/site/node_modules/.cache/imgbake" ] || fail "$suite: npm install removed node_modules/.cache/imgbake"
  npm_build "$root" /tmp/site "$suite-warm" "$npm_port"
  [ "${npm_counts[$suite-warm]}" = "0 encoded, 0 requests" ] || fail "$suite: the second npm run build did work: ${npm_counts[$suite-warm]}"
  # A fresh checkout that got only node_modules back from the host's cache.
  mkdir -p "$root/tmp/checkout"
  cp -r "$npm_site"/. "$root/tmp/checkout/"
  cp "$root/tmp/site/package.json" "$root/tmp/site/package-lock.json" "$root/tmp/checkout/"
  mv "$root/tmp/site/node_modules" "$root/tmp/checkout/node_modules"
  npm_build "$root" /tmp/checkout "$suite-restored" "$npm_port"
  [ "${npm_counts[$suite-restored]}" = "0 encoded, 0 requests" ] || fail "$suite: the build with node_modules restored did work: ${npm_counts[$suite-restored]}"
  requests=$(grep -c '^GET ' "$root/tmp/npm-origin.log" || true)
  [ "$requests" = 1 ] || fail "$suite: the origin was asked $requests times in three builds, not once"
  echo "the origin was asked once in three builds"

  # Elsewhere npm refuses it, saying what it needs.
  for platform in linux/arm64 darwin/arm64 linux/x64/musl; do
    rm -rf "$root/tmp/elsewhere" && mkdir -p "$root/tmp/elsewhere"
    echo '{"name": "elsewhere", "private": true}' > "$root/tmp/elsewhere/package.json"
    status=0
    in_root "$root" env "${npm_env[@]}" AS_PLATFORM="$platform" NODE_OPTIONS="--require /tmp/as-platform.cjs" \
      sh -c "cd /tmp/elsewhere && npm install --offline /tmp/$(basename "$npm_package")" > "$root/tmp/elsewhere.log" 2>&1 || status=$?
    if [ "$platform" = linux/x64/musl ] && [ "$status" = 0 ]; then
      # An npm that does not read the "libc" field installs the package on musl, where its binary cannot
      # start (there is no glibc loader); said here, and in docs/install.md.
      echo "$platform: npm $(in_root "$root" npm --version) does not read the libc field: it installed the package"
      continue
    fi
    if [ "$status" = 0 ] || ! grep -q EBADPLATFORM "$root/tmp/elsewhere.log"; then
      cat "$root/tmp/elsewhere.log"; fail "$suite: npm installed the package as $platform"
    fi
    # npm 9 names the CPU "arch", npm 10 "cpu".
    grep -q '"os":"linux"' "$root/tmp/elsewhere.log" && grep -Eq '"(cpu|arch)":"x64"' "$root/tmp/elsewhere.log" ||
      { cat "$root/tmp/elsewhere.log"; fail "$suite: npm's refusal as $platform does not name linux and x64"; }
    echo "$platform: $(grep -m1 'Unsupported platform' "$root/tmp/elsewhere.log" | sed 's/^npm ERR! //; s/^npm error //')"
  done
  kill "${npm_origin_pids[-1]}" 2>/dev/null || true
done
# npm releases that read "libc" (Node.js's own builds bring one) refuse it on musl too: this machine's
# npm, when it is such a one.
host_npm=$(npm --version 2>/dev/null || true)
if [ -n "$host_npm" ] && [ "${host_npm%%.*}" -ge 10 ]; then
  mkdir -p "$work/elsewhere"
  npm_file=$(realpath "$npm_package")
  for platform in linux/x64/musl darwin/arm64; do
    echo '{"name": "elsewhere", "private": true}' > "$work/elsewhere/package.json"
    status=0
    (cd "$work/elsewhere" && env "${npm_env[@]}" npm_config_cache="$work/npm-cache" AS_PLATFORM="$platform" \
      NODE_OPTIONS="--require $work/as-platform.cjs" npm install --offline "$npm_file") > "$work/elsewhere.log" 2>&1 || status=$?
    [ "$status" != 0 ] && grep -q EBADPLATFORM "$work/elsewhere.log" && grep -q '"libc":"glibc"' "$work/elsewhere.log" ||
      { cat "$work/elsewhere.log"; fail "npm $host_npm installed the package as $platform"; }
    echo "$platform, npm $host_npm: $(grep -m1 'Unsupported platform' "$work/elsewhere.log" | sed 's/^npm ERR! //; s/^npm error //')"
  done
fi
printf '%s\n' "${!npm_counts[@]}" | sort | while read -r k; do echo "$k: ${npm_counts[$k]}"; done

step "the wheel with pip, in a clean Debian 13 root with only python3 and python3-venv"
# pip in the root reaches PyPI as this machine's pip does: its hosts file and, when pip trusts a
# certificate bundle of its own (PIP_CERT, pip.conf's cert), that bundle.
root=$(fresh_root trixie pip)
roots+=("$root")
cp /etc/hosts "$root/etc/hosts"
in_root "$root" apt-get update -qq
in_root "$root" apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
pip_env=()
cert=${PIP_CERT:-$(python3 -m pip config get global.cert 2>/dev/null || true)}
if [ -n "$cert" ] && [ -f "$cert" ]; then cp "$cert" "$root/tmp/pip-cert.pem"; pip_env+=(PIP_CERT=/tmp/pip-cert.pem); fi
index=${PIP_INDEX_URL:-$(python3 -m pip config get global.index-url 2>/dev/null || true)}
[ -z "$index" ] || pip_env+=("PIP_INDEX_URL=$index")
mkdir -p "$root/tmp/pkg"
cp "$wheel" "$root/tmp/pkg/"
in_root "$root" env "${pip_env[@]}" sh -c "cd /tmp && python3 -m venv v && v/bin/pip install -q /tmp/pkg/$(basename "$wheel") mkdocs sphinx mkdocs-material" ||
  fail "pip install of the wheel, mkdocs and sphinx failed"
in_root "$root" /tmp/v/bin/python -c 'import importlib.metadata as m; print(", ".join(f"{d} {m.version(d)}" for d in ("imgbake", "mkdocs", "sphinx", "mkdocs-material")))'
in_root "$root" sh -c 'command -v imgbake' && fail "imgbake is on the root's PATH: the plugins must find the wheel's own"
[ -x "$root/tmp/v/bin/imgbake" ] && [ -f "$root/tmp/v/lib/imgbake/$(basename "$unpacked"/lib/imgbake/libvips-*.so.42)" ] ||
  fail "the wheel did not put bin/imgbake and lib/imgbake/ in the environment"
in_root "$root" /tmp/v/bin/imgbake --version | head -n2
# Three projects, each with the plugin in one line of its configuration, and local images on two pages.
mkproject() { # folder images-folder
  mkdir -p "$1/$2" "$1/$(dirname "$2")/guide"
  cp Examples/images/coffee.png Examples/images/hubble.jpg Examples/images/astronaut.jpg "$1/$2/"
}
p=$root/tmp/projects
mkproject "$p/mkdocs" docs/img
printf 'site_name: MkDocs with imgbake\nplugins: [search, imgbake]\n' > "$p/mkdocs/mkdocs.yml"
printf '# Home\n\n![Coffee](img/coffee.png)\n\n![Hubble](img/hubble.jpg)\n' > "$p/mkdocs/docs/index.md"
printf '# Guide\n\n![Astronaut](../img/astronaut.jpg)\n' > "$p/mkdocs/docs/guide/index.md"
cp -r "$p/mkdocs" "$p/material"
printf 'site_name: Material with imgbake\ntheme: { name: material }\nplugins: [search, imgbake]\n' > "$p/material/mkdocs.yml"
mkproject "$p/sphinx" img
rmdir "$p/sphinx/guide"
printf 'project = "Sphinx with imgbake"\nextensions = ["imgbake.sphinx"]\n' > "$p/sphinx/conf.py"
printf 'Home\n====\n\n.. toctree::\n\n   guide\n\n.. image:: img/coffee.png\n\n.. image:: img/hubble.jpg\n' > "$p/sphinx/index.rst"
printf 'Guide\n=====\n\n.. image:: img/astronaut.jpg\n' > "$p/sphinx/guide.rst"
in_root "$root" sh -c 'cd /tmp/projects/mkdocs && NO_MKDOCS_2_WARNING=1 /tmp/v/bin/mkdocs build --strict' > "$root/tmp/mkdocs.log" 2>&1 ||
  { cat "$root/tmp/mkdocs.log"; fail "mkdocs build with the plugin failed"; }
in_root "$root" sh -c 'cd /tmp/projects/material && NO_MKDOCS_2_WARNING=1 /tmp/v/bin/mkdocs build --strict' > "$root/tmp/material.log" 2>&1 ||
  { cat "$root/tmp/material.log"; fail "mkdocs build with Material and the plugin failed"; }
in_root "$root" sh -c 'cd /tmp/projects/sphinx && /tmp/v/bin/sphinx-build -W -q -b html . _build/html' > "$root/tmp/sphinx.log" 2>&1 ||
  { cat "$root/tmp/sphinx.log"; fail "sphinx-build with the extension failed"; }
for site in mkdocs/site material/site sphinx/_build/html; do
  grep -rqE 'src="(\.\./)*_img/coffee-' "$p/$site" --include=index.html || fail "$site: the images were not localised page-relative"
  grep -rqE '(src|srcset)="/_img/' "$p/$site" && fail "$site: root-relative image URLs (they do not open from disk)"
  ls "$p/$site/_img/"*.webp >/dev/null 2>&1 || fail "$site: no WebP variants"
done
grep -h 'image references localised' "$root/tmp/mkdocs.log" "$root/tmp/material.log" "$root/tmp/sphinx.log" | sed 's/^ *//'
if [ -x /usr/bin/chromium ]; then
  python3 Tests/Support/from_disk.py "$p/mkdocs/site/index.html" "$p/mkdocs/site/guide/index.html" \
    "$p/material/site/index.html" "$p/material/site/guide/index.html" \
    "$p/sphinx/_build/html/index.html" "$p/sphinx/_build/html/guide.html" > "$work/from-disk.json" ||
    { cat "$work/from-disk.json"; fail "a page opened from disk in Chromium did not show every image"; }
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("Chromium, from disk: " + ", ".join("%s %d/%d" % (k.split("/projects/")[1], v["loaded"], v["total"]) for k, v in r.items())); sys.exit(0 if all(v["total"] > 0 for v in r.values()) else 1)' "$work/from-disk.json" ||
    fail "a page opened from disk had no local image"
else
  fail "Chromium (/usr/bin/chromium, make test installs it) is needed to open the pages from disk"
fi

root=$bookworm_root
step "Debian 12: no Swift in the root"
in_root "$root" sh -c 'command -v swift || command -v swiftc' && fail "the root has a Swift toolchain"
swift_files=$(find "$root" -xdev \( -name 'libswiftCore*' -o -name 'libFoundation*.so*' -o -name 'libdispatch.so*' \) -print)
[ -z "$swift_files" ] || fail "Swift runtime files in the root: $swift_files"
echo "no swift, no swiftc, no Swift runtime library"

step "Debian 12: manual page"
page=$root/usr/share/man/man1/imgbake.1.gz
[ -s "$page" ] || fail "no /usr/share/man/man1/imgbake.1.gz"
zcat "$page" > "$root/tmp/imgbake.1"
grep -q '^\.Dt IMGBAKE 1' "$root/tmp/imgbake.1" || fail "the manual page has no .Dt IMGBAKE 1"
warnings=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$root/tmp/imgbake.1" 2>&1 >/dev/null || true)
[ -z "$warnings" ] || fail "man --warnings: $warnings"
# It says what --help says: every subcommand and every option of the installed binary is in it.
for sub in $(in_root "$root" imgbake --help | awk '/^SUBCOMMANDS:/ {on=1; next} /^[^ ]/ {on=0} on && /^  [a-z]/ {print $1}'); do
  grep -q "^\.It Em $sub\$" "$root/tmp/imgbake.1" || fail "the manual page lacks the subcommand $sub"
  for option in $(in_root "$root" imgbake "$sub" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    grep -q -- "Fl ${option#-}" "$root/tmp/imgbake.1" || fail "the manual page lacks $sub $option"
  done
done
echo "$(wc -l < "$root/tmp/imgbake.1") lines; every subcommand and option of --help is in it; man --warnings says nothing"

step "Debian 12: completions"
for file in /usr/share/bash-completion/completions/imgbake /usr/share/zsh/vendor-completions/_imgbake \
            /usr/share/fish/vendor_completions.d/imgbake.fish; do
  [ -s "$root$file" ] || fail "no $file"
done
# bash, in the root: the completion function completes a subcommand and an option.
words=$(in_root "$root" bash -c 'source /usr/share/bash-completion/completions/imgbake
  COMP_WORDS=(imgbake ca); COMP_CWORD=1; COMP_LINE="imgbake ca"; COMP_POINT=${#COMP_LINE}; _imgbake imgbake ca imgbake
  printf "%s\n" "${COMPREPLY[@]}"
  COMPREPLY=(); COMP_WORDS=(imgbake build --che); COMP_CWORD=2; COMP_LINE="imgbake build --che"; COMP_POINT=${#COMP_LINE}
  _imgbake imgbake --che build; printf "%s\n" "${COMPREPLY[@]}"')
[ "$words" = $'cache\n--check' ] || fail "bash completion gave '$words'"
# zsh and fish are not in the root: their files are parsed here.
zsh -n "$root/usr/share/zsh/vendor-completions/_imgbake" || fail "zsh cannot parse _imgbake"
fish --no-execute "$root/usr/share/fish/vendor_completions.d/imgbake.fish" || fail "fish cannot parse imgbake.fish"
echo "bash completes 'imgbake ca' to cache and 'build --che' to --check; zsh and fish parse theirs"

step "Debian 12: imgbake build Examples/site"
mkdir -p "$root/tmp/gh"
cp "$gh/origin-cert.pem" "$root/tmp/gh/origin-cert.pem"
cp -r Examples/site "$root/tmp/site"
status=0
in_root "$root" imgbake build /tmp/site --out /tmp/out --cache-dir /tmp/cache --report /tmp/report.json \
  --connect-to "$connect" --cacert /tmp/gh/origin-cert.pem \
  > "$root/tmp/build.out" 2> "$root/tmp/build.err" || status=$?
cat "$root/tmp/build.out" "$root/tmp/build.err"
[ "$status" = 0 ] || fail "imgbake build exited $status"
webps=$(find "$root/tmp/out" -name '*.webp' | wc -l)
[ "$webps" -gt 0 ] || fail "no WebP variants in the output"
grep -q '_img/[^" ]*\.webp' "$root/tmp/out/index.html" || fail "index.html offers no WebP"
grep -q '_img/' "$root/tmp/out/index.html" || fail "index.html was not rewritten"
grep -q '_img/' "$root/tmp/out/posts/first-light.md" || fail "posts/first-light.md was not rewritten"
grep -q 'not-there.jpg: HTTP 404' "$root/tmp/build.err" || fail "the missing image was not reported"
python3 - "$root/tmp/report.json" "$version" <<'EOF' || fail "the report does not name the package's version"
import json, sys
report = json.load(open(sys.argv[1]))
sys.exit(0 if report["imgbake"] == sys.argv[2] else 1)
EOF
echo "$webps WebP files; index.html and posts/first-light.md rewritten; the report says imgbake $version"

step "the GitHub Action's steps, in a clean Debian 13 root"
# The nearest to GitHub's ubuntu-latest (Ubuntu 24.04) that can be made here: the same 64-bit-time
# libraries, and nothing of imgbake's. The action installs the tarball into the runner's tool cache.
root=$(fresh_root trixie action)
roots+=("$root")
mkdir -p "$root/tmp/gh"
cp "$gh/origin-cert.pem" "$root/tmp/gh/origin-cert.pem"
python3 packaging/action/test_action.py --root "$root" --package "$tarball" --site Examples/site \
  --args "--connect-to $connect --cacert /tmp/gh/origin-cert.pem"

step "dist-check passed"

#!/usr/bin/env bash
# `make stack`: the libraries imgbake is built against and ships with, in one prefix (.build/stack, a link
# to a cached folder), so that every artefact runs on any x86_64 Linux with glibc and libstdc++ alone
# (docs/stack.md says what was chosen and why).
#
#   lib/libvips-<id>.so.42   libvips with its codecs and its own GLib, as PyPI's pyvips-binary wheel
#                            ships it (sharp's kind of build: one library that needs only glibc and
#                            libstdc++); lib/libimgbake-vips.so names it for the linker
#   lib/libimgbake-stack.a   one archive of the static libraries: libcurl and nghttp2 (built here from
#                            Debian 13's sources, security patches applied, HTTP(S) only); libjxl 0.11
#                            with highway, brotli and lcms2 (built here from Debian 13's sources: the
#                            JPEG XL encoder the wheel's libvips lacks); OpenSSL's libssl and libcrypto,
#                            zlib, gumbo, cmark-gfm, libexif and SQLite (Debian 12's own static
#                            archives). One archive, so the linker finds each symbol whatever order the
#                            modules name it in.
#   include/                 curl's, nghttp2's and libjxl's headers, and imgbake_stack.h: the stack's identity
#                            and versions, compiled into `imgbake --version` and the variant keys' salt
#   lib/pkgconfig/imgbake-stack.pc, the flags the Swift package's system modules take
#   share/licenses/          the licence texts the artefacts carry for these libraries
#
# Each input is pinned with its SHA-256. Built once per key (this script and the Debian packages whose
# archives it takes) under ${XDG_CACHE_HOME:-~/.cache}/imgbake-stack; about 5 minutes on 2 cores, most
# of it libjxl.
set -euo pipefail
cd "$(dirname "$0")/../.."

# --- Pins. A new libvips: change VIPS_WHEEL and its hash, run `make stack`; the version checks below
# --- say which recorded component changed. docs/stack.md, "Taking a new libvips".
VIPS_WHEEL_VERSION=8.18.7
VIPS_WHEEL=pyvips_binary-$VIPS_WHEEL_VERSION-cp37-abi3-manylinux_2_28_x86_64.whl
VIPS_WHEEL_SHA256=312046c567abd89ce577ccb0dda8c8cbd9f37d520d5246290cdf8e114e91fbfc
DEBIAN_POOL=${DEBIAN_POOL:-http://deb.debian.org/debian/pool/main}
# Debian 13 (trixie) source packages: name version file sha256, the .dsc first.
SOURCES=(
  "curl 8.14.1-2+deb13u5 c/curl/curl_8.14.1-2+deb13u5.dsc 9a9a2c95cdc8b5d76892c70858f25eaf2dc0b0a475a1e43e0b4ad428414752df"
  "curl 8.14.1-2+deb13u5 c/curl/curl_8.14.1.orig.tar.gz 6766ada7101d292b42b8b15681120acd68effa4a9660935853cf6d61f0d984d4"
  "curl 8.14.1-2+deb13u5 c/curl/curl_8.14.1-2+deb13u5.debian.tar.xz ebdfcfab1c2001c7a539fe2a4044dbf666a544393f191bedce9ee2d07c4ea925"
  "nghttp2 1.64.0-1.1+deb13u1 n/nghttp2/nghttp2_1.64.0-1.1+deb13u1.dsc 11f4603a9f417bc3d195be36cb462bb9df0657f52b72dd9276453a31bc0227c7"
  "nghttp2 1.64.0-1.1+deb13u1 n/nghttp2/nghttp2_1.64.0.orig.tar.gz b452dc69a1fcbc9375389b8b154175d8b7b125cdd713fc426774c2b79a1ebd77"
  "nghttp2 1.64.0-1.1+deb13u1 n/nghttp2/nghttp2_1.64.0-1.1+deb13u1.debian.tar.xz e16478701c5c007aa8761dc30c01090b2217199558bd1017b1d237db463d758c"
  "highway 1.2.0-2 h/highway/highway_1.2.0-2.dsc dbb82d12fe7a8a7cae6970d5ccc74d0854ce405dfaab3a7f0d1345cfe351dcd4"
  "highway 1.2.0-2 h/highway/highway_1.2.0.orig.tar.gz 7e0be78b8318e8bdbf6fa545d2ecb4c90f947df03f7aadc42c1967f019e63343"
  "highway 1.2.0-2 h/highway/highway_1.2.0-2.debian.tar.xz 0f112418716ca1000b19ed86d0c49c8b9edf384ccf966e458790dcea660fec96"
  "lcms2 2.16-2+deb13u2 l/lcms2/lcms2_2.16-2+deb13u2.dsc 8ff22453843eed5ef7bfb76b4cb2cfe490613337cb197141db658e5195ead9fc"
  "lcms2 2.16-2+deb13u2 l/lcms2/lcms2_2.16.orig.tar.gz d873d34ad8b9b4cea010631f1a6228d2087475e4dc5e763eb81acc23d9d45a51"
  "lcms2 2.16-2+deb13u2 l/lcms2/lcms2_2.16-2+deb13u2.debian.tar.xz bb72de5dc4164e1023a6d124c57789b6abee866d3b76c878d0771b86fb720de9"
)
# Debian 13's upstream tarballs taken as they are: the pool this script reaches serves the .orig of
# jpeg-xl 0.11.2-0.1~deb13u3 and brotli 1.1.0-2+deb13u1 but not their .dsc and Debian patches (both
# 404). libjxl's decoder, which those patches concern, reads only imgbake's own JPEG XL output.
ORIGINALS=(
  "jpeg-xl 0.11.2 j/jpeg-xl/jpeg-xl_0.11.2.orig.tar.gz ab38928f7f6248e2a98cc184956021acb927b16a0dee71b4d260dc040a4320ea"
  "brotli 1.1.0 b/brotli/brotli_1.1.0.orig.tar.gz 10973f4b4199eafa1d5735ef661ddb2ec2f97319ee9fd1824d4aabe08cff5265"
)
# Debian 12 packages whose static archives go into the stack: package archive...
ARCHIVES=(
  "libssl-dev libssl.a libcrypto.a"
  "zlib1g-dev libz.a"
  "libgumbo-dev libgumbo.a"
  "libcmark-gfm-dev libcmark-gfm.a"
  "libcmark-gfm-extensions-dev libcmark-gfm-extensions.a"
  "libexif-dev libexif.a"
  "libsqlite3-dev libsqlite3.a"
)
MULTIARCH=$(gcc -dumpmachine)
LIBDIR=/usr/lib/$MULTIARCH

fail() { echo "stack: error: $*" >&2; exit 1; }
debver() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null || fail "the Debian package $1 is not installed (make deps installs it)"; }

# The key: this script (its pins and recipe) and the versions of the Debian packages it takes from.
key=$( { cat "$0"; for a in "${ARCHIVES[@]}"; do set -- $a; echo "$1 $(debver "$1")"; done; gcc -dumpfullversion; } |
       sha256sum | cut -c1-16)
CACHE=${IMGBAKE_STACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/imgbake-stack}
prefix=$CACHE/$key
link=.build/stack
mkdir -p .build
if [ -f "$prefix/stack.txt" ]; then
  [ "$(readlink "$link" 2>/dev/null)" = "$prefix" ] || ln -sfn "$prefix" "$link"
  exit 0
fi

start=$EPOCHREALTIME
work=$(mktemp -d "${TMPDIR:-/tmp}/imgbake-stack.XXXXXX")
trap 'rm -rf "$work"' EXIT
P=$work/prefix
mkdir -p "$P/lib/pkgconfig" "$P/include" "$P/share/licenses" "$work/dl" "$work/src"
echo "stack: building $prefix" >&2

fetch() { # url sha256 destination
  curl -fsSL --retry 3 -o "$3.part" "$1" || fail "cannot download $1"
  echo "$2  $3.part" | sha256sum -c --quiet - || fail "$1 does not have the pinned SHA-256 $2"
  mv "$3.part" "$3"
}

# libvips: the wheel from PyPI (through pip, so its index settings apply), checked against the pin.
python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
  --python-version 3.11 --implementation cp --dest "$work/dl" "pyvips-binary==$VIPS_WHEEL_VERSION" ||
  fail "pip cannot download pyvips-binary $VIPS_WHEEL_VERSION"
echo "$VIPS_WHEEL_SHA256  $work/dl/$VIPS_WHEEL" | sha256sum -c --quiet - ||
  fail "$VIPS_WHEEL does not have the pinned SHA-256 $VIPS_WHEEL_SHA256"
python3 -m zipfile -e "$work/dl/$VIPS_WHEEL" "$work/wheel"
vips=$(cd "$work/wheel/pyvips_binary.libs" && ls libvips-*.so.42)
[ -n "$vips" ] || fail "$VIPS_WHEEL holds no libvips-*.so.42"
install -m 0644 "$work/wheel/pyvips_binary.libs/$vips" "$P/lib/$vips"
ln -s "$vips" "$P/lib/libimgbake-vips.so"
cp "$work/wheel/pyvips_binary-$VIPS_WHEEL_VERSION.dist-info/licenses/LICENSE" "$P/share/licenses/pyvips-binary.LICENSE"

# What the library says of itself: libvips' version, and the versions its components print into it.
# A new wheel whose strings no longer match one of these fails here, so nothing is claimed unread.
strings -n 4 "$P/lib/$vips" > "$work/vips.strings"
found() { # name regex (its first group is the version)
  local v
  v=$(sed -nE "s/^$2\$/\\1/p" "$work/vips.strings" | head -n1)
  [ -n "$v" ] || fail "$vips does not name its $1 version (/$2/): see docs/stack.md"
  echo "$v"
}
grep -qxF "$VIPS_WHEEL_VERSION" "$work/vips.strings" || fail "$vips does not hold the version string $VIPS_WHEEL_VERSION"
v_glib=$(found GLib '<!-- GDBus ([0-9.]+) -->')
v_jpeg=$(found mozjpeg 'mozjpeg version ([0-9.]+) .*')
v_aom=$(found aom 'AOMedia Project AV1 Encoder v([0-9.]+)')
v_zlib=$(found zlib-ng '([0-9.]+\.zlib-ng)')
# libpng's version string stands right after the .vips suffix in libvips' read-only data.
v_png=$(sed -nE '/^\.vips$/{n;/^1\.6\.[0-9]+$/p}' "$work/vips.strings" | head -n1)
[ -n "$v_png" ] || fail "$vips does not name its libpng version: see docs/stack.md"
for codec in "JPEG load/save with libjpeg: true" "PNG load/save with libpng: true" "WebP load/save with libwebp: true" \
             "HEIC/AVIF load/save with libheif: true (dynamic module: false)" "GIF save with cgif: true"; do
  grep -qxF "$codec" "$work/vips.strings" || fail "$vips was not built with '$codec'"
done

# Debian sources: fetched by pinned hash, unpacked by dpkg-source (which applies Debian's patches).
for s in "${SOURCES[@]}"; do
  set -- $s
  fetch "$DEBIAN_POOL/$3" "$4" "$work/dl/$(basename "$3")"
done
for s in "${SOURCES[@]}"; do
  set -- $s
  case $3 in *.dsc) (cd "$work/src" && dpkg-source --no-check -x "$work/dl/$(basename "$3")" "$1" >/dev/null) ;; esac
done
for s in "${ORIGINALS[@]}"; do
  set -- $s
  fetch "$DEBIAN_POOL/$3" "$4" "$work/dl/$(basename "$3")"
  mkdir -p "$work/src/$1" && tar -xf "$work/dl/$(basename "$3")" -C "$work/src/$1" --strip-components=1
done
jobs=$(nproc)
export CFLAGS="-O2 -fPIC -fstack-protector-strong -D_FORTIFY_SOURCE=2"
(cd "$work/src/nghttp2" &&
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DENABLE_LIB_ONLY=ON -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON \
    -DENABLE_DOC=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_INSTALL_PREFIX="$work/nghttp2" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null &&
  cmake --build build -j "$jobs" >/dev/null && cmake --install build >/dev/null) || fail "nghttp2 did not build"
cp "$work/src/nghttp2/COPYING" "$P/share/licenses/nghttp2.COPYING"
# HTTP and HTTPS only; no CA path or bundle compiled in: imgbake finds the system's (Sources/Curl/CertificateStore.swift).
(cd "$work/src/curl" &&
  PKG_CONFIG_PATH="$work/nghttp2/lib/pkgconfig" ./configure --prefix="$work/curl" --disable-shared --enable-static --with-pic \
    --disable-dependency-tracking --with-openssl --with-nghttp2="$work/nghttp2" --with-zlib \
    --without-libpsl --without-brotli --without-zstd --without-libidn2 --without-librtmp --without-libssh2 --without-libssh \
    --without-gssapi --without-libgsasl --without-ngtcp2 --without-nghttp3 --disable-ldap --disable-ldaps --disable-rtsp \
    --disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap --disable-smb --disable-smtp --disable-gopher \
    --disable-mqtt --disable-ftp --disable-file --disable-ipfs --disable-manual --disable-docs --disable-ntlm \
    --disable-kerberos-auth --disable-negotiate-auth --without-ca-bundle --without-ca-path --without-ca-fallback >"$work/curl.log" 2>&1 &&
  make -j "$jobs" -C lib >>"$work/curl.log" 2>&1 && make -C lib install >/dev/null && make -C include install >/dev/null) ||
  { tail -n 30 "$work/curl.log" >&2; fail "curl did not build"; }
cp "$work/src/curl/COPYING" "$P/share/licenses/curl.COPYING"
cp -r "$work/curl/include/curl" "$work/nghttp2/include/nghttp2" "$P/include/"

# libjxl and what it needs, static, into $work/jxl: highway (SIMD: SSE2, SSE4 and AVX2 chosen at run time),
# brotli, lcms2 (colour management; libjxl's own skcms is not in Debian's sources), then libjxl with its
# encoder and decoder only (no tools, jpegli, plugins or AVX-512). C++: the binary links libstdc++, as it
# does for Foundation.
J=$work/jxl
export CXXFLAGS="$CFLAGS"
cmake_static=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-DNDEBUG -DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG
  -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_TESTING=OFF -DCMAKE_INSTALL_PREFIX="$J"
  -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_PREFIX_PATH="$J" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
cmake_build() { # name source-folder cmake-options...
  local name=$1 src=$2; shift 2
  { cmake -S "$src" -B "$work/build-$name" "${cmake_static[@]}" "$@" && cmake --build "$work/build-$name" -j "$jobs" &&
    cmake --install "$work/build-$name"; } >"$work/$name.log" 2>&1 || { tail -n 30 "$work/$name.log" >&2; fail "$name did not build"; }
}
cmake_build highway "$work/src/highway" -DHWY_FORCE_STATIC_LIBS=ON -DHWY_ENABLE_CONTRIB=OFF -DHWY_ENABLE_EXAMPLES=OFF   -DHWY_ENABLE_TESTS=OFF -DHWY_ENABLE_INSTALL=ON
{ cmake -S "$work/src/brotli" -B "$work/build-brotli" "${cmake_static[@]}" -DBROTLI_DISABLE_TESTS=ON &&
  cmake --build "$work/build-brotli" -j "$jobs" --target brotlicommon brotlienc brotlidec; } >"$work/brotli.log" 2>&1 ||
  { tail -n 30 "$work/brotli.log" >&2; fail "brotli did not build"; }
install -D -m 0644 -t "$J/lib" "$work/build-brotli"/libbrotli{common,enc,dec}.a
mkdir -p "$J/include" && cp -r "$work/src/brotli/c/include/brotli" "$J/include/"
(cd "$work/src/lcms2" && ./configure --prefix="$J" --libdir="$J/lib" --disable-shared --enable-static --with-pic    --without-jpeg --without-tiff --without-zlib --disable-dependency-tracking >"$work/lcms2.log" 2>&1 &&
 make -j "$jobs" -C src >>"$work/lcms2.log" 2>&1 && make -C src install >/dev/null && make -C include install >/dev/null) ||
  { tail -n 30 "$work/lcms2.log" >&2; fail "lcms2 did not build"; }
PKG_CONFIG_LIBDIR="$J/lib/pkgconfig" cmake_build libjxl "$work/src/jpeg-xl"   -DJPEGXL_FORCE_SYSTEM_HWY=ON -DJPEGXL_FORCE_SYSTEM_BROTLI=ON -DJPEGXL_FORCE_SYSTEM_LCMS2=ON -DJPEGXL_ENABLE_SKCMS=OFF   -DJPEGXL_ENABLE_TOOLS=OFF -DJPEGXL_ENABLE_DEVTOOLS=OFF -DJPEGXL_ENABLE_BENCHMARK=OFF -DJPEGXL_ENABLE_EXAMPLES=OFF   -DJPEGXL_ENABLE_JPEGLI=OFF -DJPEGXL_ENABLE_JPEGLI_LIBJPEG=OFF -DJPEGXL_ENABLE_DOXYGEN=OFF -DJPEGXL_ENABLE_MANPAGES=OFF   -DJPEGXL_ENABLE_JNI=OFF -DJPEGXL_ENABLE_SJPEG=OFF -DJPEGXL_ENABLE_OPENEXR=OFF -DJPEGXL_ENABLE_PLUGINS=OFF   -DJPEGXL_ENABLE_VIEWERS=OFF -DJPEGXL_ENABLE_TCMALLOC=OFF -DJPEGXL_ENABLE_FUZZERS=OFF -DJPEGXL_ENABLE_COVERAGE=OFF   -DJPEGXL_BUNDLE_LIBPNG=OFF -DJPEGXL_TEST_TOOLS=OFF -DJPEGXL_ENABLE_AVX512=OFF -DJPEGXL_ENABLE_AVX512_SPR=OFF   -DJPEGXL_ENABLE_AVX512_ZEN4=OFF -DJPEGXL_WARNINGS_AS_ERRORS=OFF   -DHWY_INCLUDE_DIR="$J/include" -DHWY_LIBRARY="$J/lib/libhwy.a" -DBROTLI_INCLUDE_DIR="$J/include"   -DBROTLICOMMON_LIBRARY="$J/lib/libbrotlicommon.a" -DBROTLIENC_LIBRARY="$J/lib/libbrotlienc.a"   -DBROTLIDEC_LIBRARY="$J/lib/libbrotlidec.a" -DLCMS2_INCLUDE_DIR="$J/include" -DLCMS2_LIBRARY="$J/lib/liblcms2.a"
cp -r "$J/include/jxl" "$P/include/"
cp "$work/src/jpeg-xl/LICENSE" "$P/share/licenses/libjxl.LICENSE"
cp "$work/src/jpeg-xl/PATENTS" "$P/share/licenses/libjxl.PATENTS"
cp "$work/src/highway/LICENSE" "$P/share/licenses/highway.LICENSE"
cp "$work/src/brotli/LICENSE" "$P/share/licenses/brotli.LICENSE"
cp "$work/src/lcms2/LICENSE" "$P/share/licenses/lcms2.LICENSE" 2>/dev/null || cp "$work/src/lcms2/COPYING" "$P/share/licenses/lcms2.COPYING"
v_jxl=$(sed -n 's/^#define JPEGXL_\(MAJOR\|MINOR\|PATCH\)_VERSION \([0-9]*\).*/\2/p' "$J/include/jxl/version.h" | paste -sd.)

# One archive of everything static (an MRI script: members of the same name stay apart).
{
  echo "CREATE $P/lib/libimgbake-stack.a"
  echo "ADDLIB $work/curl/lib/libcurl.a"
  echo "ADDLIB $work/nghttp2/lib/libnghttp2.a"
  for f in libjxl libjxl_cms liblcms2 libhwy libbrotlienc libbrotlidec libbrotlicommon; do echo "ADDLIB $J/lib/$f.a"; done
  for a in "${ARCHIVES[@]}"; do
    set -- $a; shift
    for f in "$@"; do [ -f "$LIBDIR/$f" ] || fail "$LIBDIR/$f is missing"; echo "ADDLIB $LIBDIR/$f"; done
  done
  echo "SAVE"; echo "END"
} | ar -M
ranlib "$P/lib/libimgbake-stack.a"
for a in "${ARCHIVES[@]}"; do
  set -- $a
  cp "/usr/share/doc/$1/copyright" "$P/share/licenses/$1.copyright" 2>/dev/null ||
    cp "/usr/share/doc/$(dpkg-query -W -f '${source:Package}' "$1")/copyright" "$P/share/licenses/$1.copyright" 2>/dev/null || true
done

v_curl=$(sed -n 's/^#define LIBCURL_VERSION "\(.*\)"/\1/p' "$P/include/curl/curlver.h")
v_nghttp2=$(sed -n 's/^#define NGHTTP2_VERSION "\(.*\)"/\1/p' "$P/include/nghttp2/nghttp2ver.h")
vips_id=${vips#libvips-}; vips_id=${vips_id%.so.42}
upstream() { debver "$1" | sed -E 's/^[0-9]+://; s/-[^-]*$//; s/\+dfsg.*$//'; }
# The salt of every variant key: which libvips made the pixels (the wheel and its build id). Builds on two
# stacks never share variants; the same stack makes the same bytes wherever it runs.
cat > "$P/include/imgbake_stack.h" <<EOF
/* Written by packaging/stack/stack.sh: the image stack this build links and ships. */
#ifndef IMGBAKE_STACK_H
#define IMGBAKE_STACK_H
#define IMGBAKE_STACK_ID "pyvips-binary-$VIPS_WHEEL_VERSION-$vips_id"
#define IMGBAKE_STACK_VIPS_LIBRARY "$vips"
#define IMGBAKE_STACK_VIPS_COMPONENTS "GLib $v_glib, mozjpeg $v_jpeg, libpng $v_png, libwebp, libheif with aom $v_aom, cgif, zlib-ng $v_zlib"
#define IMGBAKE_STACK_GUMBO_VERSION "$(upstream libgumbo-dev)"
#define IMGBAKE_STACK_EXIF_VERSION "$(upstream libexif-dev)"
#define IMGBAKE_STACK_CURL_SOURCE "Debian curl $(echo "${SOURCES[0]}" | cut -d' ' -f2)"
#define IMGBAKE_STACK_JXL_VERSION "$v_jxl"
#endif
EOF
cat > "$P/lib/pkgconfig/imgbake-stack.pc" <<EOF
prefix=$prefix
Name: imgbake-stack
Description: the libraries imgbake links and ships (packaging/stack/stack.sh)
Version: $VIPS_WHEEL_VERSION
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib
EOF
cat > "$P/stack.txt" <<EOF
key $key
libvips $VIPS_WHEEL_VERSION  $vips from $VIPS_WHEEL (sha256 $VIPS_WHEEL_SHA256)
  in it: GLib $v_glib, mozjpeg $v_jpeg, libpng $v_png, libwebp, libheif, aom $v_aom, cgif, libexif, lcms2, zlib-ng $v_zlib
libcurl $v_curl  Debian 13 source $(echo "${SOURCES[0]}" | cut -d' ' -f2), HTTP(S) only, static
nghttp2 $v_nghttp2  Debian 13 source $(echo "${SOURCES[3]}" | cut -d' ' -f2), static
libjxl $v_jxl  Debian 13's upstream tarball, with highway $(echo "${SOURCES[6]}" | cut -d' ' -f2), brotli 1.1.0, lcms2 $(echo "${SOURCES[9]}" | cut -d' ' -f2), static
$(for a in "${ARCHIVES[@]}"; do set -- $a; echo "$1 $(debver "$1")  Debian 12 static archive"; done)
EOF
rm -rf "$prefix.part"
mkdir -p "$CACHE"
cp -a "$P" "$prefix.part"
# The .pc file names its final place; everything else is relative.
mv "$prefix.part" "$prefix"
ln -sfn "$prefix" "$link"
awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "stack: made in %.0f s\n", b - a }' >&2
cat "$prefix/stack.txt" >&2

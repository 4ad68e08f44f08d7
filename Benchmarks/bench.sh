#!/usr/bin/env bash
# `make bench`: the shared harness (../shared/bench, or BENCH=...) with imgbake beside the pyvips script
# (the strongest peer), Hugo and the libvips CLI, in one run; then the ratios against the pyvips script,
# the warm rebuild and the output bytes of both tools. Keep the machine otherwise idle while it runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BENCH=${BENCH:-$root/../shared/bench}
PAGES=${PAGES:-200}; UNIQUE=${UNIQUE:-100}; RUNS=${RUNS:-1}
export RESULTS=${RESULTS:-/tmp/bench-results}
[ -d "$BENCH" ] || { echo "error: no benchmark harness at $BENCH (set BENCH=)" >&2; exit 2; }
rm -f "$RESULTS/results.jsonl"

cat > /tmp/imgbake-bench.toml <<'TOML'
[images]
widths = [400, 800, 1600]
[fetch]
allow_private_networks = true   # the harness's origin is 127.0.0.1:8790, named in its pages
TOML
# IMGBAKE=/path/to/another/imgbake times another binary (an older build, for a before/after).
IMGBAKE=${IMGBAKE:-$root/.build/release/imgbake}
export NEWTOOL="$IMGBAKE build /tmp/site --out /tmp/new-out --cache-dir /tmp/new-cache --config /tmp/imgbake-bench.toml --quiet"
export NEWTOOL_CACHE=/tmp/new-cache NEWTOOL_OUT=/tmp/new-out
export STEPS=${STEPS:-newtool pyvips hugo vips}
bash "$BENCH/run_all.sh" "$PAGES" "$UNIQUE" "$RUNS"
# BASE=/path/to/imgbake: that binary (a release build of main) is timed the same way right after, on the
# same site and origin, for the cold and warm CPU ratios of this build against it.
if [ -n "${BASE:-}" ]; then
  RESULTS="$RESULTS/base" STEPS=newtool NEWTOOL_CACHE=/tmp/base-cache NEWTOOL_OUT=/tmp/base-out \
    NEWTOOL="$BASE build /tmp/site --out /tmp/base-out --cache-dir /tmp/base-cache --config /tmp/imgbake-bench.toml --quiet" \
    bash -c 'rm -f "$RESULTS/results.jsonl"; bash "$0/run_all.sh" "$1" "$2" "$3"' "$BENCH" "$PAGES" "$UNIQUE" "$RUNS"
fi
# The same site and origin again for other settings and binaries, each timed cold and warm as above:
#   fixed   this build at fixed qualities (WebP and JPEG 80), to see what the quality search costs;
#   avif    this build with AVIF first (`formats = ["avif", "webp", "original"]`): what AVIF costs and saves;
#   OLD=B   binary B at the same fixed qualities (an older build the fixed-quality CPU must not exceed).
# VARIANTS= (empty) leaves them out.
VARIANTS=${VARIANTS-fixed avif}
variant() {  # name binary extra-config
  local toml=/tmp/imgbake-bench-$1.toml
  # The extra keys belong to [images]: written right under its heading.
  sed "/^\[images\]/a $3" /tmp/imgbake-bench.toml > "$toml"
  RESULTS="$RESULTS/$1" STEPS=newtool NEWTOOL_CACHE=/tmp/$1-cache NEWTOOL_OUT=/tmp/$1-out \
    NEWTOOL="$2 build /tmp/site --out /tmp/$1-out --cache-dir /tmp/$1-cache --config $toml --quiet" \
    bash -c 'rm -f "$RESULTS/results.jsonl"; bash "$0/run_all.sh" "$1" "$2" "$3"' "$BENCH" "$PAGES" "$UNIQUE" "$RUNS"
}
for v in $VARIANTS; do
  case $v in
    fixed) variant fixed "$IMGBAKE" 'quality = { webp = 80, jpeg = 80 }' ;;
    avif) variant avif "$IMGBAKE" 'formats = ["avif", "webp", "original"]' ;;
  esac
done
[ -n "${OLD:-}" ] && variant old "$OLD" 'quality = { webp = 80, jpeg = 80 }'
python3 "$here/ratios.py" "$RESULTS/results.jsonl" /tmp/new-out/_img /tmp/pyvips-out/_img ${BASE:+"$RESULTS/base/results.jsonl"} | tee "$RESULTS/ratios.md"
python3 "$here/variants.py" "$RESULTS" | tee -a "$RESULTS/ratios.md"
# The qualities imgbake chose, from its cache (a build into a fresh output: untimed, nothing encoded).
if [ -d /tmp/new-cache ]; then
  rm -rf /tmp/new-out-report
  "$IMGBAKE" build /tmp/site --out /tmp/new-out-report --cache-dir /tmp/new-cache --config /tmp/imgbake-bench.toml --quiet \
    --report "$RESULTS/imgbake-report.json" || true
  rm -rf /tmp/new-out-report
fi
python3 -c 'import numpy, scipy' 2>/dev/null || pip install -q numpy scipy
python3 "$here/quality.py" "$RESULTS/imgbake-report.json" | tee -a "$RESULTS/ratios.md"

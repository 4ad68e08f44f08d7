#!/bin/sh
# The layout fixtures (Tests/Fixtures/layout) before and after imgbake, compared in Chromium:
#
#     Tests/Support/layout_fixtures.sh IMGBAKE OUTDIR [layout_check.py options, e.g. --json]
#
# writes the fixture site and its images into OUTDIR/before, builds it with IMGBAKE into OUTDIR/after
# (cache OUTDIR/cache), then runs layout_check.py OUTDIR/before OUTDIR/after --label fixtures; its exit
# status is this script's (1: a box changed, a text differs or an image broke).
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 IMGBAKE OUTDIR [layout_check.py options]" >&2
    exit 2
fi
imgbake=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/../Fixtures/layout
rm -rf "$out/before" "$out/after"
mkdir -p "$out/before"
cp "$fixtures"/*.html "$fixtures"/*.css "$out/before/"
python3 "$fixtures/make-images.py" "$out/before"
"$imgbake" build "$out/before" --out "$out/after" --cache-dir "$out/cache" --quiet
exec python3 "$here/layout_check.py" "$out/before" "$out/after" --label fixtures "$@"

#!/usr/bin/env bash
# The demo: serve Examples/images from a loopback HTTPS origin posing as images.example.com, build
# Examples/site with imgbake into a fresh folder (cold cache), then again (warm cache), and show what
# happened. Run through `make demo`, which builds imgbake first.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${IMGBAKE:-.build/release/imgbake}
OUT=${DEMO_OUT:-out/demo}
rm -rf "$OUT" && mkdir -p "$OUT"

# A throwaway certificate for images.example.com, trusted through --cacert.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=images.example.com \
  -addext subjectAltName=DNS:images.example.com -keyout "$OUT/origin-key.pem" -out "$OUT/origin-cert.pem" 2>/dev/null

python3 Tests/Support/origin.py --root Examples/images --tls-cert "$OUT/origin-cert.pem" --tls-key "$OUT/origin-key.pem" \
  --watch-parent > "$OUT/origin.port" &
ORIGIN=$!
trap 'kill $ORIGIN 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q PORT "$OUT/origin.port" 2>/dev/null && break; sleep 0.1; done
PORT=$(awk '/PORT/ {print $2}' "$OUT/origin.port")
stats() { curl -sk --connect-to "images.example.com:443:127.0.0.1:$PORT" https://images.example.com/__stats |
          python3 -c 'import json,sys; s=json.load(sys.stdin); print("origin:", s["requests_total"], "requests,", s["bytes_sent"], "bytes sent")'; }
run() {
  local t0=$EPOCHREALTIME
  "$BIN" build Examples/site --out "$OUT/site" --cache-dir "$OUT/cache" \
    --connect-to "images.example.com:443:127.0.0.1:$PORT" --cacert "$OUT/origin-cert.pem"
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "wall time: %.2f s\n", b - a }'
}

echo "== cold build (empty cache) =="
run
stats
curl -sk --connect-to "images.example.com:443:127.0.0.1:$PORT" https://images.example.com/__reset >/dev/null
echo
echo "== warm build (same sources, same cache, fresh output folder) =="
rm -rf "$OUT/site"
run
stats
echo
echo "Look at:"
echo "  $OUT/site/index.html            the rewritten page (diff it with Examples/site/index.html); it opens"
echo "                                   from disk too: file://$(cd "$OUT/site" && pwd)/index.html (relative_urls)"
echo "  $OUT/site/posts/first-light.md  the rewritten Markdown"
echo "  $OUT/site/_img/                 $(ls "$OUT/site/_img" | wc -l) image files, named <stem>-<hash>-<width>.<ext>"
echo "  $OUT/cache/                     the cache (blobs + index.sqlite3)"

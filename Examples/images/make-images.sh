#!/usr/bin/env bash
# How the images in this folder were made (kept for reproducibility; not run by the build or tests).
# Sources: Debian's python3-skimage sample data (apt-get download python3-skimage), all public domain or CC0:
#   hubble_deep_field.jpg  NASA/ESA Hubble eXtreme Deep Field (public domain)
#   astronaut.png          NASA, Eileen Collins (public domain)
#   coffee.png             Rachel Michetti (CC0)
# drawing.svg was written by hand for imgbake.
# Needs libvips-tools and pyvips. Usage: bash make-images.sh /path/to/skimage/data
set -euo pipefail
D=${1:?path to skimage/data}
cd "$(dirname "$0")"
vips copy "$D/hubble_deep_field.jpg" "hubble.jpg[Q=75,optimize_coding]"          # 1000x872 JPEG
vips arrayjoin "$D/hubble_deep_field.jpg $D/hubble_deep_field.jpg" /tmp/wide.v --across 2
vips copy /tmp/wide.v "hubble-wide.jpg[Q=60,optimize_coding]"                     # 2000x872: wider than 1920
vips copy "$D/astronaut.png" "astronaut.jpg[Q=80,optimize_coding]"                # 512x512 JPEG
vips resize "$D/coffee.png" coffee.png 0.5                                         # 300x200 PNG
D="$D" python3 - <<'PY'
import os, pyvips
D = os.environ["D"]
# A round cut-out of the astronaut: an RGBA PNG with real transparency.
a = pyvips.Image.new_from_file(f"{D}/astronaut.png").resize(0.5)
mask = pyvips.Image.black(256, 256).draw_circle(255, 128, 128, 120, fill=True)
a.bandjoin(mask).cast("uchar").pngsave("astronaut-round.png", compression=9, strip=True)
# A 4-frame animated GIF from crops of the deep field.
src = pyvips.Image.new_from_file(f"{D}/hubble_deep_field.jpg")
anim = pyvips.Image.arrayjoin([src.crop(i * 200, i * 150, 160, 120) for i in range(4)], across=1).copy()
anim.set_type(pyvips.GValue.gint_type, "page-height", 120)
anim.set_type(pyvips.GValue.array_int_type, "delay", [400] * 4)
anim.set_type(pyvips.GValue.gint_type, "loop", 0)
anim.gifsave("deep-field.gif", strip=True)
PY

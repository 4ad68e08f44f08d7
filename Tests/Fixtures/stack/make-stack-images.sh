#!/usr/bin/env bash
# How astronaut.webp was made (kept for reproducibility; not run by the build or tests): the astronaut
# (Examples/images/astronaut.jpg, NASA, public domain) at 256 px, lossy WebP at quality 80, with pyvips.
# It is the WebP source of the site packaging/dist-check.sh builds in clean Debian roots.
set -euo pipefail
cd "$(dirname "$0")"
python3 -c 'import pyvips; pyvips.Image.thumbnail("../../../Examples/images/astronaut.jpg", 256).webpsave("astronaut.webp", Q=80, keep="none")'

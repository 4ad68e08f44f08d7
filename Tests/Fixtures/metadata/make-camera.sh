#!/usr/bin/env bash
# Makes camera.jpg: the upright orientation crop (public domain) as a JPEG carrying what a phone or camera
# writes: GPS position, body and lens serial numbers, copyright, artist, capture date, and a Canon
# MakerNote block (camera settings only, copied from a photo in Debian's mate-backgrounds).
# Needs exiftool and pyvips. Usage: bash make-camera.sh /path/to/a-canon-photo.jpg
set -euo pipefail
cd "$(dirname "$0")"
python3 -c 'import pyvips; pyvips.Image.new_from_file("../orientation/upright.png").jpegsave("camera.jpg", Q=90)'
exiftool -q -overwrite_original -TagsFromFile "$1" -MakerNotes -Make -Model camera.jpg
exiftool -q -overwrite_original -Copyright="(c) 2026 Jane Doe" -Artist="Jane Doe" \
  -DateTimeOriginal="2026:05:04 10:20:30" -SerialNumber="BODY123456" -LensSerialNumber="LENS654321" \
  -GPSLatitude=48.8584 -GPSLatitudeRef=N -GPSLongitude=2.2945 -GPSLongitudeRef=E camera.jpg

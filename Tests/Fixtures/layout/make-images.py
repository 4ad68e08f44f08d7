#!/usr/bin/env python3
"""Writes the images the layout fixture pages use into a folder (pure Python: zlib and struct), at
the exact sizes the pages need. Each is a gradient with a few discs and blocky noise, so it is neither
a flat colour (which would make every variant a few bytes) nor large (a few hundred KB at most).
The same name always gives the same bytes (seeded by name).

    make-images.py FOLDER
"""
import os, random, struct, sys, zlib

# name: (width, height), as the pages refer to them
IMAGES = {
    "a.png": (667, 1000),        # gallery.html (the gallery script's a.jpg)
    "b.png": (1000, 667),        # gallery.html (b.jpg)
    "logo.png": (1920, 2104),    # sphinx-sizes.html: style="height: 100px"
    "shot.png": (782, 376),      # sphinx-sizes.html: style="width: 80%"
    "photo.png": (1200, 800),    # lightbox, selectors, flex-grid, reset, safe
    "tall.png": (600, 900),      # selectors, flex-grid, reset
    "wide.png": (400, 225),      # one-dimension.html: style="width:50%"
    "brand.png": (640, 160),     # one-dimension.html: .logo { height: 40px }
    "avatar.png": (256, 256),    # one-dimension.html: img.avatar { width: 64px }
    "chart.png": (900, 600),     # one-dimension.html: width="300" in a narrower column
    "big.png": (2000, 1333),     # minima.html: a large image in a narrow column
    "small.png": (200, 150),     # minima.html: must stay 200 px
}
# Noise and shapes are drawn on blocks (4×4 px, 8×8 from 1,600 px wide): texture at a few hundred KB, not megabytes.
block_of = lambda width: 8 if width >= 1600 else 4


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width, height, seed):
    rng = random.Random(seed)
    base = [rng.randrange(40, 200) for _ in range(3)]
    discs = [(rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.08, 0.3), [rng.randrange(256) for _ in range(3)]) for _ in range(5)]
    block = block_of(width)
    bw, bh = -(-width // block), -(-height // block)
    rows = []
    for j in range(bh):
        v = j / max(bh - 1, 1)
        line = bytearray()
        for i in range(bw):
            u = i / max(bw - 1, 1)
            pixel = [base[0] + 50 * u, base[1] + 50 * v, base[2] + 40 * (u - v)]
            for cx, cy, r, colour in discs:
                if (u - cx) ** 2 * width / height + (v - cy) ** 2 * height / width < r * r:
                    pixel = [(p + c) / 2 for p, c in zip(pixel, colour)]
            noise = rng.randrange(-12, 13)
            line += bytes(min(255, max(0, int(p) + noise)) for p in pixel) * block
        row = b"\0" + bytes(line[:width * 3])
        rows.extend([row] * block)
    raw = b"".join(rows[:height])
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, (width, height) in IMAGES.items():
        with open(os.path.join(sys.argv[1], name), "wb") as f:
            f.write(png(width, height, name))


if __name__ == "__main__":
    main()

import pyvips, glob, os, sys, time
files = sorted(f for f in glob.glob("/tmp/imgcorpus/*.png"))
opts = {
  "vips-default": dict(),
  "c9": dict(compression=9),
  "c6-filter-all": dict(compression=6, filter="all"),
  "c9-filter-all": dict(compression=9, filter="all"),
  "palette-q90": dict(compression=9, palette=True, Q=90, effort=7),
}
tot = {k: 0 for k in opts}; times = {k: 0.0 for k in opts}
n = 0
for f in files:
    src = pyvips.Image.new_from_file(f)
    for w in (400, 800, 1600):
        w = min(w, src.width)
        t = pyvips.Image.thumbnail(f, w, height=10000000, size="down").copy_memory()
        if t.format == "ushort":
            t = t.colourspace("srgb")
        n += 1
        for k, o in opts.items():
            t0 = time.time()
            b = t.pngsave_buffer(strip=True, **o)
            times[k] += time.time() - t0
            tot[k] += len(b)
print(f"{len(files)} PNG sources, {n} outputs (widths 400/800/1600 capped)")
for k in opts:
    print(f"{k:16s} {tot[k]/1e6:8.2f} MB  {tot[k]/tot['vips-default']:.2f}x  encode {times[k]:.1f} s")

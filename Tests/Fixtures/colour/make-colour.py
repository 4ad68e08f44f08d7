#!/usr/bin/env python3
"""Makes the colour fixtures from a saturated crop of Examples/images/coffee.png (CC0), saved as
reference.png (sRGB): the same pixels stored in other colour spaces, each a viewer converting to sRGB
shows as reference.png. Needs pyvips and Ghostscript's ICC profiles (Debian: ghostscript).
Kept for reproducibility; the files are committed."""
import os, pyvips
here = os.path.dirname(os.path.abspath(__file__))
out = lambda name: os.path.join(here, name)
ref = pyvips.Image.new_from_file(os.path.join(here, "../../../../Examples/images/coffee.png")).crop(60, 40, 96, 64).copy_memory()
ref.pngsave(out("reference.png"), strip=True)
ref.icc_export(output_profile="/usr/share/color/icc/ghostscript/rommrgb.icc").jpegsave(out("prophoto.jpg"), Q=95)
ref.icc_export(output_profile="p3").pngsave(out("p3.png"))
cmyk = ref.icc_export(output_profile="/usr/share/color/icc/ghostscript/default_cmyk.icc")
cmyk.jpegsave(out("cmyk.jpg"), Q=95)
ref.icc_export(output_profile="cmyk").jpegsave(out("cmyk-no-profile.jpg"), Q=95, strip=True)  # libvips assumes its own CMYK profile
# CMYK cannot hold every colour of the reference: what a colour-managed viewer shows for those two files.
pyvips.Image.new_from_file(out("cmyk.jpg")).icc_transform("srgb", embedded=True).pngsave(out("cmyk-expected.png"), strip=True)
pyvips.Image.new_from_file(out("cmyk-no-profile.jpg")).icc_transform("srgb", input_profile="cmyk").pngsave(out("cmyk-no-profile-expected.png"), strip=True)
(ref.cast("ushort") * 257).cast("ushort").copy(interpretation="rgb16").pngsave(out("rgb16.png"))
for name in ("prophoto.jpg", "p3.png", "cmyk.jpg", "cmyk-no-profile.jpg", "rgb16.png"):
    im = pyvips.Image.new_from_file(out(name))
    print(name, im.interpretation, im.format, "profile" if im.get_typeof("icc-profile-data") else "no profile")

# Flat graphics: two-colours.png (70 % one colour: the dominant-colour test) and diagram.png, whose
# lossy WebP at 960 px is larger than its PNG (at 480 px it is smaller): the drop-rule test.
two = (pyvips.Image.black(120, 80) + [30, 90, 200]).cast("uchar")
two.insert((pyvips.Image.black(36, 80) + [240, 200, 40]).cast("uchar"), 84, 0).copy(interpretation="srgb").pngsave(out("two-colours.png"), strip=True)
d = (pyvips.Image.black(960, 540, bands=3) + [250, 250, 250]).cast("uchar")
d = d.draw_rect([30, 90, 200], 40, 40, 300, 180, fill=True).draw_rect([240, 200, 40], 400, 60, 200, 400, fill=True)
for i in range(0, 960, 40):
    d = d.draw_line([0, 0, 0], i, 500, i + 20, 530)
d.copy(interpretation="srgb").pngsave(out("diagram.png"), strip=True)

# An alpha band opaque everywhere (what many wallpapers and screenshots carry): it is dropped before the
# resize, which then needs no premultiplying.
ref.bandjoin(255).copy(interpretation="srgb").pngsave(out("opaque-alpha.png"), strip=True)

#!/usr/bin/env python3
"""Makes o1.jpg ... o8.jpg: the same upright picture (a 96x64 crop of Examples/images/astronaut.jpg,
saved as upright.png) stored with each EXIF orientation, so that a viewer applying the orientation
shows upright.png. Needs pyvips. Kept for reproducibility; the files are committed."""
import os, pyvips
here = os.path.dirname(os.path.abspath(__file__))
src = pyvips.Image.new_from_file(os.path.join(here, "../../../../Examples/images/astronaut.jpg"))
upright = src.crop(180, 60, 96, 64)
upright.pngsave(os.path.join(here, "upright.png"), strip=True)
# Stored pixels for orientation o: the inverse of what a viewer does for o.
stored = {
    1: upright,
    2: upright.fliphor(),
    3: upright.rot180(),
    4: upright.flipver(),
    5: upright.rot90().fliphor(),     # transpose
    6: upright.rot270(),              # the viewer turns it 90 degrees clockwise
    7: upright.rot90().flipver(),     # transverse
    8: upright.rot90(),               # the viewer turns it 90 degrees anticlockwise
}
for o, image in stored.items():
    image = image.copy()
    image.set_type(pyvips.GValue.gint_type, "orientation", o)
    image.jpegsave(os.path.join(here, "o%d.jpg" % o), Q=95)
    back = pyvips.Image.new_from_file(os.path.join(here, "o%d.jpg" % o)).autorot()
    diff = (back - upright).abs().avg()
    print(o, back.width, back.height, "diff %.1f" % diff)

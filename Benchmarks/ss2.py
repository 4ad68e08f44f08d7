"""ss2.py - SSIMULACRA2 (2.1) for the benchmarks (avif_quality.py, formats.py), from PyPI's `ssimulacra2`
package (pure Python on numpy/scipy; pinned: VERSION below, installed by bench.sh and named in formats.py's
set-up lines). It scores within about one point of libjxl's tools/ssimulacra2 on the same pixels (its
blur is scipy's Gaussian, not libjxl's recursive one), so its scores compare with each other, not to
the last decimal with figures made by libjxl's tool.

score(ref, dist) takes two (h, w, bands) uint8 arrays of 8-bit sRGB, 1-4 bands, the same height and
width, and runs the package's own compute_ssimulacra2 on them (fed arrays in place of the files it
opens). Grey is read as RGB with equal channels; with an alpha band in either, the lower of the scores
blended onto grey 0.1 and 0.9 in sRGB values, as libjxl's ssimulacra2 tool does. (The package's own
alpha path does not: it opens files with PIL's convert("RGB"), which drops alpha unblended.)"""
import numpy as np
import ssimulacra2 as _package
from ssimulacra2 import ssimulacra2 as _impl

VERSION = "0.3.0"
if _package.__version__ != VERSION:
    import sys
    print("ss2.py: ssimulacra2 %s, not the pinned %s: scores may differ" % (_package.__version__, VERSION), file=sys.stderr)


class _Arrays:
    """Stands in for PIL.Image in the package's module: open(array).convert("RGB") gives the array back."""

    class _Held:
        def __init__(self, a):
            self.a = a

        def convert(self, mode):
            return self.a

    @staticmethod
    def open(a):
        return _Arrays._Held(a)


_impl.Image = _Arrays  # compute_ssimulacra2 reads its two images through this, and nothing else of PIL


def _split(px):
    """(h, w, bands) uint8 -> (h, w, 3) float64 RGB in 0-255, alpha in 0-1 or None."""
    if px.ndim == 2:
        px = px[..., None]
    bands = px.shape[2]
    f = px.astype(np.float64)
    rgb = f[..., :3] if bands >= 3 else np.repeat(f[..., :1], 3, axis=2)
    alpha = f[..., bands - 1] / 255.0 if bands in (2, 4) else None
    return rgb, alpha


def _blend(rgb, alpha, bg):
    if alpha is None:
        return rgb
    return rgb * alpha[..., None] + (255.0 * bg) * (1.0 - alpha[..., None])


def score(ref, dist):
    """SSIMULACRA2 of dist against ref (None below 8x8, where it is not defined)."""
    (a, aa), (b, ba) = _split(ref), _split(dist)
    if a.shape != b.shape:
        raise ValueError("SSIMULACRA2 of %s against %s: not the same size" % (b.shape[:2], a.shape[:2]))
    if a.shape[0] < 8 or a.shape[1] < 8:
        return None
    if aa is None and ba is None:
        return float(_impl.compute_ssimulacra2(a, b))
    return min(float(_impl.compute_ssimulacra2(_blend(a, aa, bg), _blend(b, ba, bg))) for bg in (0.1, 0.9))

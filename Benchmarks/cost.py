#!/usr/bin/env python3
"""The cost guard: instructions of one cold build of a small fixed site, against a baseline.

    python3 Benchmarks/cost.py [--binary B] [--baseline FILE] [--slack 0.05] [--update]
    python3 Benchmarks/cost.py --binary B --images 'quality = { webp = 80, jpeg = 80 }' --count

The site is three pages over four images of Examples/images (JPEG, a wide JPEG, an alpha PNG, a small
JPEG), built cold into a fresh output with a fresh cache, with the default formats and the quality
search, at widths 320 and 640. valgrind's cachegrind counts every instruction the process runs (all
threads, imgbake's code and every C library's), so the count is the same from one run to the next
within a fraction of a percent, whatever else the machine is doing: a timing could not tell 5 % from
noise on a shared 2-core runner. `perf stat -e instructions:u` would be faster, but needs a hardware
counter that virtual machines (CI runners among them) often do not have.

The guard fails (exit 1) when the count is more than `--slack` above the baseline's, and says so when it
is that much below (a saving worth recording). `--update` writes the count measured as the new baseline:
a deliberate commit that says why the cost changed.

The baseline is kept per binary kind. `make test` guards the release build (`make release`, which
`make dist-check` then packages): valgrind 3.19 cannot run a debug build, whose Swift runtime is a
shared library (it stops on a SIGSEGV of its own in libdispatch).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IMAGES = ["hubble.jpg", "hubble-wide.jpg", "coffee.png", "astronaut.jpg"]
PAGES = {
    "index.html": ["hubble.jpg", "coffee.png"],
    "post.html": ["hubble-wide.jpg", "astronaut.jpg", "hubble.jpg"],
    "notes.md": ["coffee.png", "astronaut.jpg"],
}
CONFIG = """[images]
widths = [320, 640]
"""


def make_site(folder, settings=""):
    os.makedirs(folder + "/site/img")
    for name in IMAGES:
        shutil.copy(os.path.join(ROOT, "Examples/images", name), folder + "/site/img/" + name)
    for page, images in PAGES.items():
        with open(folder + "/site/" + page, "w") as f:
            if page.endswith(".md"):
                f.write("# Notes\n\n" + "\n\n".join(f"![{n}](img/{n})" for n in images) + "\n")
            else:
                body = "\n".join(f'<p>{n}</p><img src="img/{n}" alt="{n}">' for n in images)
                f.write(f"<!doctype html><html><head><title>{page}</title></head><body><main>\n{body}\n</main></body></html>\n")
    with open(folder + "/imgbake.toml", "w") as f:
        f.write(CONFIG + (settings + "\n" if settings else ""))


def count(binary, folder):
    """Instructions of one cold build, all threads."""
    out = folder + "/cachegrind.out"
    # valgrind 3.19 gives up on the DWARF the Swift toolchain writes ("Possibly corrupted debuginfo"):
    # a copy without debug sections runs the same instructions, and its symbols still name functions.
    stripped = folder + "/imgbake"
    shutil.copy(binary, stripped)
    subprocess.run(["strip", "--strip-debug", stripped], check=True)
    # --smc-check=all: libvips runs code that liborc writes at run time (its vector paths); without
    # the check valgrind may run an older translation of that memory, and images come out black.
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--smc-check=all", "--cachegrind-out-file=" + out,
               stripped, "build", folder + "/site", "--out", folder + "/out", "--cache-dir", folder + "/cache",
               "--config", folder + "/imgbake.toml", "--quiet"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"cost: the build failed under valgrind ({run.returncode}):\n{run.stderr[-3000:]}")
    # The work counted is the real one: every image made its files (a black picture would be inlined
    # into its page as a few hundred bytes instead).
    written = os.listdir(folder + "/out/_img") if os.path.isdir(folder + "/out/_img") else []
    if len(written) < 2 * len(IMAGES):
        sys.exit(f"cost: the build under valgrind wrote {len(written)} image files, expected at least {2 * len(IMAGES)}")
    with open(out) as f:
        for line in f:
            match = re.match(r"summary:\s+(\d+)", line)
            if match:
                return int(match.group(1))
    sys.exit(f"cost: no summary in {out}")


def cpu():
    """The vector extensions that choose libjpeg-turbo's, libwebp's and liborc's code paths, which
    valgrind passes on: a count is comparable only between machines that have the same."""
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    return " ".join(flag for flag in ["sse4_1", "sse4_2", "avx", "avx2", "avx512f", "avx512bw"] if flag in flags)


def kind(binary):
    return "release" if "/release/" in os.path.realpath(binary) else "debug"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/imgbake"))
    parser.add_argument("--baseline", default=os.path.join(HERE, "cost-baseline.json"))
    parser.add_argument("--slack", type=float, default=0.05)
    parser.add_argument("--update", action="store_true", help="write the count measured as the baseline")
    parser.add_argument("--images", default="", help="a line of [images] settings, for --count")
    parser.add_argument("--count", action="store_true", help="print the count only, compare nothing")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("cost: valgrind is not installed (apt install valgrind; `make deps` installs it)")

    folder = tempfile.mkdtemp(prefix="imgbake-cost-")
    try:
        make_site(folder, args.images)
        measured = count(args.binary, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    if args.count or args.images:
        print(f"cost: a cold build of the fixed site took {measured:,} instructions")
        return
    which = kind(args.binary)
    baselines = {}
    if os.path.exists(args.baseline):
        with open(args.baseline) as f:
            baselines = json.load(f)
    if args.update:
        baselines[which] = {"instructions": measured, "cpu": cpu()}
        with open(args.baseline, "w") as f:
            json.dump(baselines, f, indent=2, sort_keys=True)
            f.write("\n")
        print(f"cost: {which} baseline is now {measured:,} instructions ({args.baseline})")
        return
    if which not in baselines:
        sys.exit(f"cost: {args.baseline} has no {which} baseline; measure one with --update")
    base = baselines[which]["instructions"]
    ratio = measured / base
    if baselines[which].get("cpu") != cpu():
        print(f"cost: {measured:,} instructions, {ratio:.3f}x the {which} baseline, which was measured on a CPU "
              f"with other vector extensions ({baselines[which].get('cpu')!r}, here {cpu()!r}): not compared")
        return
    print(f"cost: a cold build of the fixed site took {measured:,} instructions, {ratio:.3f}x the {which} "
          f"baseline ({base:,})")
    if ratio > 1 + args.slack:
        print(f"cost: more than {args.slack:.0%} above the baseline. Find what grew (valgrind --tool=callgrind, "
              f"Benchmarks/README.md), or, if the cost is meant, run `python3 Benchmarks/cost.py --update` and "
              f"commit the baseline saying why.", file=sys.stderr)
        sys.exit(1)
    if ratio < 1 - args.slack:
        print(f"cost: more than {args.slack:.0%} below the baseline: record the saving with --update.")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark (not a test): how wall time and peak memory grow with the number of image references.

    make release && python3 Benchmarks/scale.py [--refs 10000,100000,400000,1000000]   # or: make bench-scale

For each size, a site of pages holding 10 references each (HTML with <img>, srcset, <picture>, an
og:image and a CSS background; every fifth page Markdown), over 300 distinct images (URLs of the
example images with a query, served by the loopback test origin; most sites reuse a few hundred images
on many pages). Then, one run each, with the release binary:
  cold       empty cache, build with --out
  warm-out   the same sources, the cache kept, into a new --out folder (every page written again)
  in-place   a copy of the site rewritten in place, the cache kept
  scan       imgbake scan --json (output to /dev/null)
Prints wall seconds, CPU seconds and the peak RSS of the imgbake process (its own, from wait4).

    python3 Benchmarks/scale.py --refs 100000 --base /path/to/other/imgbake

times another binary (a release build of an earlier commit) on the same sites in the same run, each
run of it right after the same run of this one, and prints the ratios.
"""
import argparse, os, random, shutil, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--refs", default="10000,100000,400000,1000000")
ap.add_argument("--binary", default=os.path.join(root, ".build/release/imgbake"))
ap.add_argument("--images", type=int, default=300)
ap.add_argument("--keep", action="store_true", help="leave the last site, outputs and cache")
ap.add_argument("--base", help="another imgbake binary, timed beside this one on the same sites")
a = ap.parse_args()

NAMES = ["hubble.jpg", "hubble-wide.jpg", "astronaut.jpg", "coffee.png", "astronaut-round.png", "deep-field.gif"]
FILLER = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 12 + "</p>\n"


def generate(site, references, images):
    """Pages of 10 references each over `images` distinct URLs."""
    urls = ["http://images.test/img/%s?v=%d" % (NAMES[i % len(NAMES)], i) for i in range(images)]
    rng = random.Random(references)
    pages = references // 10
    for n in range(pages):
        folder = os.path.join(site, "s%03d" % (n % 200))
        if n < 200:
            os.makedirs(folder, exist_ok=True)
        u = [urls[rng.randrange(images)] for _ in range(10)]
        if n % 5 == 0:
            body = "".join("![%d](%s)\n\n" % (i, x) for i, x in enumerate(u[:8]))
            text = "---\ntitle: Post %d\nimage: %s\ncover: %s\n---\n# Post %d\n\n%s\n%s" % (n, u[8], u[9], n, FILLER, body)
            name = "post%06d.md" % n
        else:
            text = ("<!doctype html><html><head><title>%d</title><meta property=\"og:image\" content=\"%s\"></head><body>%s"
                    "<img src=\"%s\" alt=\"a\"><img src=\"%s\" alt=\"b\"><img srcset=\"%s 1x, %s 2x\" alt=\"c\">"
                    "<picture><source srcset=\"%s\"><img src=\"%s\" alt=\"d\"></picture>"
                    "<div style=\"background: url('%s')\"></div><img src=\"%s\" alt=\"e\">%s</body></html>\n"
                    % (n, u[0], FILLER, u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], FILLER))
            name = "page%06d.html" % n
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    with open(os.path.join(site, "imgbake.toml"), "w") as f:
        f.write('[output]\nbase_url = "https://example.org/"\n')
    return pages


def run(label, arguments, pages, references, binary=a.binary):
    t0 = time.monotonic()
    with open(os.devnull, "w") as null:
        p = subprocess.Popen([binary] + arguments, stdout=null, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err = p.stderr.read()
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("%s failed (%d): %s" % (label, p.returncode, err[-2000:]))
    cpu = usage.ru_utime + usage.ru_stime
    print("| %9d | %7d | %-9s | %8.2f | %8.2f | %9.1f | %9d |" % (
        references, pages, label, wall, cpu, wall / pages * 1000, usage.ru_maxrss // 1024), flush=True)
    return wall, cpu, usage.ru_maxrss // 1024


origin = subprocess.Popen([sys.executable, os.path.join(root, "Tests/Support/origin.py"), "--root",
                           os.path.join(root, "Examples/images"), "--watch-parent"], stdout=subprocess.PIPE, text=True)
port = int(origin.stdout.readline().split()[1])
connect = ["--connect-to", "images.test:80:127.0.0.1:%d" % port]
print("| references | pages | run | wall s | CPU s | wall s per 1,000 pages | peak RSS MiB |")
print("|---|---|---|---|---|---|---|")
ratios = []
for references in [int(x) for x in a.refs.split(",")]:
    work = tempfile.mkdtemp(prefix="imgbake-scale-")
    site = os.path.join(work, "site")
    pages = generate(site, references, a.images)
    # Each binary on a copy of its own for in place, with caches and outputs of its own; with --base,
    # each run of it right after the same run of this binary.
    binaries = [("", a.binary)] + ([("base ", a.base)] if a.base else [])
    results = {}
    for step in ["cold", "warm-out", "in-place", "scan"]:
        for prefix, binary in binaries:
            tag = "base" if prefix else "this"
            cache = os.path.join(work, tag + "-cache")
            common = ["--cache-dir", cache, "--config", os.path.join(site, "imgbake.toml"), "--quiet"] + connect
            if step == "cold":
                arguments = ["build", site, "--out", os.path.join(work, tag + "-out")] + common
            elif step == "warm-out":
                arguments = ["build", site, "--out", os.path.join(work, tag + "-out2")] + common
            elif step == "in-place":
                shutil.copytree(site, os.path.join(work, tag + "-inplace"), ignore=shutil.ignore_patterns("imgbake.toml"))
                arguments = ["build", os.path.join(work, tag + "-inplace")] + common
            else:
                arguments = ["scan", site, "--json"]
            results[(tag, step)] = run(prefix + step, arguments, pages, references, binary)
    if a.base:
        for step in ["cold", "warm-out", "in-place", "scan"]:
            this, base = results[("this", step)], results[("base", step)]
            ratios.append("| %9d | %-9s | %.2f× | %.2f× | %d → %d |" % (references, step, this[0] / base[0], this[1] / base[1], base[2], this[2]))
    if a.keep:
        print("kept: %s" % work)
    else:
        shutil.rmtree(work)
if ratios:
    print("\n| references | run | wall, this / base | CPU, this / base | peak RSS MiB, base → this |")
    print("|---|---|---|---|---|")
    for line in ratios:
        print(line)
origin.terminate()
origin.wait()  # every child waited for

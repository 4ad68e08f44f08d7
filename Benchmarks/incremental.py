#!/usr/bin/env python3
"""Benchmark (not a test): how much a rebuild of an unchanged site costs.

    make release && python3 Benchmarks/incremental.py [--pages 10000]

Generates PAGES pages (HTML and Markdown, 3 remote images each over 60 URLs of Examples/images, served by
the loopback test origin), then times with the release binary, one run each:
  cold      empty cache and output
  warm      the same sources again (nothing changed)
  one-edit  one page changed
Prints wall and CPU seconds (user + system of the imgbake process), CPU per 1,000 pages and peak RSS.
"""
import argparse, os, random, resource, shutil, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--pages", type=int, default=10000)
ap.add_argument("--binary", default=os.path.join(root, ".build/release/imgbake"))
ap.add_argument("--keep", action="store_true", help="leave the site, output and cache for a profile")
a = ap.parse_args()

work = tempfile.mkdtemp(prefix="imgbake-bench-")
origin = subprocess.Popen([sys.executable, os.path.join(root, "Tests/Support/origin.py"), "--root",
                           os.path.join(root, "Examples/images"), "--watch-parent"], stdout=subprocess.PIPE, text=True)
port = int(origin.stdout.readline().split()[1])
names = ["hubble.jpg", "hubble-wide.jpg", "astronaut.jpg", "coffee.png", "astronaut-round.png", "deep-field.gif"]
urls = ["http://images.test/img/%s?v=%d" % (names[i % 6], i) for i in range(60)]
rng = random.Random(1)
site = os.path.join(work, "site")
for n in range(a.pages):
    folder = os.path.join(site, "section%02d" % (n % 50))
    os.makedirs(folder, exist_ok=True)
    u = rng.sample(urls, 3)
    filler = "<p>" + ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 30) + "</p>\n"
    if n % 5 == 0:
        text = "# Post %d\n\n%s\n\n![a](%s)\n\n![b][b]\n\n[b]: %s\n\n<img src=\"%s\" alt=c>\n" % (n, filler, u[0], u[1], u[2])
        name = "post%05d.md" % n
    else:
        text = ("<!doctype html><title>%d</title>%s<img src=\"%s\" alt=a><img srcset=\"%s 1x, %s 2x\" alt=b>"
                "<picture><source srcset=\"%s\"><img src=\"%s\" alt=c></picture>\n%s") % (n, filler, u[0], u[1], u[2], u[0], u[1], filler)
        name = "page%05d.html" % n
    open(os.path.join(folder, name), "w").write(text)

def run(label):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([a.binary, "build", site, "--out", os.path.join(work, "out"), "--cache-dir", os.path.join(work, "cache"),
                        "--connect-to", "images.test:80:127.0.0.1:%d" % port, "--quiet"], capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit("%s failed: %s" % (label, p.stderr))
    print("| %-8s | %7.2f | %7.2f | %6.3f | %6d |" % (label, wall, cpu, cpu / a.pages * 1000, after.ru_maxrss // 1024))

print("%d pages, %d remote references, 60 unique URLs (7 distinct images)\n" % (a.pages, a.pages * 3))
print("| run      | wall s  | CPU s   | CPU s per 1,000 pages | peak RSS MiB (so far) |")
print("|---|---|---|---|---|")
run("cold")
run("warm")
edited = os.path.join(site, "section00", "page00001.html")
open(edited, "a").write("<p>edited</p>\n")
run("one-edit")
origin.terminate()
origin.wait()  # every child waited for
if a.keep:
    print("\nkept: %s (site/, out/, cache/)" % work)
else:
    shutil.rmtree(work)

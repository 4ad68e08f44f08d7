#!/usr/bin/env python3
"""Benchmark (not a test): the pages in a browser, before imgbake and after (`make vitals`).

    make vitals            # or: python3 Benchmarks/vitals.py [--runs 3] [--binary .build/release/imgbake]

Debian's Chromium, headless, driven through its DevTools protocol as a phone: 412x915 CSS px at device
pixel ratio 2.625, 40 ms latency, 10 Mbit/s down and up, cache off. For each page, the Largest
Contentful Paint and the Cumulative Layout Shift (from PerformanceObserver in the page), and the bytes
and requests the page cost (from the Network domain), before (as the generator wrote it: full-size
images from their origin) and after imgbake (--out, the same origin). Median of --runs loads each.

Pages: a blog post like the one issue 22 describes (a 64 px logo, a hero photo, text, an inline image
written <img width="320">, eight photos further down), four pages shaped like the default themes of
Hugo (ananke, a CSS background cover), Jekyll (minima), MkDocs (Material) and Sphinx (alabaster), with
photos from the shared benchmark corpus (/tmp/imgcorpus, made by ../shared/bench/corpus/make_corpus.sh),
and Examples/site's index page with its own images. Everything is served from loopback.
"""
import argparse, base64, http.server, json, os, re, shutil, socketserver, statistics, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "Support"))
from chromium import Browser  # noqa: E402  (Tests/Support/chromium.py: headless Chromium over DevTools)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--binary", default=os.path.join(root, ".build/release/imgbake"))
ap.add_argument("--chromium", default="/usr/bin/chromium")
ap.add_argument("--corpus", default="/tmp/imgcorpus")
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--keep", action="store_true")
ap.add_argument("--details", action="store_true", help="print every request of the pages after imgbake")
ap.add_argument("--toml", default="", help="more lines for the build's imgbake.toml (to try other settings)")
a = ap.parse_args()

PHONE = {"width": 412, "height": 915, "deviceScaleFactor": 2.625, "mobile": True}
NETWORK = {"offline": False, "latency": 40, "downloadThroughput": 10_000_000 / 8, "uploadThroughput": 10_000_000 / 8}
OBSERVER = """
window.__vitals = {lcp: 0, lcpElement: '', cls: 0};
new PerformanceObserver(list => { for (const e of list.getEntries()) {
  window.__vitals.lcp = e.startTime; window.__vitals.lcpElement = (e.element && e.element.tagName || '') + ' ' + (e.url || '').split('/').pop(); }
}).observe({type: 'largest-contentful-paint', buffered: true});
new PerformanceObserver(list => { for (const e of list.getEntries()) if (!e.hadRecentInput) window.__vitals.cls += e.value; })
  .observe({type: 'layout-shift', buffered: true});
"""
# Text between the pictures: a few short paragraphs, as posts have (a block of text larger than a
# picture on a phone would be the page's largest paint itself).
TEXT = "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.</p>\n" * 4


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(folder):
    """A loopback HTTP server for `folder`; returns its port."""
    handler = lambda *args, **kw: Quiet(*args, directory=folder, **kw)
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def pages(images_url):
    """The pages, as a generator would write them, with images from `images_url`."""
    img = lambda name: images_url + "/" + name
    photos = ["plasma-autumn-2560x1600.jpg", "plasma-bythewater-2560x1600.jpg", "plasma-path-2560x1600.jpg", "mate-nature-dune.jpg",
              "mate-abstract-elephants.jpg", "mate-nature-blinds.jpg", "mate-nature-raindrops.jpg", "ukui-the-mouse.jpg"]
    below = "".join("%s<p><img src=\"%s\" alt=\"Photo %d\"></p>\n" % (TEXT, img(p), n) for n, p in enumerate(photos))
    blog = """<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>A post</title><style>body{font-family:sans-serif;margin:0 auto;max-width:960px;padding:0 1em} img{max-width:100%%;height:auto}</style></head>
<body><header><a href="/"><img src="%s" alt="Site logo" width="48" height="48"></a></header>
<main><article><h1>A post</h1><img src="%s" alt="The hero">%s
<p>An inline picture:</p><img src="%s" alt="Inline" width="320">%s%s</article></main></body></html>
""" % (img("debian-debian-logos-logo-64.png"), img("gen-cam-12mp.jpg"), TEXT, img("gen-cam-4mp.jpg"), TEXT, below)
    head = "<meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>img{max-width:100%;height:auto}</style>"
    ananke = """<!DOCTYPE html><html lang="en"><head>%s<title>Post</title><style>.cover{background-size:cover;background-position:center;min-height:60vh}</style></head>
<body><header class="cover" style="background-image: url('%s');"><nav role="navigation"><a href="/"><img src="%s" alt="My site"></a></nav><h1>Post</h1></header>
<main role="main"><article><section>%s<figure><img src="%s" alt="Deep field"></figure>%s</section></article></main></body></html>
""" % (head, img("plasma-path-2560x1600.jpg"), img("debian-debian-logos-logo-256.png"), TEXT, img("mate-nature-dune.jpg"), below)
    minima = """<!DOCTYPE html><html lang="en"><head>%s<title>First light</title></head>
<body><header class="site-header" role="banner"><a class="site-title" href="/">My blog</a><nav class="site-nav"><a href="/about/">About</a></nav></header>
<main class="page-content"><article class="post"><header class="post-header"><h1>First light</h1></header>
<div class="post-content"><p>The telescope's first image:</p><p><img src="%s" alt="Hubble deep field" /></p>%s%s</div></article></main>
<footer class="site-footer"><p>Footer</p></footer></body></html>
""" % (head, img("gen-cam-12mp.jpg"), TEXT, below)
    material = """<!doctype html><html lang="en"><head>%s<title>Guide</title></head>
<body><header class="md-header"><nav aria-label="Header"><a href="." class="md-logo"><img src="%s" alt="logo" width="24"></a></nav></header>
<main class="md-main"><div class="md-sidebar"><nav class="md-nav"><a href="#">Guide</a></nav></div>
<div class="md-content"><article class="md-typeset"><h1>Guide</h1>%s<p><img alt="Screenshot" src="%s" width="600" /></p>%s%s</article></div></main></body></html>
""" % (head, img("debian-debian-logos-logo-64.png"), TEXT, img("mate-abstract-elephants.jpg"), TEXT, below)
    alabaster = """<!DOCTYPE html><html lang="en"><head>%s<title>Docs</title></head>
<body><div class="document"><div class="body" role="main"><section><h1>Docs</h1>%s
<a class="reference internal image-reference" href="%s"><img alt="Diagram" src="%s" style="width: 600px;" /></a>%s%s</section></div>
<div class="sphinxsidebar" role="navigation"><p class="logo"><img class="logo" src="%s" alt="Logo"/></p></div></div></body></html>
""" % (head, TEXT, img("ukui-the-mouse.jpg"), img("ukui-the-mouse.jpg"), TEXT, below, img("debian-debian-logos-logo-256.png"))
    return {"blog.html": blog, "hugo-ananke.html": ananke, "jekyll-minima.html": minima, "mkdocs-material.html": material,
            "sphinx-alabaster.html": alabaster}


def median_of(browser, url):
    loads = [browser.load(url, network=NETWORK, device=PHONE, observer=OBSERVER) for _ in range(a.runs)]
    median = {key: statistics.median(load[key] for load in loads) for key in ("lcp", "cls", "bytes", "requests")}
    median["element"] = loads[-1]["lcpElement"].strip()
    return median


work = tempfile.mkdtemp(prefix="imgbake-vitals-")
images = serve(a.corpus)
before = os.path.join(work, "before")
os.makedirs(before)
for name, text in pages("http://127.0.0.1:%d" % images).items():
    open(os.path.join(before, name), "w").write(text)
# Examples/site's index, its remote images (https://images.example.com/img/…) from a loopback server.
examples_root = os.path.join(work, "examples-origin")
os.makedirs(examples_root)
os.symlink(os.path.join(root, "Examples/images"), os.path.join(examples_root, "img"))
examples = serve(examples_root)
index = open(os.path.join(root, "Examples/site/index.html")).read()
open(os.path.join(before, "examples-site.html"), "w").write(index.replace("https://images.example.com", "http://127.0.0.1:%d" % examples))
with open(os.path.join(work, "imgbake.toml"), "w") as f:
    f.write("[fetch]\nallow_private_networks = true   # the origins are on loopback\n" + a.toml.replace("\\n", "\n") + "\n")
after = os.path.join(work, "after")
build = subprocess.run([a.binary, "build", before, "--out", after, "--cache-dir", os.path.join(work, "cache"), "--config",
                        os.path.join(work, "imgbake.toml"), "--quiet"], capture_output=True, text=True)
if build.returncode != 0:
    sys.exit("imgbake failed: " + build.stderr)
# Each site at its own root: pages refer to /_img/….
ports = {"before": serve(before), "after": serve(after)}
browser = Browser(a.chromium, os.path.join(work, "profile"), details=a.details)
print("| page | LCP before ms | LCP after ms | ratio | CLS before | CLS after | KB before | KB after | ratio | requests before | after | LCP element after |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in sorted(os.listdir(before)):
    if not name.endswith(".html"):
        continue
    b = median_of(browser, "http://127.0.0.1:%d/%s" % (ports["before"], name))
    f = median_of(browser, "http://127.0.0.1:%d/%s" % (ports["after"], name))
    print("| %s | %.0f | %.0f | %.3f | %.3f | %.3f | %.0f | %.0f | %.3f | %d | %d | %s |" % (
        name, b["lcp"], f["lcp"], f["lcp"] / b["lcp"] if b["lcp"] else 0, b["cls"], f["cls"], b["bytes"] / 1024, f["bytes"] / 1024,
        f["bytes"] / b["bytes"] if b["bytes"] else 0, b["requests"], f["requests"], f["element"] or "-"), flush=True)
browser.close()
if a.keep:
    print("kept: " + work)
else:
    shutil.rmtree(work)

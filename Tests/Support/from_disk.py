#!/usr/bin/env python3
"""Opens pages from disk (file://) in headless Chromium, on a screen tall enough for every image to be
in it (so lazy ones load too), and prints, as JSON, each page's local images (from disk or written
into the page; remote ones, which a page may keep, are not counted): how many, how many loaded, the
sources of those that did not. Exit 1 when one did not load.

    from_disk.py PAGE.html [PAGE.html ...]
"""
import json, os, shutil, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium import Browser  # noqa: E402

IMAGES = """
Object.defineProperty(window, '__vitals', {get() {
  const images = [...document.images].filter(i => !/^https?:/.test(i.currentSrc || i.src));
  const shown = i => i.complete && i.naturalWidth > 0;
  const name = u => u.split('/').pop();
  const first = i => { const s = i.parentElement && i.parentElement.tagName === 'PICTURE' && i.parentElement.querySelector('source');
                       return s ? {type: s.type, files: s.srcset.split(',').map(c => name(c.trim().split(/\s+/)[0]))} : null; };
  return {total: images.length, loaded: images.filter(shown).length, broken: images.filter(i => !shown(i)).map(i => i.currentSrc || i.src),
          shown: images.filter(shown).map(i => ({file: name(i.currentSrc), first: first(i)}))};
}});
"""
TALL = {"width": 1280, "height": 20000, "deviceScaleFactor": 1, "mobile": False}

profile = tempfile.mkdtemp(prefix="imgbake-chromium-")
browser = Browser(os.environ.get("CHROMIUM", "/usr/bin/chromium"), profile)
results = {}
for page in sys.argv[1:]:
    result = browser.load("file://" + os.path.abspath(page), device=TALL, observer=IMAGES, cache=True)
    results[page] = {key: result[key] for key in ("total", "loaded", "broken", "shown")}
browser.close()
shutil.rmtree(profile, ignore_errors=True)
print(json.dumps(results, indent=1))
sys.exit(0 if all(r["total"] == r["loaded"] for r in results.values()) else 1)

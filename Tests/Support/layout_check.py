#!/usr/bin/env python3
"""Does imgbake's rewrite change how a page lays out? Compares a site before imgbake and after, page by
page, in headless Chromium (Debian's, over its DevTools protocol: chromium.py):

    layout_check.py BEFORE AFTER [--site-root /proj/] [--pages GLOB ...] [--json]
                    [--chromium /usr/bin/chromium] [--label NAME] [--timeout 60]

BEFORE is a built site as the generator wrote it, AFTER the same site after imgbake; each is served
from its own loopback HTTP server, with the URL path --site-root standing for the folder (a site built
under a sub-path, as Jekyll's `baseurl: /proj`). Every *.html in AFTER (relative path; the same path in
BEFORE; --pages keeps those matching one of the globs) is loaded as a phone (412×915 CSS px, device
pixel ratio 2.625, mobile) and on a desktop (1280×900, ratio 1): cache off; once loaded and the network
quiet, scrolled down by half a viewport at a time to the bottom (so lazy images load), until every
<img> is complete and the network quiet again; then, back at the top, one evaluation takes each <img>'s
box in document coordinates, `complete`, `naturalWidth`, `currentSrc` and whether it is local (same
origin), remote or a data: URI, and `document.body.innerText`; the Network domain gives the bytes the
page cost (encodedDataLength, every request, and image requests alone).

Per page and viewport, BEFORE and AFTER must have the same number of <img>s, each the same box (x, y,
width and height within ±1 CSS px), the same text, and no image broken in AFTER (complete with
naturalWidth 0) that was not broken in BEFORE (a missing remote image stays missing). A page that is
not loaded and quiet within --timeout seconds (each viewport, each side) is reported, not waited for.

Prints a table (one row per page × viewport), a line per changed box (`resized` when its own width or
height changed, `moved` when it was only pushed elsewhere by another), per broken image, per text that
differs, and a total line; with --json, also one JSON object (rows, changes, broken, texts, totals) as
the last line of stdout. Exit status 1 when a box changed, a text differs, an image broke, the numbers
of images differ or a page could not be measured; 0 otherwise.
"""
import argparse, fnmatch, http.server, json, os, shutil, signal, sys, tempfile, time, threading, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium import Browser, Tab  # noqa: E402  (Tests/Support/chromium.py: headless Chromium over DevTools)

VIEWPORTS = [("phone", {"width": 412, "height": 915, "deviceScaleFactor": 2.625, "mobile": True}),
             ("desktop", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})]
TOLERANCE = 1.0      # CSS px, for each of x, y, width, height
IMAGES_GRACE = 5.0   # s an <img> may stay incomplete once the network is quiet (a lazy one never shown)

SCROLL = """(() => { window.scrollTo(0, %d); const root = document.scrollingElement || document.documentElement;
  return [window.scrollY, window.innerHeight, root.scrollHeight]; })()"""
INCOMPLETE = "[...document.images].filter(i => !i.complete).length"
# Back to the top, and two frames for what scrolling set off (a resize observer, a sticky header).
TOP = """new Promise(done => { window.scrollTo(0, 0); let frames = 0;
  const frame = () => ++frames == 2 ? done(true) : requestAnimationFrame(frame);
  requestAnimationFrame(frame); setTimeout(() => done(false), 500); })"""
COLLECT = """(async () => {
  // Web fonts settled; but `ready` waits for the document's load too, which a page that timed out lacks.
  if (document.fonts) await Promise.race([document.fonts.ready, new Promise(done => setTimeout(done, 1000))]);
  const sx = window.scrollX, sy = window.scrollY;
  const images = [...document.images].map(img => {
    const box = img.getBoundingClientRect(), src = img.currentSrc || img.src;
    let origin = 'remote';
    try {
      const url = new URL(src, location.href);
      origin = url.protocol == 'data:' ? 'data' : url.origin == location.origin ? 'local' : 'remote';
    } catch (e) {}
    return {x: box.left + sx, y: box.top + sy, width: box.width, height: box.height, complete: img.complete,
            naturalWidth: img.naturalWidth, currentSrc: img.currentSrc, src: img.src, origin};
  });
  const root = document.scrollingElement || document.documentElement;
  return {images, text: document.body ? document.body.innerText : '', size: [root.scrollWidth, root.scrollHeight]};
})()"""


def serve(folder, prefix):
    """A threaded loopback HTTP server for `folder`, at URL path `prefix` ("/" or "/proj/"); its port."""
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kw):
            super().__init__(*args, directory=folder, **kw)

        def log_message(self, *args):
            pass

        def send_head(self):
            path = urllib.parse.urlsplit(self.path).path
            if not path.startswith(prefix):
                if path + "/" == prefix:
                    self.send_response(301)
                    self.send_header("Location", prefix)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self.send_error(404, "outside the site root %s" % prefix)
                return None
            self.path = "/" + self.path[len(prefix):]
            return super().send_head()

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], ConnectionError):  # the browser gave up a request: not ours to report
                super().handle_error(request, client_address)

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def pages_of(after, globs):
    found = []
    for folder, dirs, names in os.walk(after):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            if name.endswith(".html"):
                path = os.path.relpath(os.path.join(folder, name), after).replace(os.sep, "/")
                if not globs or any(fnmatch.fnmatch(path, glob) for glob in globs):
                    found.append(path)
    return sorted(found)


def measure(browser, url, device, timeout):
    """One page in one viewport: what COLLECT gives, the bytes, and `late` (what was still loading when
    `timeout` ran out) or `error` (the browser failed us)."""
    deadline = time.monotonic() + timeout
    result = {"late": None, "error": None}
    tab, quiet = None, False
    try:
        tab = Tab(browser, device=device)
        tab.navigate(url)
        quiet = tab.wait_quiet(deadline)
        if quiet:
            y, previous = 0, -1
            while time.monotonic() < deadline:
                scrolled, height, total = tab.evaluate(SCROLL % y, timeout=10)
                tab.pump(0.15)
                if scrolled + height >= total - 1 or scrolled <= previous:
                    break
                previous, y = scrolled, int(scrolled + max(height // 2, 100))
            stuck_since = None
            while True:
                quiet = tab.wait_quiet(deadline)
                if not quiet or tab.evaluate(INCOMPLETE, timeout=10) == 0:
                    break
                stuck_since = stuck_since or time.monotonic()
                if time.monotonic() - stuck_since > IMAGES_GRACE:  # left incomplete: the row says how many
                    break
                tab.pump(0.25)
        if not quiet:
            pending = tab.pending()
            result["late"] = ("not loaded" if not tab.loaded else "not quiet") + " after %g s%s" % (
                timeout, (": " + ", ".join(pending[:3]) + (" …" if len(pending) > 3 else "")) if pending else "")
        tab.evaluate(TOP, timeout=5)
        result.update(tab.evaluate(COLLECT, timeout=10))
    except Exception as error:  # a hung or crashed renderer, the websocket: reported for this page
        result["error"] = "%s: %s" % (type(error).__name__, error)
    finally:
        result["bytes"], result["image_bytes"] = (tab.transferred(), tab.transferred("Image")) if tab else (0, 0)
        try:
            if tab:
                tab.close()
        except Exception:
            pass
    return result


def box(image):
    return {key: round(image[key], 2) for key in ("x", "y", "width", "height")}


def short(image):
    """The image's source as a line can show it: a local one by its path, a data: URI by its start."""
    src = image.get("currentSrc") or image.get("src") or ""  # an image not loaded has no currentSrc
    if src.startswith("data:"):
        return src[:30] + "…"
    parts = urllib.parse.urlsplit(src)
    return parts.path if image.get("origin") == "local" else src


def broken(image):
    return image["complete"] and image["naturalWidth"] == 0


def compare(label, page, view, before, after):
    row = {"page": page, "label": label, "viewport": view, "images_before": len(before.get("images", [])),
           "images_after": len(after.get("images", [])), "compared": 0, "changed": 0, "resized": 0, "broken": 0, "text_differs": False,
           "incomplete_before": sum(not i["complete"] for i in before.get("images", [])),
           "incomplete_after": sum(not i["complete"] for i in after.get("images", [])),
           "bytes_before": before["bytes"], "bytes_after": after["bytes"],
           "image_bytes_before": before["image_bytes"], "image_bytes_after": after["image_bytes"],
           "size_before": before.get("size"), "size_after": after.get("size"), "problems": []}
    changes, broke, texts = [], [], []
    for side, result in (("before", before), ("after", after)):
        if result["error"]:
            row["problems"].append("%s: %s" % (side, result["error"]))
        if result["late"]:
            row["problems"].append("%s: %s" % (side, result["late"]))
    if "images" not in before or "images" not in after:
        return row, changes, broke, texts
    if len(before["images"]) != len(after["images"]):
        row["problems"].append("%d <img> before, %d after" % (len(before["images"]), len(after["images"])))
    else:
        row["compared"] = len(after["images"])
        for index, (b, a) in enumerate(zip(before["images"], after["images"])):
            if any(abs(a[key] - b[key]) > TOLERANCE for key in ("x", "y", "width", "height")):
                # "resized": its own width or height changed; "moved": only pushed elsewhere by another box.
                kind = "resized" if any(abs(a[key] - b[key]) > TOLERANCE for key in ("width", "height")) else "moved"
                row["changed"] += 1
                row["resized"] += kind == "resized"
                changes.append({"label": label, "page": page, "viewport": view, "index": index, "kind": kind, "src_before": short(b),
                                "src_after": short(a), "before": box(b), "after": box(a)})
            if broken(a) and not broken(b):
                row["broken"] += 1
                broke.append({"label": label, "page": page, "viewport": view, "index": index, "src_before": short(b), "src_after": short(a)})
    if before["text"] != after["text"]:
        row["text_differs"] = True
        at = next((i for i, (x, y) in enumerate(zip(before["text"], after["text"])) if x != y), min(len(before["text"]), len(after["text"])))
        texts.append({"label": label, "page": page, "viewport": view, "at": at,
                      "before": before["text"][max(0, at - 30):at + 40], "after": after["text"][max(0, at - 30):at + 40]})
    return row, changes, broke, texts


def failed(row):
    return bool(row["changed"] or row["broken"] or row["text_differs"] or row["problems"])


def kb(count):
    return "%.0f" % (count / 1024)


def print_table(rows, changes, broke, texts, totals):
    header = ["page", "viewport", "imgs", "changed", "resized", "broken", "text", "KB before", "KB after", "img KB before", "img KB after", "notes"]
    lines = [header]
    for row in rows:
        notes = list(row["problems"])
        for side in ("before", "after"):
            if row["incomplete_" + side]:
                notes.append("%d incomplete %s" % (row["incomplete_" + side], side))
        lines.append([(row["label"] + "/" if row["label"] else "") + row["page"], row["viewport"],
                      str(row["compared"]) if not row["problems"] or row["compared"] else "%d/%d" % (row["images_before"], row["images_after"]),
                      str(row["changed"]), str(row["resized"]), str(row["broken"]), "differs" if row["text_differs"] else "same",
                      kb(row["bytes_before"]), kb(row["bytes_after"]), kb(row["image_bytes_before"]), kb(row["image_bytes_after"]), "; ".join(notes)])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    for n, line in enumerate(lines):
        cells = [cell.ljust(width) if i < 2 else cell.rjust(width) for i, (cell, width) in enumerate(zip(line, widths))]
        print("  ".join(cells + [line[-1]]).rstrip())
        if n == 0:
            print("  ".join("-" * width for width in widths) + "  -----")
    if changes:
        print("\nchanged boxes (x, y, width × height in CSS px, document coordinates):")
    fmt = lambda b: "%g,%g %g×%g" % (b["x"], b["y"], b["width"], b["height"])
    for change in changes:
        print("  %s %s img %d %s: %s → %s: %s → %s" % (change["page"], change["viewport"], change["index"], change["kind"],
                                                      change["src_before"], change["src_after"], fmt(change["before"]), fmt(change["after"])))
    if broke:
        print("\nbroken in AFTER only:")
    for item in broke:
        print("  %s %s img %d: %s → %s" % (item["page"], item["viewport"], item["index"], item["src_before"], item["src_after"]))
    if texts:
        print("\ntext that differs (from the first difference):")
    for item in texts:
        print("  %s %s at %d: %r → %r" % (item["page"], item["viewport"], item["at"], item["before"], item["after"]))
    print("\ntotal: %(rows)d page×viewport, %(images)d images compared, %(changed)d boxes changed (%(resized)d resized), %(broken)d broken, "
          "%(texts)d texts differ, %(problems)d not measured or not comparable: %(verdict)s" % totals)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--site-root", default="/", help="the URL path the site is served at (default /)")
    parser.add_argument("--pages", nargs="+", action="extend", default=[], metavar="GLOB", help="only pages whose path matches")
    parser.add_argument("--json", action="store_true", help="also print the result as one JSON object, the last line")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--label", default="", help="a name for the site, before each page in the table")
    parser.add_argument("--timeout", type=float, default=60, help="s a page may take to load and go quiet (each viewport, each side)")
    parser.add_argument("--connect-to", action="append", default=[], metavar="HOST:PORT:ADDRESS:PORT",
                        help="as imgbake's: the browser reaches HOST:PORT at ADDRESS:PORT (a test's loopback origin); "
                             "certificates are then not checked (the origins' own CA)")
    args = parser.parse_args()
    prefix = "/" + args.site_root.strip("/") + "/" if args.site_root.strip("/") else "/"
    for folder in (args.before, args.after):
        if not os.path.isdir(folder):
            sys.exit("layout_check.py: %s is not a folder" % folder)
    pages = pages_of(args.after, args.pages)
    if not pages:
        sys.exit("layout_check.py: no page in %s%s" % (args.after, " matching " + " ".join(args.pages) if args.pages else ""))

    # SIGTERM and SIGHUP end the run as Ctrl-C does: through the `finally` that ends Chromium.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda number, frame: sys.exit(128 + number))
    servers = {side: serve(os.path.abspath(folder), prefix) for side, folder in (("before", args.before), ("after", args.after))}
    base = {side: "http://127.0.0.1:%d%s" % (server.server_address[1], prefix) for side, server in servers.items()}
    profile = tempfile.mkdtemp(prefix="imgbake-layout-")
    rules = []
    for route in args.connect_to:
        host, port, address, target = route.rsplit(":", 3)
        rules.append("MAP %s:%s %s:%s" % (host, port, address, target))
    flags = (["--host-resolver-rules=" + ", ".join(rules), "--ignore-certificate-errors"] if rules else [])
    browser = None
    rows, changes, broke, texts = [], [], [], []
    try:
        browser = Browser(args.chromium, profile, flags=flags)
        for page in pages:
            for view, device in VIEWPORTS:
                results = {}
                for side in ("before", "after"):
                    if side == "before" and not os.path.isfile(os.path.join(args.before, page)):
                        results[side] = {"error": "no such page in BEFORE", "late": None, "bytes": 0, "image_bytes": 0}
                        continue
                    if browser.process.poll() is not None or not browser.ws.connected:  # Chromium died under an earlier page: a new one
                        browser.close()
                        browser = Browser(args.chromium, profile, flags=flags)
                    results[side] = measure(browser, base[side] + urllib.parse.quote(page), device, args.timeout)
                row, c, b, t = compare(args.label, page, view, results["before"], results["after"])
                rows.append(row)
                changes += c
                broke += b
                texts += t
                print("layout_check: %s %s: %d images, %d changed%s" % (page, view, row["compared"], row["changed"],
                      "; " + "; ".join(row["problems"]) if row["problems"] else ""), file=sys.stderr, flush=True)
    finally:
        if browser:
            browser.close()
        for server in servers.values():
            server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    totals = {"rows": len(rows), "images": sum(r["compared"] for r in rows), "changed": len(changes),
              "resized": sum(c["kind"] == "resized" for c in changes), "broken": len(broke),
              "texts": len(texts), "problems": sum(bool(r["problems"]) for r in rows)}
    ok = not any(failed(row) for row in rows)
    totals["verdict"] = "OK" if ok else "FAIL"
    print_table(rows, changes, broke, texts, totals)
    if args.json:
        print(json.dumps({"label": args.label, "ok": ok, "totals": totals, "rows": rows, "changes": changes, "broken": broke, "texts": texts}))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`imgbake serve` in front of a real dev server, looked at in Chromium (DevTools protocol):

  serve_check.py --imgbake BIN --project DIR --page /posts/first-light/ --edit content/posts/first-light.md
                 --append TEXT --alt New [--imgbake-arg ARG ...] -- hugo server --port {upstream}

starts `imgbake serve --port {proxy} ARGS -- COMMAND` in DIR ({upstream} and {proxy} become free loopback
ports, {free} one more), then checks, printing what it measured as JSON (exit 1 when a check fails):
- the page through the proxy, loaded twice in Chromium (cold: images named by pending URLs, made from
  the moment the page named them; then warm: the names a build writes): every image loads, from imgbake's image path (/_img/),
  and the LCP image has fetchpriority="high" on the second view;
- after TEXT is appended to the content file EDIT, the page open in Chromium reloads by itself (the
  dev server's live reload) within 2 s (--reload-within), and shows an image with alt ALT loaded from /_img/;
- no file appeared in the project but the dev server's own (its lock files, what it renders to disk),
  and none of those names an imgbake file;
- SIGINT ends imgbake and the dev server (nothing listens on either port after), with no temporary file
  left in the cache.
"""
import argparse, json, os, signal, socket, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium import Browser  # noqa: E402

# What dev servers write into their project themselves, not imgbake.
OWN_FILES = {".hugo_build.lock", ".jekyll-metadata"}
OWN_FOLDERS = ("_site/", ".jekyll-cache/", "resources/", "site/", ".sass-cache/", "public/")

PAGE_STATE = """JSON.stringify({
  images: [...document.images].map(i => ({src: i.currentSrc || i.src, alt: i.alt, loaded: i.complete && i.naturalWidth > 0,
                                            priority: i.getAttribute('fetchpriority')})),
  href: location.href, started: performance.timeOrigin})"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def files(root):
    found = set()
    for folder, _, names in os.walk(root):
        for name in names:
            found.add(os.path.relpath(os.path.join(folder, name), root))
    return found


class Page:
    """One page target kept open (so that live reload can reload it), with its events."""

    def __init__(self, browser):
        self.browser = browser
        browser.events = []
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for method, params in [("Network.enable", {}), ("Network.setCacheDisabled", {"cacheDisabled": True}), ("Page.enable", {})]:
            browser.send(method, params, self.session)

    def wait_loaded(self, timeout):
        """Waits for the next load event and a quiet network; returns seconds waited, or None. `html` is
        then the seconds until the page's own HTML had arrived."""
        browser, start, loaded, pending, last = self.browser, time.monotonic(), False, set(), time.monotonic()
        document, self.html = None, None
        browser.ws.settimeout(0.1)
        try:
            while time.monotonic() - start < timeout:
                events, browser.events = browser.events, []
                try:
                    events.append(json.loads(browser.ws.recv()))
                except Exception:
                    pass
                for event in events:
                    method, params = event.get("method"), event.get("params", {})
                    # A live reload's long poll (MkDocs) stays open: it is not the page loading.
                    if method == "Network.requestWillBeSent" and "livereload" not in params["request"]["url"]:
                        pending.add(params["requestId"])
                        if params.get("type") == "Document" and document is None:
                            document = params["requestId"]
                    elif method == "Network.loadingFinished" and params["requestId"] == document and self.html is None:
                        self.html = time.monotonic() - start
                    if method in ("Network.loadingFinished", "Network.loadingFailed"):
                        pending.discard(params["requestId"])
                    elif method == "Page.loadEventFired" and not loaded:
                        loaded = time.monotonic() - start
                    if method:
                        last = time.monotonic()
                # Loaded and quiet; a request left without its end after 2 s of quiet is not waited for
                # (Chromium reports a web worker's script to the page without one: Material's search).
                if loaded and time.monotonic() - last > (2.0 if pending else 0.5):
                    return loaded
            return loaded or None
        finally:
            browser.ws.settimeout(None)

    def go(self, url, timeout=60):
        self.browser.events = []
        self.browser.send("Page.navigate", {"url": url}, self.session)
        return self.wait_loaded(timeout)

    def state(self):
        result = self.browser.send("Runtime.evaluate", {"expression": PAGE_STATE, "returnByValue": True}, self.session)
        return json.loads(result["result"]["value"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--imgbake", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--page", required=True)
    parser.add_argument("--edit", required=True)
    parser.add_argument("--append", required=True)
    parser.add_argument("--alt", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--reload-within", type=float, default=2.0)
    parser.add_argument("--images", default="/_img/", help="imgbake's image path on the site (output.public_path)")
    parser.add_argument("--imgbake-arg", action="append", default=[])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    # A hang anywhere (a browser waiting on a server that died) is a failure, with what was measured.
    def too_long(*_):
        raise TimeoutError("serve_check.py took more than 240 s")
    signal.signal(signal.SIGALRM, too_long)
    signal.alarm(240)
    command = [part for part in args.command if part != "--"]
    upstream, proxy, spare = free_port(), free_port(), free_port()
    command = [part.replace("{upstream}", str(upstream)).replace("{proxy}", str(proxy)).replace("{free}", str(spare)) for part in command]
    before = files(args.project)
    failures, report = [], {"command": command}

    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    serve = subprocess.Popen([args.imgbake, "serve", "--port", str(proxy), "--cache-dir", args.cache] + args.imgbake_arg + ["--"] + command,
                             cwd=args.project, stdout=log, stderr=subprocess.STDOUT)
    base = "http://127.0.0.1:%d" % proxy
    profile = tempfile.mkdtemp()
    browser = None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(base + args.page, timeout=5) as response:
                    if response.status == 200:
                        break
            except Exception:
                time.sleep(0.2)
        else:
            failures.append("the page never answered 200 through the proxy")
            raise SystemExit
        browser = Browser(args.chromium, profile)
        page = Page(browser)
        for view in ("cold", "warm"):
            started = time.monotonic()
            loaded = page.go(base + args.page)
            state = page.state()
            report[view] = {"load_event_s": loaded and round(loaded, 3), "total_s": round(time.monotonic() - started, 3), "images": state["images"]}
            if not state["images"]:
                failures.append("%s: no images on the page" % view)
            for image in state["images"]:
                if not image["loaded"]:
                    failures.append("%s: %s did not load" % (view, image["src"]))
                if not image["src"].startswith(base + args.images):
                    failures.append("%s: %s is not from imgbake's image path" % (view, image["src"]))
        if not any(image["priority"] == "high" for image in report["warm"]["images"]):
            failures.append("warm: no image has fetchpriority=high")
        if any("/_img/pending/" in image["src"] for image in report["warm"]["images"]):
            failures.append("warm: an image is still named by a pending URL")

        # The edit: the dev server rebuilds, its live reload reloads the page in the browser by itself.
        browser.events = []
        with open(os.path.join(args.project, args.edit), "a") as source:
            source.write(args.append)
        reloaded = page.wait_loaded(max(10, args.reload_within))
        report["reload_s"] = reloaded and round(reloaded, 3)
        if not reloaded or reloaded > args.reload_within:
            failures.append("the page did not reload by itself within %g s of the edit (%s)" % (args.reload_within, reloaded))
        state = page.state()
        new = [image for image in state["images"] if image["alt"] == args.alt]
        report["after_edit"] = new
        if not new or not all(image["loaded"] and image["src"].startswith(base + args.images) for image in new):
            failures.append("after the edit: no image with alt %r loaded from %s: %s" % (args.alt, args.images, new))

        # What the dev server writes itself (Hugo 0.168 renders into public/, Jekyll into _site/) is its
        # own: nothing imgbake made may be among it, or anywhere else in the project.
        appeared = sorted(files(args.project) - before)
        report["files_appeared"] = appeared
        imgbakes = [name for name in appeared if "_img" in name or b"/_img/" in open(os.path.join(args.project, name), "rb").read()]
        strangers = [name for name in appeared if os.path.basename(name) not in OWN_FILES and not name.startswith(OWN_FOLDERS)]
        if imgbakes or strangers:
            failures.append("files appeared in the project: imgbake's %s, others %s" % (imgbakes, strangers))
    except SystemExit:
        pass
    except TimeoutError as error:
        failures.append(str(error))
    finally:
        signal.alarm(0)
        if browser:
            browser.close()
        serve.send_signal(signal.SIGINT)
        try:
            report["exit_status"] = serve.wait(timeout=15)
            if report["exit_status"] != 0:
                failures.append("imgbake ended with %d after SIGINT" % report["exit_status"])
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()
            failures.append("imgbake did not end within 15 s of SIGINT")
        time.sleep(0.3)
        for name, port in (("imgbake", proxy), ("the dev server", upstream)):
            if listening(port):
                failures.append("%s still listens on %d after SIGINT" % (name, port))
        temporaries = [name for name in files(args.cache) if ".tmp" in name or os.path.basename(name).startswith(".tmp")]
        if temporaries:
            failures.append("temporary files left in the cache: %s" % temporaries)
        log.seek(0)
        printed = log.read().splitlines()
        # The first view had images to make (named by pending URLs; made since the page first named them).
        if not any(" to make" in line for line in printed):
            failures.append("no page had an image to make: was the cache warm?")
        report["log"] = printed[-40:]
    report["failures"] = failures
    print(json.dumps(report, indent=1))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

"""Headless Chromium (Debian's) over its DevTools protocol, for the tests and benchmarks that look at
pages in a browser: one page target at a time, flat sessions, through PyPI's websocket-client.
`Browser.load` loads a page and returns what it measured; a `Tab` keeps a page open and is driven step
by step (navigate, wait for a quiet network, evaluate JavaScript in it)."""
import json, re, subprocess, sys, threading, time

import websocket


# A worker's script is fetched for the worker's own target: the page's Network domain sees the request
# start (its id is the worker's target id) and never end, so the page would never be quiet. With
# auto-attach on, the worker's target attaches as it starts, and that ends the request for the page.
WORKERS = ("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True})


def worker_started(event):
    info = event.get("params", {}).get("targetInfo", {})
    return event.get("method") == "Target.attachedToTarget" and info.get("type") in ("worker", "shared_worker", "service_worker")


class Browser:
    """Headless Chromium over its DevTools protocol (one page target, flat sessions)."""

    def __init__(self, chromium, profile, details=False, flags=()):
        self.details = details
        self.process = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                         "--disable-background-networking", "--remote-debugging-port=0", "--user-data-dir=" + profile]
                                        + list(flags) + ["about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in self.process.stderr:
            match = re.search(r"DevTools listening on (ws://\S+)", line)
            if match:
                break
        else:
            sys.exit("chromium did not start")
        threading.Thread(target=lambda: [None for _ in self.process.stderr], daemon=True).start()
        self.ws = websocket.create_connection(match.group(1), max_size=None)
        self.next = 0
        self.events = []

    def send(self, method, params=None, session=None, wait=True):
        self.next += 1
        message = {"id": self.next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while wait:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def load(self, url, network=None, device=None, observer=None, cache=False):
        """Loads `url` in a fresh page (emulating `network` and `device`, running `observer` first), waits
        until it is loaded and the network quiet for a second; returns what `observer` left in
        `window.__vitals`, with the bytes and requests the load cost."""
        self.events = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        setup = [("Network.enable", {}), ("Network.setCacheDisabled", {"cacheDisabled": not cache}), ("Page.enable", {}), WORKERS]
        if network: setup.append(("Network.emulateNetworkConditions", network))
        if device: setup.append(("Emulation.setDeviceMetricsOverride", device))
        if observer: setup.append(("Page.addScriptToEvaluateOnNewDocument", {"source": observer}))
        for method, params in setup:
            self.send(method, params, session)
        self.send("Page.navigate", {"url": url}, session)
        requests, transferred, loaded, last, pending, urls = 0, 0, False, time.monotonic(), set(), {}
        self.ws.settimeout(0.2)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            events, self.events = self.events, []
            try:
                events.append(json.loads(self.ws.recv()))
            except websocket.WebSocketTimeoutException:
                pass
            for event in events:
                method, params = event.get("method"), event.get("params", {})
                if method == "Network.requestWillBeSent":
                    requests += 1
                    pending.add(params["requestId"])
                    urls[params["requestId"]] = params["request"]["url"]
                elif method == "Network.loadingFinished":
                    transferred += params.get("encodedDataLength", 0)
                    pending.discard(params["requestId"])
                    if self.details and "/_img/" in urls.get(params["requestId"], ""):
                        print("    %8d %s" % (params.get("encodedDataLength", 0), urls[params["requestId"]].split("/")[-1]))
                elif method == "Network.loadingFailed" or worker_started(event):
                    pending.discard(params.get("requestId") or params["targetInfo"]["targetId"])
                elif method == "Page.loadEventFired":
                    loaded = True
                if method:
                    last = time.monotonic()
            # Loaded, nothing in flight, and quiet for a second: LCP and CLS are settled.
            if loaded and not pending and time.monotonic() - last > 1.0:
                break
        self.ws.settimeout(None)
        vitals = self.send("Runtime.evaluate", {"expression": "JSON.stringify(window.__vitals || {})", "returnByValue": True}, session)
        self.send("Target.closeTarget", {"targetId": target})
        result = json.loads(vitals["result"]["value"])
        result.update({"bytes": transferred, "requests": requests})
        return result

    def close(self):
        self.ws.close()
        stop(self.process)


class Tab:
    """One page target kept open (emulating `device`, cache off unless `cache`), driven step by step:
    `navigate`, `wait_quiet`, `evaluate`, `close`. Its requests are kept from the Network domain:
    `requests` maps a request id to {url, type, bytes, done}, bytes being `encodedDataLength`.
    `timeout` bounds each DevTools command (a hung renderer raises, instead of waiting forever)."""

    LONG_LIVED = ("EventSource", "WebSocket")  # open for the page's life: not a load in flight

    def __init__(self, browser, device=None, cache=False, timeout=30):
        self.browser, self.timeout = browser, timeout
        self.browser.ws.settimeout(timeout)
        browser.events = []
        self.target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": self.target, "flatten": True})["sessionId"]
        setup = [("Network.enable", {}), ("Network.setCacheDisabled", {"cacheDisabled": not cache}), ("Page.enable", {}), WORKERS]
        if device:
            setup.append(("Emulation.setDeviceMetricsOverride", device))
        for method, params in setup:
            browser.send(method, params, self.session)
        self.requests, self.loaded, self.last = {}, False, time.monotonic()

    def _take(self, event):
        if event.get("sessionId") != self.session:
            return
        method, params = event.get("method", ""), event.get("params", {})
        if method == "Network.requestWillBeSent":
            # A redirect sends it again under the same id: still one request.
            known = self.requests.setdefault(params["requestId"], {"bytes": 0, "done": False})
            known.update(url=params["request"]["url"], type=params.get("type", "Other"))
        elif method == "Network.loadingFinished":
            known = self.requests.setdefault(params["requestId"], {"url": "", "type": "Other", "bytes": 0})
            known.update(bytes=params.get("encodedDataLength", 0), done=True)
        elif method == "Network.loadingFailed":
            known = self.requests.setdefault(params["requestId"], {"url": "", "type": "Other", "bytes": 0})
            known.update(done=True, failed=params.get("errorText", ""))
        elif worker_started(event):
            known = self.requests.setdefault(params["targetInfo"]["targetId"], {"url": params["targetInfo"].get("url", ""), "type": "Script", "bytes": 0})
            known.update(done=True)
        elif method == "Page.loadEventFired":
            self.loaded = True
        if method.startswith("Network."):
            self.last = time.monotonic()

    def pump(self, seconds):
        """Takes the events that arrive within `seconds` (and those already received)."""
        browser, end = self.browser, time.monotonic() + seconds
        try:
            while True:
                events, browser.events = browser.events, []
                for event in events:
                    self._take(event)
                left = end - time.monotonic()
                if left <= 0:
                    return
                browser.ws.settimeout(min(left, 0.2))
                try:
                    self._take(json.loads(browser.ws.recv()))
                except websocket.WebSocketTimeoutException:
                    pass
        finally:
            browser.ws.settimeout(self.timeout)

    def pending(self):
        return sorted(r["url"] for r in self.requests.values() if not r.get("done") and r.get("type") not in self.LONG_LIVED)

    def wait_quiet(self, deadline, quiet=0.5, load=True):
        """Waits until the page is loaded (if `load`), nothing is in flight and no request has started
        or ended for `quiet` s; False if that did not happen before `deadline` (time.monotonic())."""
        while True:
            self.pump(0.1)
            if (self.loaded or not load) and not self.pending() and time.monotonic() - self.last >= quiet:
                return True
            if time.monotonic() >= deadline:
                return False

    def navigate(self, url):
        self.loaded, self.last = False, time.monotonic()
        self.browser.send("Page.navigate", {"url": url}, self.session)

    def evaluate(self, expression, timeout=None):
        """The value of `expression` in the page (a promise is awaited); JavaScript exceptions raise.
        `timeout` (s) stops a script that runs that long; a promise that never settles is bounded only by
        the Tab's command timeout (the websocket raises)."""
        params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        if timeout:
            params["timeout"] = int(timeout * 1000)
        reply = self.browser.send("Runtime.evaluate", params, self.session)
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            raise RuntimeError("in the page: %s" % (details.get("exception", {}).get("description") or details.get("text")))
        return reply["result"].get("value")

    def transferred(self, kind=None):
        """Bytes the page's requests cost (`kind`: only requests of that resource type, e.g. "Image")."""
        return sum(r["bytes"] for r in self.requests.values() if kind is None or r.get("type") == kind)

    def close(self):
        try:
            self.browser.send("Target.closeTarget", {"targetId": self.target})
        finally:
            self.browser.events = []
            self.browser.ws.settimeout(None)


def stop(process, grace=10):
    """Ends a child and waits for it (no zombie left behind): SIGTERM, then SIGKILL after `grace` s."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()

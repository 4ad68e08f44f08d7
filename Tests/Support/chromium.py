"""Headless Chromium (Debian's) over its DevTools protocol, for the tests and benchmarks that look at
pages in a browser: one page target at a time, flat sessions, through PyPI's websocket-client."""
import json, re, subprocess, sys, threading, time

import websocket


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
        setup = [("Network.enable", {}), ("Network.setCacheDisabled", {"cacheDisabled": not cache}), ("Page.enable", {})]
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
                elif method == "Network.loadingFailed":
                    pending.discard(params["requestId"])
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


def stop(process, grace=10):
    """Ends a child and waits for it (no zombie left behind): SIGTERM, then SIGKILL after `grace` s."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()

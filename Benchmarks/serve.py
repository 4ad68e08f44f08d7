#!/usr/bin/env python3
"""What `imgbake serve` costs a developer, measured beside the dev server alone:

  python3 Benchmarks/serve.py --imgbake .build/release/imgbake [--corpus /tmp/imgcorpus] [--requests 2000]

1. Added latency on a warm 100 KB page (its image in the cache): `wrk -t1 -c1 --latency` against the
   upstream directly and through the proxy, interleaved, each run long enough for REQUESTS requests;
   p50 and p99 of each, and the difference; for the page sent again unchanged (its rewrite remembered)
   and for the page with other bytes each time (parsed and planned every time).
2. A cold first view in Chromium of a page with 20 remote images (an empty cache; the origin answers
   each request after 50 ms): when the HTML arrived through the proxy against directly from the dev
   server, and the load event (every image made on request).

The upstream is Tests/Support/upstream.py, the origin Tests/Support/origin.py (both on loopback).
"""
import argparse, json, os, re, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Support"))
from chromium import Browser  # noqa: E402
from serve_check import Page  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return response.read()
        except Exception:
            time.sleep(0.1)
    sys.exit("%s did not answer" % url)


def wrk(url, seconds):
    """p50 and p99 in ms, and the requests made."""
    out = subprocess.run(["wrk", "-t1", "-c1", "-d%ds" % seconds, "--latency", url], capture_output=True, text=True, check=True).stdout
    def ms(label):
        value, unit = re.search(r"^\s+%s\s+([\d.]+)(us|ms|s)" % label, out, re.M).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    return {"p50_ms": ms("50%"), "p99_ms": ms("99%"), "requests": int(re.search(r"(\d+) requests in", out).group(1))}


class Setup:
    """An origin, an upstream naming its images, and `imgbake serve` in front, each on loopback."""

    def __init__(self, imgbake, cache, corpus=None, latency_ms=0):
        self.processes = []
        self.origin = free_port()
        roots = ["--root", os.path.join(ROOT, "Examples", "images")] + (["--root", corpus] if corpus else [])
        self.start([sys.executable, os.path.join(ROOT, "Tests", "Support", "origin.py"), "--port", str(self.origin),
                    "--latency-ms", str(latency_ms)] + roots)
        self.upstream = free_port()
        self.start([sys.executable, os.path.join(ROOT, "Tests", "Support", "upstream.py"), "--port", str(self.upstream),
                    "--origin", "http://images.test"] + (["--corpus", corpus] if corpus else []))
        self.proxy = free_port()
        self.log = tempfile.NamedTemporaryFile("w+", suffix=".log")
        self.serve = self.start([imgbake, "serve", "--upstream", "http://127.0.0.1:%d" % self.upstream, "--port", str(self.proxy),
                                 "--cache-dir", cache, "--connect-to", "images.test:80:127.0.0.1:%d" % self.origin], log=self.log)
        wait_for("http://127.0.0.1:%d/page?n=0" % self.proxy)

    def start(self, command, log=None):
        process = subprocess.Popen(command, stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT if log else None)
        self.processes.append(process)
        time.sleep(0.3)
        return process

    def stop(self):
        self.serve.send_signal(signal.SIGINT)
        self.serve.wait(timeout=15)
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def latency(args):
    cache = tempfile.mkdtemp()
    setup = Setup(args.imgbake, cache)
    try:
        proxy, direct = "http://127.0.0.1:%d/sized?kb=100" % setup.proxy, "http://127.0.0.1:%d/sized?kb=100" % setup.upstream
        page = wait_for(proxy).decode()
        for pending in re.findall(r'src="(/_img/pending/[0-9a-f]+)"', page):
            wait_for("http://127.0.0.1:%d%s" % (setup.proxy, pending))
        page = wait_for(proxy)
        assert b"/_img/pending/" not in page and b"srcset=" in page, "the page is not warm"
        # How long a run needs for REQUESTS requests through the proxy, from a short one.
        rate = wrk(proxy, 2)["requests"] / 2
        seconds = max(3, int(args.requests / rate) + 1)
        runs = {"direct": [], "proxy": []}
        for _ in range(2):
            runs["direct"].append(wrk(direct, seconds))
            runs["proxy"].append(wrk(proxy, seconds))
        # The same page with other bytes each time (as while it is being edited): parsed every time.
        runs["direct_changing"], runs["proxy_changing"] = [], []
        seconds = max(3, int(args.requests / (wrk(proxy + "&fresh=1", 2)["requests"] / 2)) + 1)
        for _ in range(2):
            runs["direct_changing"].append(wrk(direct + "&fresh=1", seconds))
            runs["proxy_changing"].append(wrk(proxy + "&fresh=1", seconds))
        best = {name: min(results, key=lambda r: r["p50_ms"]) for name, results in runs.items()}
        return {"page_bytes": len(page), "runs": runs,
                "added_p50_ms": round(best["proxy"]["p50_ms"] - best["direct"]["p50_ms"], 2),
                "added_p99_ms": round(best["proxy"]["p99_ms"] - best["direct"]["p99_ms"], 2),
                "changing_added_p50_ms": round(best["proxy_changing"]["p50_ms"] - best["direct_changing"]["p50_ms"], 2),
                "changing_added_p99_ms": round(best["proxy_changing"]["p99_ms"] - best["direct_changing"]["p99_ms"], 2)}
    finally:
        setup.stop()
        shutil.rmtree(cache, ignore_errors=True)


def document_time(browser, url):
    """Loads `url` in a fresh page: milliseconds until its HTML had arrived, and until the load event."""
    page = Page(browser)
    loaded = page.go(url, timeout=120)
    return {"html_ms": page.html and round(page.html * 1000, 1), "load_event_ms": loaded and round(loaded * 1000, 1)}


def cold_view(args):
    cache, profile = tempfile.mkdtemp(), tempfile.mkdtemp()
    setup = Setup(args.imgbake, cache, corpus=args.corpus, latency_ms=50)
    # The browser reaches the origin as images.test too, for the view without imgbake.
    browser = Browser("/usr/bin/chromium", profile, flags=["--host-resolver-rules=MAP images.test:80 127.0.0.1:%d" % setup.origin])
    try:
        direct = document_time(browser, "http://127.0.0.1:%d/page?n=20" % setup.upstream)
        cold = document_time(browser, "http://127.0.0.1:%d/page?n=20" % setup.proxy)
        warm = document_time(browser, "http://127.0.0.1:%d/page?n=20" % setup.proxy)
        setup.log.seek(0)
        made = sum(1 for line in setup.log if line.startswith("  made "))
        return {"direct": direct, "proxy_cold": cold, "proxy_second_view": warm, "images_made": made,
                "html_added_ms": round(cold["html_ms"] - direct["html_ms"], 1) if cold["html_ms"] and direct["html_ms"] else None}
    finally:
        browser.close()
        setup.stop()
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(profile, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--imgbake", required=True)
    parser.add_argument("--corpus", help="a folder of real images for the cold view (default: Examples/images, repeated)")
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    print(json.dumps({"latency": latency(args), "cold_view": cold_view(args)}, indent=1))


if __name__ == "__main__":
    main()

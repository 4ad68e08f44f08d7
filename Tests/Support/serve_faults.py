#!/usr/bin/env python3
"""`imgbake serve --upstream` against a dev server that misbehaves (upstream.py), checked over HTTP:

  serve_faults.py --imgbake BIN --cache DIR --connect-to images.test:80:127.0.0.1:ORIGIN_PORT

Prints what it measured as JSON; exit 1 when a check fails. Checks, in order: the upstream down (a 502
page naming it), then up: a 500 passed through, a slow answer not holding others back, a page that is
not UTF-8 rewritten with its other bytes intact, a page too deep to parse passed through unchanged (and
said so), a gzip page rewritten, a redirect's Location made the
proxy's, cookies both ways, a range request, a POST, a pending image made and a failing one sent to its
URL, a 50 MB page streamed with imgbake's peak memory at most 150 MiB, 200 concurrent connections, a
client that disconnects mid-response; then SIGINT: imgbake ends, leaving no temporary file in the cache.
"""
import argparse, concurrent.futures, http.client, json, os, re, signal, socket, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path, headers=None, method="GET", body=None, timeout=60):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def peak_rss_mib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--imgbake", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--connect-to", required=True)
    args = parser.parse_args()
    upstream_port, proxy = free_port(), free_port()
    failures, report = [], {}

    def check(condition, what):
        if not condition:
            failures.append(what)

    log = open(os.path.join(args.cache + ".log"), "w+")
    serve = subprocess.Popen([args.imgbake, "serve", "--upstream", "http://127.0.0.1:%d" % upstream_port, "--port", str(proxy),
                              "--cache-dir", args.cache, "--connect-to", args.connect_to], stdout=log, stderr=subprocess.STDOUT)
    upstream = None
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                status, headers, body = get(proxy, "/")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        # Down: a page that names the upstream and says what to do, asking again by itself.
        check(status == 502 and b"127.0.0.1:%d" % upstream_port in body and b"http-equiv=\"refresh\"" in body,
              "upstream down: expected a 502 page naming it, got %d %r" % (status, body[:200]))

        upstream = subprocess.Popen([sys.executable, os.path.join(HERE, "upstream.py"), "--port", str(upstream_port),
                                     "--origin", "http://images.test"])
        deadline = time.monotonic() + 20
        while get(proxy, "/page")[0] == 502 and time.monotonic() < deadline:
            time.sleep(0.1)

        status, headers, body = get(proxy, "/error")
        check(status == 500 and b"http://images.test/img/hubble.jpg" in body, "a 500 passes through as it is: %d %r" % (status, body[:120]))

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            started = time.monotonic()
            slow = pool.submit(get, proxy, "/slow?s=3")
            quick = get(proxy, "/page?n=2")
            report["quick_beside_slow_s"] = round(time.monotonic() - started, 3)
            check(quick[0] == 200 and report["quick_beside_slow_s"] < 1.5, "a slow answer holds others back: %.2f s" % report["quick_beside_slow_s"])
            check(slow.result()[0] == 200, "the slow answer did not arrive")

        status, headers, body = get(proxy, "/latin1")
        check(status == 200 and b"Caf\xe9 cr\xe8me" in body and b'alt="caf\xe9"' in body and b"/_img/" in body and b"images.test" not in body,
              "a page that is not UTF-8: %d %r" % (status, body[:300]))

        status, headers, body = get(proxy, "/deep")
        check(status == 200 and body.count(b"<div>") == 20000 and b"http://images.test/img/hubble.jpg" in body,
              "a page too deep to parse is passed through unchanged: %d, %d bytes" % (status, len(body)))

        status, headers, body = get(proxy, "/gzip", {"Accept-Encoding": "gzip"})
        check(status == 200 and b"/_img/" in body and b"images.test" not in body and "content-encoding" not in headers,
              "a gzip page: %d %s %r" % (status, headers, body[:200]))

        status, headers, _ = get(proxy, "/redirect")
        check(status == 302 and headers.get("location") == "/page", "a redirect to the upstream's own address: %d %s" % (status, headers.get("location")))

        status, headers, body = get(proxy, "/cookie", {"Cookie": "theme=dark"})
        check("session=abc" in headers.get("set-cookie", "") and body == b"cookie: theme=dark", "cookies: %s %r" % (headers, body))

        status, headers, body = get(proxy, "/asset.bin", {"Range": "bytes=100-199"})
        check(status == 206 and len(body) == 100 and body == bytes(range(100, 200)), "a range request: %d, %d bytes" % (status, len(body)))

        status, _, body = get(proxy, "/post", method="POST", body=b"a=1&b=2", headers={"Content-Type": "application/x-www-form-urlencoded"})
        check(status == 200 and body == b"posted: a=1&b=2", "a POST: %d %r" % (status, body))

        # An image no page named before: its page names it by a pending URL (it is being made).
        status, _, body = get(proxy, "/page?n=7")
        pending = re.findall(rb'src="(/_img/pending/[0-9a-f]+)"', body)
        check(len(pending) >= 1, "a page with an image not made yet names it by a pending URL: %r" % body)
        if pending:
            status, headers, image = get(proxy, pending[0].decode())
            check(status == 200 and headers.get("content-type") == "image/jpeg" and image[:3] == b"\xff\xd8\xff",
                  "a pending image is made when asked for: %d %s" % (status, headers))
            time.sleep(1)
            for image in pending[1:]:
                get(proxy, image.decode())
            status, _, body = get(proxy, "/page?n=7")
            check(b"/_img/pending/" not in body and re.search(rb'srcset="/_img/hubble-[0-9a-f]+-\d+\.(avif|webp)', body),
                  "once made, the page names its files: %r" % body[:400])
            names = re.findall(rb'(/_img/[^" ,]+)', body)
            answers = [get(proxy, name.decode()) for name in set(names)]
            check(names and all(a[0] == 200 and "immutable" in a[1].get("cache-control", "") for a in answers),
                  "the files a page names are served, immutable: %s" % [(a[0], a[1].get("cache-control")) for a in answers])

        status, _, body = get(proxy, "/broken")
        broken = re.findall(rb'src="(/_img/pending/[0-9a-f]+)"', body)
        if broken:
            status, headers, _ = get(proxy, broken[0].decode())
            check(status == 302 and headers.get("location") == "http://images.test/img/missing.jpg",
                  "an image that fails sends the browser to its URL: %d %s" % (status, headers))
        else:
            failures.append("the broken page named no pending image: %r" % body)

        # A 50 MB page: streamed (larger than build.max_page_size), imgbake's peak memory bounded.
        started = time.monotonic()
        status, _, body = get(proxy, "/big?mb=50", timeout=120)
        report["big_page"] = {"bytes": len(body), "seconds": round(time.monotonic() - started, 2), "peak_mib": round(peak_rss_mib(serve.pid), 1)}
        check(status == 200 and len(body) > 50 * 1024 * 1024 and body.endswith(b"</html>"), "the 50 MB page: %d, %d bytes" % (status, len(body)))
        check(report["big_page"]["peak_mib"] <= 150, "peak memory over 150 MiB: %s" % report["big_page"])

        # 200 connections at once, each asking for a page.
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(200) as pool:
            results = list(pool.map(lambda i: get(proxy, "/page?n=3&c=%d" % i, timeout=60)[0], range(200)))
        report["concurrent_200"] = {"ok": results.count(200), "seconds": round(time.monotonic() - started, 2)}
        check(results.count(200) == 200, "200 concurrent connections: %s" % report["concurrent_200"])

        # A client that goes away mid-response, ten times.
        for _ in range(10):
            with socket.create_connection(("127.0.0.1", proxy)) as s:
                s.sendall(b"GET /big?mb=50 HTTP/1.1\r\nHost: x\r\n\r\n")
                s.recv(1 << 20)
        time.sleep(1)
        broken = json.loads(get(upstream_port, "/__stats")[2])["broken"]
        check(broken >= 10, "the dev server's answers to clients that went away were not broken off: %d of 10" % broken)
        status, _, _ = get(proxy, "/page?n=1", timeout=10)
        check(status == 200, "after clients disconnected mid-response the proxy answers: %d" % status)
        report["peak_mib"] = round(peak_rss_mib(serve.pid), 1)
        check(report["peak_mib"] <= 150, "peak memory over 150 MiB after all: %s" % report["peak_mib"])
    except Exception as error:  # noqa: BLE001 - reported as a failure with what was measured so far
        failures.append("stopped: %r" % error)
    finally:
        serve.send_signal(signal.SIGINT)
        try:
            report["exit_status"] = serve.wait(timeout=15)
            check(report["exit_status"] == 0, "imgbake ended with %s after SIGINT" % report["exit_status"])
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()
            failures.append("imgbake did not end within 15 s of SIGINT")
        if upstream:
            # SIGKILL: a test runner may have left SIGTERM blocked in the processes it starts.
            upstream.kill()
            upstream.wait()
        temporaries = [os.path.join(folder, name) for folder, _, names in os.walk(args.cache) for name in names if ".tmp" in name]
        check(not temporaries, "temporary files left in the cache: %s" % temporaries)
        log.seek(0)
        printed = log.read()
        check("deep, more than" in printed, "no warning about the page too deep to parse")
        report["log"] = printed.splitlines()[-30:]
    report["failures"] = failures
    print(json.dumps(report, indent=1))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

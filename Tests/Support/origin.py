#!/usr/bin/env python3
"""A loopback HTTP origin for imgbake's tests and demo: serves a folder of images, counts requests,
answers conditional requests, and injects faults.

    python3 Tests/Support/origin.py --root Examples/images [--root MORE]... [--port 0] [--latency-ms 0] [--cache-control ...]
                                    [--tls-cert CERT --tls-key KEY] [--bind ADDR]...

Prints "PORT <n>" on stdout once it listens (port 0 picks a free one). Binds 127.0.0.1 unless --bind
names addresses (all on the same port; other than loopback only inside a test network namespace, where
those addresses exist nowhere else) and exits by itself after --max-seconds, or when its parent process
ends (--watch-parent).

Routes (GET and HEAD, HTTP/1.1 keep-alive):
  /<any path>/<name>          the file <name> from the first --root that has it (the last path segment;
                              the query is ignored)
  /__stats                    JSON: total requests, per path (with query) counts, 304s, statuses, bytes, peak concurrency,
                              and the headers of the last request for each path
  /__reset                    zero the counters
  /__swap?name=A&to=B         from now on serve file B wherever A is asked for (a changed upstream image)
  /fault/404/<name>, /fault/410/<name>, /fault/500/<name>, /fault/503/<name>, /fault/403/<name>   that status
  /fault/html/<name>          200 text/html page instead of an image
  /fault/htmlimg/<name>       the same HTML page, served as Content-Type: image/jpeg
  /fault/wrongtype/<name>     the file, served as Content-Type: text/plain
  /fault/empty/<name>         200 image/jpeg with an empty body
  /fault/drip/<bps>/<name>    the file at <bps> bytes per second (stops after --max-drip-seconds)
  /fault/hang/<name>          reads the request, then answers nothing (until the client goes, at most
                              --max-drip-seconds)
  /fault/reset/<name>         reads the request, then resets the connection (RST, no response)
  /fault/flaky/<n>/<name>     the first n requests of this exact URL get 503, later ones the file
  /fault/ratelimit/<n>/<name> the first n requests get 429 with Retry-After: 1
  /fault/slow/<ms>/<name>     the file after <ms> milliseconds
  /fault/redirect/<n>/<name>  n 302 hops, then the file
  /fault/redirect-loop/<name> 302 to /fault/redirect-loop/x/<name>, which sends back here: never ends
  /fault/redirect-to/<host:port>/<name>  one 302 to http://<host:port>/img/<name> (e.g. a loopback address)
  /fault/location?to=<url>    one 302 to any URL (file://, ftp://, ...)
  /fault/huge/<name>          200 image/jpeg, chunked (no Content-Length), JPEG-looking bytes until the
                              client stops reading (at most 2 GB); /__stats counts what was sent
  /fault/nolength/<name>      the file, chunked without Content-Length
  /fault/truncate/<name>      Content-Length of the whole file, half the bytes, then the connection closes
"""
import argparse, email.utils, hashlib, json, os, socket, ssl, struct, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, unquote, parse_qs

TYPES = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
         ".webp": "image/webp", ".avif": "image/avif", ".svg": "image/svg+xml"}


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.hits = {}  # per exact URL, never reset (for flaky/ratelimit)
        self.swaps = {}
        self.active = 0
        self.reset()

    def reset(self):
        with self.lock:
            self.total, self.paths, self.status, self.not_modified, self.bytes, self.peak = 0, {}, {}, 0, 0, 0
            self.headers = {}

    def record(self, path, status, nbytes, headers=None):
        with self.lock:
            if headers is not None:
                self.headers[path] = {k.lower(): v for k, v in headers.items()}
            self.total += 1
            self.paths[path] = self.paths.get(path, 0) + 1
            self.status[str(status)] = self.status.get(str(status), 0) + 1
            self.bytes += nbytes
            if status == 304:
                self.not_modified += 1

    def add_bytes(self, nbytes):
        with self.lock:
            self.bytes += nbytes

    def hit(self, url):
        with self.lock:
            self.hits[url] = self.hits.get(url, 0) + 1
            return self.hits[url]

    def snapshot(self):
        with self.lock:
            return {"requests_total": self.total, "paths": dict(sorted(self.paths.items())),
                    "by_status": dict(self.status), "not_modified": self.not_modified,
                    "bytes_sent": self.bytes, "max_concurrent": self.peak, "headers": dict(self.headers)}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "imgbake-test-origin/1"
    roots = ["."]
    latency = 0.0
    cache_control = None
    max_drip = 30.0
    counters = Counters()

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = self.path
        parts = urlsplit(url)
        path = unquote(parts.path)
        if path == "/__stats":
            return self.send_bytes(200, json.dumps(self.counters.snapshot(), indent=1).encode(), "application/json")
        if path == "/__reset":
            self.counters.reset()
            return self.send_bytes(200, b'{"reset": true}\n', "application/json")
        if path == "/__swap":
            q = parse_qs(parts.query)
            with self.counters.lock:
                self.counters.swaps[q["name"][0]] = q["to"][0]
            return self.send_bytes(200, b'{"swapped": true}\n', "application/json")
        with self.counters.lock:
            self.counters.active += 1
            self.counters.peak = max(self.counters.peak, self.counters.active)
        try:
            if self.latency:
                time.sleep(self.latency)
            segments = [s for s in path.split("/") if s]
            if len(segments) >= 2 and segments[0] == "fault":
                return self.fault(segments[1:], url)
            return self.serve(segments[-1] if segments else "", url)
        finally:
            with self.counters.lock:
                self.counters.active -= 1

    # -- responses

    def send_bytes(self, status, body, ctype="text/plain; charset=utf-8", headers=None, count=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        if count is not None:
            self.counters.record(count, status, len(body), self.headers)

    def file_for(self, name):
        with self.counters.lock:
            name = self.counters.swaps.get(name, name)
        if not name or "/" in name or name.startswith("."):
            return None, None
        for root in self.roots:
            full = os.path.join(root, name)
            if os.path.isfile(full):
                return name, full
        return None, None

    def serve(self, name, url, ctype=None, chunked=False, truncate=False):
        name, full = self.file_for(name)
        if full is None:
            return self.send_bytes(404, b"not found\n", count=url)
        with open(full, "rb") as f:
            body = f.read()
        etag = '"%s"' % hashlib.sha1(body).hexdigest()[:16]
        modified = email.utils.formatdate(os.stat(full).st_mtime, usegmt=True)
        validators = {"ETag": etag, "Last-Modified": modified}
        if self.cache_control:
            validators["Cache-Control"] = self.cache_control
        inm, ims = self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")
        if (inm is not None and etag in [t.strip() for t in inm.split(",")]) or (inm is None and ims == modified):
            self.send_response(304)
            for k, v in validators.items():
                self.send_header(k, v)
            self.end_headers()
            return self.counters.record(url, 304, 0, self.headers)
        ctype = ctype or TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")
        if chunked:
            return self.send_chunked(200, [body], ctype, validators, url)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in validators.items():
            self.send_header(k, v)
        if truncate:
            self.send_header("Connection", "close")
        self.end_headers()
        sent = body[: len(body) // 2] if truncate else body
        if self.command != "HEAD":
            self.wfile.write(sent)
        if truncate:
            self.close_connection = True
        self.counters.record(url, 200, len(sent), self.headers)

    def send_chunked(self, status, chunks, ctype, headers, url):
        """Sends `chunks` (any iterable) chunked; stops when the client goes away, counting what was sent."""
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        # Counted when it starts: a client that gives up is seen only at a later write, which may come
        # after a test has read the counters.
        self.counters.record(url, status, 0, self.headers)
        try:
            for chunk in chunks:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.counters.add_bytes(len(chunk))
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def drip(self, name, url, rate):
        """The file at `rate` bytes per second, in 100 ms slices, for at most --max-drip-seconds."""
        name, full = self.file_for(name)
        if full is None:
            return self.send_bytes(404, b"not found\n", count=url)
        with open(full, "rb") as f:
            body = f.read()
        # Counted when it starts (the body may outlive the client's interest).
        self.counters.record(url, 200, 0, self.headers)
        self.send_response(200)
        self.send_header("Content-Type", TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        sent, started, step = 0, time.monotonic(), max(1, rate // 10)
        try:
            while sent < len(body) and time.monotonic() - started < self.max_drip:
                self.wfile.write(body[sent:sent + step])
                self.wfile.flush()
                sent += step
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def hang(self, url):
        """Says nothing; returns when the client closes the connection or after --max-drip-seconds."""
        self.counters.record(url, 0, 0, self.headers)
        self.connection.settimeout(0.2)
        deadline = time.monotonic() + self.max_drip
        while time.monotonic() < deadline:
            try:
                if not self.connection.recv(1024):
                    break
            except socket.timeout:
                continue
            except OSError:
                break
        self.close_connection = True

    def reset(self, url):
        """Resets the connection (SO_LINGER 0 makes close send RST) without a byte of response."""
        self.counters.record(url, 0, 0, self.headers)
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def fault(self, args, url):
        kind, rest = args[0], args[1:]
        if kind in ("404", "410", "500", "503", "403"):
            return self.send_bytes(int(kind), b"fault %s\n" % kind.encode(), count=url)
        if kind in ("html", "htmlimg"):
            return self.send_bytes(200, b"<!doctype html><title>Oops</title><p>Not the image.\n",
                                   "text/html" if kind == "html" else "image/jpeg", count=url)
        if kind == "wrongtype" and rest:
            return self.serve(rest[-1], url, ctype="text/plain")
        if kind == "empty":
            return self.send_bytes(200, b"", "image/jpeg", count=url)
        if kind == "drip" and len(rest) >= 2:
            return self.drip(rest[-1], url, int(rest[0]))
        if kind == "hang":
            return self.hang(url)
        if kind == "reset":
            return self.reset(url)
        if kind == "redirect-loop" and rest:
            target = "/fault/redirect-loop/%s" % rest[-1] if len(rest) > 1 else "/fault/redirect-loop/x/%s" % rest[-1]
            return self.send_bytes(302, b"", headers={"Location": target}, count=url)
        if kind in ("flaky", "ratelimit") and len(rest) >= 2:
            if self.counters.hit(url) <= int(rest[0]):
                status = 503 if kind == "flaky" else 429
                return self.send_bytes(status, b"try again\n", headers={"Retry-After": "1"}, count=url)
            return self.serve(rest[-1], url)
        if kind == "slow" and len(rest) >= 2:
            time.sleep(int(rest[0]) / 1000.0)
            return self.serve(rest[-1], url)
        if kind == "redirect" and len(rest) >= 2:
            n = int(rest[0])
            target = "/fault/redirect/%d/%s" % (n - 1, rest[-1]) if n > 1 else "/img/" + rest[-1]
            return self.send_bytes(302, b"", headers={"Location": target}, count=url)
        if kind == "redirect-to" and len(rest) >= 2:
            return self.send_bytes(302, b"", headers={"Location": "http://%s/img/%s" % (rest[0], rest[-1])}, count=url)
        if kind == "location":
            target = parse_qs(urlsplit(url).query).get("to", [""])[0]
            return self.send_bytes(302, b"", headers={"Location": target}, count=url)
        if kind == "huge":
            chunk = b"\xff\xd8\xff\xe0" + b"\x00" * (1 << 20)
            return self.send_chunked(200, (chunk for _ in range(2048)), "image/jpeg", {}, url)
        if kind == "nolength" and rest:
            return self.serve(rest[-1], url, chunked=True)
        if kind == "truncate" and rest:
            return self.serve(rest[-1], url, truncate=True)
        return self.send_bytes(404, b"unknown fault\n", count=url)


def main(argv=None, forked=False):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True, action="append")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency-ms", type=int, default=0)
    ap.add_argument("--cache-control")
    ap.add_argument("--max-seconds", type=int, default=1800)
    ap.add_argument("--watch-parent", action="store_true", help="exit when the parent process ends")
    ap.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    ap.add_argument("--tls-key", help="the certificate's private key (PEM)")
    ap.add_argument("--bind", action="append", help="address to listen on (repeatable; default 127.0.0.1)")
    ap.add_argument("--max-drip-seconds", type=float, default=30.0, help="bound of /fault/drip and /fault/hang")
    a = ap.parse_args(argv)
    Handler.roots, Handler.latency, Handler.cache_control = a.root, a.latency_ms / 1000.0, a.cache_control
    Handler.max_drip = a.max_drip_seconds
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 128
    servers, port = [], a.port
    for address in a.bind or ["127.0.0.1"]:
        cls = ThreadingHTTPServer
        if ":" in address:
            class V6(ThreadingHTTPServer):
                address_family = socket.AF_INET6
            cls = V6
        server = cls((address, port), Handler)
        port = server.server_address[1]  # the first one's, for all that follow
        if a.tls_cert:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(a.tls_cert, a.tls_key)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        servers.append(server)
    for server in servers[1:]:
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    server = servers[0]
    if forked:
        # The zygote's stdout carries its answers: this process says where it listens, then lets go of it.
        print("PORT %d %d" % (port, os.getpid()), flush=True)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    else:
        print("PORT %d" % port, flush=True)
    parent = os.getppid()

    def watchdog():
        deadline = time.time() + a.max_seconds
        while time.time() < deadline:
            if a.watch_parent and os.getppid() != parent:
                break
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


def zygote():
    """`--zygote`: reads one origin's arguments per line (a JSON list) on stdin and forks an origin for
    each, which answers `PORT <port> <pid>` (or `ERROR <why>`) on stdout. Starting Python and importing
    http.server takes 0.2 s of CPU on the 2-core machines, and a test run starts about 200 origins; a
    fork takes a millisecond. Each origin ends with SIGTERM, or when the zygote ends; the zygote ends
    with its parent (the test process) or when stdin closes."""
    import select, signal
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forked origins are reaped by the kernel
    parent = os.getppid()
    print("ZYGOTE", flush=True)
    while True:
        ready, _, _ = select.select([sys.stdin], [], [], 0.5)
        if os.getppid() != parent:
            os._exit(0)
        if not ready:
            continue
        line = sys.stdin.readline()
        if not line:
            os._exit(0)
        if os.fork() == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.close(0)
            try:
                main(json.loads(line), forked=True)
            except BaseException as error:  # argparse exits with SystemExit
                print("ERROR %r" % (error,), flush=True)
            os._exit(1)


if __name__ == "__main__":
    zygote() if sys.argv[1:] == ["--zygote"] else main()

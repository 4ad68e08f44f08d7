#!/usr/bin/env python3
"""A loopback HTTP proxy in front of a remote-cache store (nginx WebDAV, moto's S3 server) that delays
every request, as a store in another region would, counts requests and bytes each way, and can answer
some requests itself with a throttling status (S3's 503 SlowDown) before passing the rest on.

    python3 Tests/Support/storeproxy.py --upstream http://127.0.0.1:9000 [--port 0] [--delay-ms 25] [--log FILE] [--watch-parent]

Prints one line once it listens:  READY <port>
The Host header is passed on unchanged, so AWS Signature V4 signatures made for the proxy's address
still verify at the store. Control (not delayed, not counted):
    GET /__proxy/stats    {"requests": N, "bytes_up": N, "bytes_down": N, "by_method": {...}, "throttled": N,
                           "expect_continue": N (requests that asked "Expect: 100-continue"; each go-ahead is delayed too),
                           "bodies_before_go_ahead": N (of those, the ones whose whole body had arrived before the
                           go-ahead was sent: the client did not wait for it)}
    GET /__proxy/reset    zeroes the counters
    GET /__proxy/throttle?count=K&status=503[&retry_after=S]   the next K requests get that status
    GET /__proxy/delay?ms=M                                    changes the delay
bytes_up and bytes_down count request and response bodies (what the store stores and sends), not headers.
With --log, one line per request: arrival and end (seconds, monotonic), method, path, status, bytes each way.
"""
import argparse, http.client, json, os, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


class State:
    def __init__(self, delay):
        self.lock = threading.Lock()
        self.delay = delay
        self.throttle = (0, 503, None)
        self.reset()

    def reset(self):
        self.requests = 0
        self.bytes_up = 0
        self.bytes_down = 0
        self.by_method = {}
        self.throttled = 0
        self.expect_continue = 0
        self.bodies_before_go_ahead = 0


def handler(upstream, state, log):
    host, port = upstream.hostname, upstream.port or 80
    local = threading.local()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # TCP_NODELAY, as nginx (`tcp_nodelay on`) and S3 answer: the answer's head and body go out in
        # two writes, and with Nagle's algorithm a body under one segment (64 KB on loopback) waited
        # for the client's delayed ACK of the head, 40 ms, on every kept-alive connection. A client
        # opening a connection per request (urllib) never waited, since a new connection ACKs at once.
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def send(self, status, body=b"", headers=()):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def control(self):
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            with state.lock:
                if url.path == "/__proxy/reset":
                    state.reset()
                elif url.path == "/__proxy/throttle":
                    state.throttle = (int(query.get("count", "1")), int(query.get("status", "503")), query.get("retry_after"))
                elif url.path == "/__proxy/delay":
                    state.delay = float(query.get("ms", "0")) / 1000
                stats = {"requests": state.requests, "bytes_up": state.bytes_up, "bytes_down": state.bytes_down,
                         "by_method": state.by_method, "throttled": state.throttled, "delay_ms": state.delay * 1000,
                         "expect_continue": state.expect_continue, "bodies_before_go_ahead": state.bodies_before_go_ahead}
            self.send(200, json.dumps(stats).encode(), [("Content-Type", "application/json")])

        # The go-ahead of an "Expect: 100-continue" request, until the answer is sent.
        go_ahead = None
        go_ahead_sent = None

        def handle_expect_100(self):
            # From a store that far away the go-ahead comes a delay later, while a body the client sends
            # without waiting for it is read at once: a thread of its own sends it, and the answer waits
            # for that thread, so that the go-ahead goes first.
            if self.path.startswith("/__proxy/"):
                return super().handle_expect_100()
            with state.lock:
                state.expect_continue += 1
                delay = state.delay

            sent = self.go_ahead_sent = threading.Event()

            def go_ahead():
                sent.set()
                try:
                    self.send_response_only(100)
                    self.end_headers()
                except OSError:
                    pass  # the client has gone
            self.go_ahead = threading.Timer(delay, go_ahead)
            self.go_ahead.start()
            return True

        def send_response(self, *args, **kwargs):
            if self.go_ahead:
                self.go_ahead.join()
                self.go_ahead = None
            return super().send_response(*args, **kwargs)

        def relay(self):
            if self.path.startswith("/__proxy/"):
                return self.control()
            arrived = time.monotonic()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if len(body) < length:
                # The client went before sending its body: nothing to pass on (the store would wait for
                # the rest).
                self.close_connection = True
                return
            if self.go_ahead_sent is not None and not self.go_ahead_sent.is_set():
                with state.lock:
                    state.bodies_before_go_ahead += 1
            with state.lock:
                delay = state.delay
                count, status, retry_after = state.throttle
                throttle = count > 0
                if throttle:
                    state.throttle = (count - 1, status, retry_after)
                    state.throttled += 1
                state.requests += 1
                state.by_method[self.command] = state.by_method.get(self.command, 0) + 1
                state.bytes_up += len(body)
            time.sleep(delay)
            if throttle:
                answer = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
                return self.send(status, answer, [("Content-Type", "application/xml")] + ([("Retry-After", retry_after)] if retry_after else []))
            headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP}
            for attempt in range(2):
                connection = getattr(local, "connection", None) or http.client.HTTPConnection(host, port, timeout=120)
                local.connection = connection
                try:
                    connection.request(self.command, self.path, body=body if (body or self.command in ("PUT", "POST")) else None,
                                       headers=headers)
                    response = connection.getresponse()
                    data = response.read()
                    break
                except (http.client.HTTPException, OSError):
                    connection.close()
                    local.connection = None
                    if attempt:
                        return self.send(502, b"upstream failed")
            with state.lock:
                state.bytes_down += len(data)
                if log:
                    log.write(f"{arrived:.4f} {time.monotonic():.4f} {self.command} {self.path} {response.status} {len(body)} {len(data)}\n")
                    log.flush()
            out = [(n, v) for n, v in response.getheaders() if n.lower() not in HOP and n.lower() != "content-length"]
            self.send_response(response.status)
            for name, value in out:
                self.send_header(name, value)
            # A HEAD answer carries the object's length without its bytes.
            self.send_header("Content-Length", response.getheader("Content-Length", str(len(data))) if self.command == "HEAD" else str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_PROPFIND = do_OPTIONS = relay

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay-ms", type=float, default=25)
    ap.add_argument("--log", help="a line per request: times, method, path, status, bytes")
    ap.add_argument("--watch-parent", action="store_true", help="exit when the parent process ends")
    a = ap.parse_args()
    state = State(a.delay_ms / 1000)
    log = open(a.log, "a") if a.log else None
    # A listen backlog like a real server's: Python's default of 5 dropped connections when a client
    # opened 8 at once, and the kernel's retry of the SYN delayed that request by up to a second.
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", a.port), handler(urllib.parse.urlsplit(a.upstream), state, log))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"READY {server.server_address[1]}", flush=True)
    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if a.watch_parent and os.getppid() != parent:
            return


if __name__ == "__main__":
    main()

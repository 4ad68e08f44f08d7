#!/usr/bin/env python3
"""A dev server that misbehaves on request, for `imgbake serve`'s fault tests (serve_faults.py):

  upstream.py --port P --origin http://images.test [--corpus DIR]

  /page?n=N        HTML with N remote images from ORIGIN (cycling over Examples/images' files, or DIR's)
  /sized?kb=K      HTML of about K KB with one remote image (latency measurements); &fresh=1: other bytes each time
  /big?mb=M        an HTML page of M MB, sent in 64 KB chunks without a length (chunked)
  /latin1          an ISO-8859-1 page (bytes that are not UTF-8) with one image
  /gzip            a gzip-encoded page with one image
  /deep            HTML nested 20,000 elements deep (more than imgbake parses), with one image
  /broken          HTML naming an image the origin does not have
  /error           500, with an HTML body naming an image
  /slow?s=S        answers after S seconds
  /redirect        302 to this server's own /page, as an absolute URL
  /cookie          sets a cookie, and echoes the Cookie header it was sent
  /asset.bin       1 MB of bytes, with Range support (206)
  /post            echoes a POST body
  /__stats         how many answers broke off because the other side went away
"""
import argparse, gzip, http.server, os, socketserver, time, urllib.parse

IMAGES = ["hubble.jpg", "coffee.png", "astronaut.jpg", "hubble-wide.jpg", "deep-field.gif", "astronaut-round.png"]
ASSET = bytes(range(256)) * 4096


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="text/html; charset=utf-8", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def page(self, images, filler=0):
        # Past the list, the same images again under URLs of their own.
        tags = "".join('<img src="%s/img/%s%s" alt="image %d">\n' % (self.server.origin, IMAGES[i % len(IMAGES)],
                                                                     "" if i < len(IMAGES) else "?n=%d" % i, i) for i in range(images))
        text = "<p>" + "All work and no play. " * (filler // 23) + "</p>" if filler else ""
        return ("<!doctype html><html><head><title>t</title></head><body>%s%s</body></html>" % (tags, text)).encode()

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/__stats":
            self.send(200, b'{"broken": %d}' % self.server.broken, "application/json")
        elif url.path == "/page":
            self.send(200, self.page(int(query.get("n", "3"))))
        elif url.path == "/sized":
            body = self.page(1, filler=int(query.get("kb", "100")) * 1024)
            if "fresh" in query:  # other bytes every time, as a page being edited
                body = body.replace(b"<title>t</title>", b"<title>%d</title>" % time.monotonic_ns())
            self.send(200, body)
        elif url.path == "/big":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = (b"<p>" + b"x" * 65530 + b"</p>")
            try:
                self.write_chunk(b"<!doctype html><html><body><img src=\"%s/img/hubble.jpg\" alt=\"\">" % self.server.origin.encode())
                for _ in range(int(query.get("mb", "50")) * 16):
                    self.write_chunk(chunk)
                self.write_chunk(b"</body></html>")
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.server.broken += 1
        elif url.path == "/latin1":
            body = ('<!doctype html><html><head><meta charset="iso-8859-1"></head><body><p>Caf\xe9 cr\xe8me</p>'
                    '<img src="%s/img/coffee.png" alt="caf\xe9"></body></html>' % self.server.origin).encode("latin-1")
            self.send(200, body, "text/html; charset=iso-8859-1")
        elif url.path == "/gzip":
            self.send(200, gzip.compress(self.page(1)), headers=[("Content-Encoding", "gzip")])
        elif url.path == "/deep":
            self.send(200, b"<html><body>" + b"<div>" * 20000 + b'<img src="%s/img/hubble.jpg">' % self.server.origin.encode() + b"</body></html>")
        elif url.path == "/broken":
            self.send(200, b'<html><body><img src="%s/img/missing.jpg" alt="gone"></body></html>' % self.server.origin.encode())
        elif url.path == "/error":
            self.send(500, b'<html><body>it broke <img src="%s/img/hubble.jpg"></body></html>' % self.server.origin.encode())
        elif url.path == "/slow":
            time.sleep(float(query.get("s", "3")))
            self.send(200, self.page(1))
        elif url.path == "/redirect":
            self.send(302, b"", headers=[("Location", "http://127.0.0.1:%d/page" % self.server.server_address[1])])
        elif url.path == "/cookie":
            self.send(200, ("cookie: %s" % self.headers.get("Cookie", "")).encode(), "text/plain", [("Set-Cookie", "session=abc; Path=/")])
        elif url.path == "/asset.bin":
            ranged = self.headers.get("Range", "")
            if ranged.startswith("bytes="):
                start, end = ranged[6:].split("-")
                start, end = int(start), int(end) if end else len(ASSET) - 1
                self.send(206, ASSET[start:end + 1], "application/octet-stream",
                          [("Content-Range", "bytes %d-%d/%d" % (start, end, len(ASSET))), ("Accept-Ranges", "bytes")])
            else:
                self.send(200, ASSET, "application/octet-stream", [("Accept-Ranges", "bytes")])
        else:
            self.send(404, b"not found")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send(200, b"posted: " + body, "text/plain")

    def write_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 512

    def handle_error(self, request, client_address):
        pass  # a client that went away (wrk at the end of a run, a test disconnecting on purpose)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--origin", required=True)
    parser.add_argument("--corpus", help="name the images of this folder (served by the origin) instead")
    args = parser.parse_args()
    if args.corpus:
        IMAGES[:] = sorted(name for name in os.listdir(args.corpus) if name.lower().endswith((".jpg", ".jpeg", ".png")))
    server = Server(("127.0.0.1", args.port), Handler)
    server.origin = args.origin
    server.broken = 0
    server.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A generator's dev server as a user meets it: starts COMMAND (with {port} replaced by a free loopback
port), fetches PAGE over HTTP once it is served, checks that every image of the page (<img src>,
srcset, <source srcset>) comes from the server itself, answers 200 with an image's bytes, and that at
least one is one of imgbake's files (/_img/); then appends TEXT to the source FILE, waits until the
page served has MARKER (the rebuild, with its images localised), and checks its images again. Prints,
as JSON, the images found and loaded before and after the edit and how long the rebuild took to show;
exit 1 when a check fails. The server (and its children) is stopped at the end.

    devserver.py --page /docs/ --edit docs/index.md --append TEXT --marker astronaut- -- mkdocs serve -a 127.0.0.1:{port}
"""
import argparse, html.parser, http.client, json, os, signal, socket, subprocess, sys, tempfile, time, urllib.error, urllib.parse, urllib.request

MAGIC = (b"\xff\xd8\xff", b"\x89PNG", b"GIF8", b"RIFF", b"<svg", b"<?xml", b"\xff\x0a", b"\x00\x00\x00\x0cJXL \r\n\x87\n")


def is_image(data):
    """JPEG, PNG, GIF, WebP, SVG, JPEG XL (codestream or container) by their first bytes; AVIF by its
    ISO-BMFF brand (an `ftyp` box whose major brand is avif or avis)."""
    return data.lstrip().startswith(MAGIC) or (data[4:8] == b"ftyp" and data[8:12] in (b"avif", b"avis"))


class Images(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attributes):
        attributes = dict(attributes)
        if tag == "img" and attributes.get("src"):
            self.urls.append(attributes["src"])
        if tag in ("img", "source") and attributes.get("srcset"):
            self.urls += [candidate.strip().split()[0] for candidate in attributes["srcset"].split(",") if candidate.strip()]


def fetch(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read()


# What a fetch can meet while the server writes the file it serves (a page rewritten in place).
TRANSIENT = (urllib.error.URLError, OSError, http.client.HTTPException)


def check(page_url):
    """The page's images: how many, how many loaded from the server, and what went wrong."""
    try:
        status, body = fetch(page_url)
    except TRANSIENT as error:
        return {"images": 0, "loaded": 0, "imgbake": 0, "problems": ["the page: %s" % error]}, ""
    parser = Images()
    parser.feed(body.decode("utf-8", "replace"))
    origin = urllib.parse.urlsplit(page_url).netloc
    problems, loaded, local = [], 0, 0
    for written in sorted(set(parser.urls)):
        url = urllib.parse.urljoin(page_url, written)
        if urllib.parse.urlsplit(url).netloc != origin:
            problems.append("remote: " + written)
            continue
        local += "/_img/" in url
        try:
            image_status, image = fetch(url)
        except TRANSIENT as error:
            problems.append("%s: %s" % (written, error))
            continue
        if image_status == 200 and is_image(image):
            loaded += 1
        else:
            problems.append("%s: HTTP %d, %d bytes not an image" % (written, image_status, len(image)))
    if local == 0:
        problems.append("no image of imgbake's (/_img/) on the page")
    return {"images": len(set(parser.urls)), "loaded": loaded, "imgbake": local, "problems": problems}, body.decode("utf-8", "replace")


def wait_for(page_url, predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            status, body = fetch(page_url, timeout=5)
            if status == 200 and predicate(body.decode("utf-8", "replace")):
                return True
        except TRANSIENT:
            pass
        time.sleep(0.25)
    return False


def main():
    options = argparse.ArgumentParser()
    options.add_argument("--page", required=True, help="the page's path on the server, such as /docs/")
    options.add_argument("--edit", required=True, help="the source file to edit")
    options.add_argument("--append", required=True, help="text appended to it")
    options.add_argument("--marker", required=True, help="what the page served has once rebuilt")
    options.add_argument("--timeout", type=float, default=90)
    options.add_argument("command", nargs=argparse.REMAINDER)
    arguments = options.parse_args()
    command = [part for part in arguments.command if part != "--"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Outside the project: a file written there is a change the dev server rebuilds for.
    log = tempfile.TemporaryFile("w+")
    server = subprocess.Popen([part.replace("{port}", str(port)) for part in command], stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    page_url = "http://127.0.0.1:%d%s" % (port, arguments.page)
    result, ok = {"port": port}, False
    started = time.monotonic()
    try:
        if not wait_for(page_url, lambda body: "_img/" in body, arguments.timeout):
            result["error"] = "the page was not served with imgbake's images within %d s" % arguments.timeout
            return
        # Judged once it settles, as after the edit: the first build may still be writing.
        while True:
            result["before"], body = check(page_url)
            if not result["before"]["problems"] or time.monotonic() > started + arguments.timeout:
                break
            time.sleep(0.5)
        if arguments.marker in body:
            result["error"] = "the marker is on the page before the edit"
            return
        started = time.monotonic()
        with open(arguments.edit, "a") as source:
            source.write(arguments.append)
        if not wait_for(page_url, lambda body: arguments.marker in body, arguments.timeout):
            result["error"] = "the edit did not show within %d s" % arguments.timeout
            return
        result["rebuild_seconds"] = round(time.monotonic() - started, 2)
        # A server that writes pages as they are rebuilt can serve one before imgbake's rewrite (an
        # editor's save is often two writes, so two rebuilds): the page is judged once it settles.
        while True:
            result["after"], body = check(page_url)
            if arguments.marker in body and not result["after"]["problems"] or time.monotonic() > started + arguments.timeout:
                break
            time.sleep(0.5)
        result["settled_seconds"] = round(time.monotonic() - started, 2)
        ok = not result["before"]["problems"] and not result["after"]["problems"] and result["after"]["images"] > result["before"]["images"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        if not ok:
            log.seek(0)
            result["log"] = log.read()[-4000:]
        log.close()
        print(json.dumps(result, indent=1))
        sys.exit(0 if ok else 1)


main()

#!/usr/bin/env python3
"""Can an inotify-style `imgbake build --watch` work with `hugo server --renderToDisk`? Measures, per
edit: when Hugo wrote the page to public/, when Hugo's live reload told the browser to reload, and when
an imgbake build started on Hugo's write (what a watcher would do) had rewritten the page; then fetches
the page as the reloaded browser would, at the moment of the reload message. Not a test: the reason
docs/plugins.md gives for there being no watch mode.

    make build && python3 Benchmarks/hugo-reload.py   # needs hugo (Debian) and websocket-client (PyPI); make deps installs hugo
"""
import json, os, shutil, socket, subprocess, sys, tempfile, threading, time, urllib.request
import websocket

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
imgbake = os.environ.get("IMGBAKE", repo + "/.build/debug/imgbake")
work = tempfile.mkdtemp(dir="/dev/shm", prefix="hugo-watch.")
shutil.copytree(repo + "/Examples/hugo", work + "/hugo")
os.makedirs(work + "/hugo/static/img")
shutil.copy(repo + "/Examples/images/astronaut.jpg", work + "/hugo/static/img/")
origin = subprocess.Popen(["python3", repo + "/Tests/Support/origin.py", "--root", repo + "/Examples/images", "--watch-parent"],
                          stdout=subprocess.PIPE, text=True)
oport = int(origin.stdout.readline().split()[1])
with socket.socket() as s:
    s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
os.chdir(work + "/hugo")
hugo = subprocess.Popen(["hugo", "server", "--renderToDisk", "--bind", "127.0.0.1", "--port", str(port), "--baseURL", "http://127.0.0.1:%d/" % port],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
page = "public/posts/wide/index.html"
url = "http://127.0.0.1:%d/posts/wide/" % port
for _ in range(100):
    if os.path.exists(page): break
    time.sleep(0.1)
time.sleep(1)
build = [imgbake, "build", "public", "--config", "imgbake.toml", "--cache-dir", work + "/cache", "--connect-to", "images.test:80:127.0.0.1:%d" % oport, "--quiet"]
print("first imgbake build:", subprocess.run(build).returncode)
ws = websocket.create_connection("ws://127.0.0.1:%d/livereload" % port)
ws.send(json.dumps({"command": "hello", "protocols": ["http://livereload.com/protocols/official-7"]}))
ws.settimeout(2)
try:
    print("livereload says:", ws.recv())  # its hello
except websocket.WebSocketTimeoutException:
    print("livereload: no hello within 2 s")
ws.settimeout(30)
rows = []
for edit in range(5):
    stamp = os.stat(page).st_mtime_ns
    events = {}
    def watch():
        # What an inotify watcher on public/ sees: Hugo's write; then it builds.
        while os.stat(page).st_mtime_ns == stamp: time.sleep(0.002)
        events["hugo wrote"] = time.monotonic()
        subprocess.run(build)
        events["imgbake rewrote"] = time.monotonic()
    watcher = threading.Thread(target=watch); watcher.start()
    start = time.monotonic()
    with open("content/posts/wide.md", "a") as f:
        f.write("\nEdit %d.\n" % edit)
    while True:
        message = json.loads(ws.recv())
        if message.get("command") == "reload":
            events["reload sent"] = time.monotonic(); break
    served = urllib.request.urlopen(url).read().decode()
    events["browser got"] = time.monotonic()
    watcher.join()
    rows.append({k: round((v - start) * 1000) for k, v in events.items()} | {"page had imgbake's images": "/_img/" in served and "images.test" not in served})
for row in rows: print(row)
hugo.terminate(); origin.terminate(); shutil.rmtree(work)

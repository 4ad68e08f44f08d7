#!/usr/bin/env python3
"""Material for MkDocs' own documentation, built with the imgbake MkDocs plugin, on a machine whose
DNS answers nothing.

Measures, inside a network namespace where every DNS query goes to a nameserver that does not exist
(packets leave through a veth pair into nothing, so each lookup waits for the resolver's timeout
instead of failing at once):

  (a) `mkdocs build` without imgbake: MkDocs' own time;
  (b) with the imgbake plugin, an empty imgbake cache;
  (c) again, nothing changed (the case a writer meets on every rebuild);
  (d) a fresh copy of the docs folder, built into a fresh site folder, with the warm imgbake cache.

For each: wall time, CPU time of the child and its descendants (os.wait4), imgbake's own summary
(requests sent, images failed, its own "done in"), and imgbake's warnings. Also counts the remote
images of the built site (without imgbake) and their hosts, and how long one DNS lookup takes in the
namespace. Prints a Markdown table.

Needs root (ip netns), iproute2, a checkout of squidfunk/mkdocs-material (--src), a virtual
environment with mkdocs-material, what its mkdocs.yml needs, and the imgbake Python package
(--venv), and the imgbake binary (--imgbake). Python 3.8+, standard library only. To prepare ROOT:

    git clone https://github.com/squidfunk/mkdocs-material ROOT/src
    python3 -m venv ROOT/venv
    ROOT/venv/bin/pip install mkdocs-material mkdocs-minify-plugin ./integrations/python

    sudo python3 offline-docs.py                    # set up the namespace if absent, run (a)-(d)
    sudo python3 offline-docs.py --phases a,c       # only some builds (c needs a cache: run b first)
    sudo python3 offline-docs.py --teardown         # remove the namespace and its resolv.conf
"""
import argparse
import html.parser
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time
import urllib.parse

DEFAULT_ROOT = "/tmp/imgbake-offline-docs"
REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PHASES = {
    "a": "MkDocs alone (no imgbake)",
    "b": "imgbake, empty cache",
    "c": "imgbake, second build, nothing changed",
    "d": "imgbake, fresh docs copy, warm cache",
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", default=DEFAULT_ROOT,
                   help="folder the other defaults are under (default: %(default)s)")
    p.add_argument("--src", help="checkout of squidfunk/mkdocs-material (default: ROOT/src)")
    p.add_argument("--venv", help="virtual environment with mkdocs-material and imgbake's plugin (default: ROOT/venv)")
    p.add_argument("--imgbake", default=os.environ.get("IMGBAKE", os.path.join(REPOSITORY, ".build/release/imgbake")),
                   help="the imgbake binary (default: $IMGBAKE, else %(default)s)")
    p.add_argument("--work", help="where sites, config copies, logs and the docs copy go (default: ROOT/run)")
    p.add_argument("--cache-dir", help="imgbake's cache folder, emptied before (b) (default: ROOT/cache)")
    p.add_argument("--config", default="mkdocs.yml", help="the project's config, relative to --src (default: %(default)s)")
    p.add_argument("--disable-plugin", action="append", default=[], metavar="NAME",
                   help="drop this plugin from the copies of the config (repeatable), e.g. one that cannot be installed")
    p.add_argument("--imgbake-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for `imgbake build`, through the plugin's `args:` (repeatable)")
    p.add_argument("--phases", default="a,b,c,d", help="which builds, of a,b,c,d (default: %(default)s)")
    p.add_argument("--netns", default="nodns", help="network namespace name (default: %(default)s)")
    p.add_argument("--subnet", default="10.99.0", help="the namespace's /24, as three octets (default: %(default)s)")
    p.add_argument("--no-netns", action="store_true", help="run on the host's network (for comparison)")
    p.add_argument("--keep-netns", action="store_true", help="leave the namespace in place afterwards (default: it is kept "
                   "if it existed before, removed if this run made it)")
    p.add_argument("--teardown", action="store_true", help="remove the namespace and its resolv.conf, and exit")
    p.add_argument("--skip-dns-probe", action="store_true", help="do not time a DNS lookup in the namespace")
    p.add_argument("--timeout", type=float, default=3600, help="seconds one build may take (default: %(default)s)")
    p.add_argument("--json", help="also write the results here as JSON (default: WORK/results.json)")
    a = p.parse_args(argv)
    a.src = a.src or os.path.join(a.root, "src")
    a.venv = a.venv or os.path.join(a.root, "venv")
    a.work = a.work or os.path.join(a.root, "run")
    a.cache_dir = a.cache_dir or os.path.join(a.root, "cache")
    a.json = a.json or os.path.join(a.work, "results.json")
    a.phases = [x.strip() for x in a.phases.split(",") if x.strip()]
    bad = [x for x in a.phases if x not in PHASES]
    if bad:
        p.error("unknown phase(s): %s" % ", ".join(bad))
    return a


# --- the namespace -------------------------------------------------------------------------------

def run(cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, **kw)


def netns_exists(name):
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return any(line.split()[0] == name for line in out.splitlines() if line.strip())


def netns_setup(name, subnet):
    """A namespace with loopback, and a veth pair whose far end has no address: the default route and
    the nameserver are on-link with permanent neighbour entries (no ARP failure to report), so
    packets leave and nothing ever answers. (A dummy interface would do the same where the kernel has
    the dummy driver; veth is more often there, in containers too.)"""
    nameserver, gateway, own = subnet + ".53", subnet + ".254", subnet + ".1"
    run(["ip", "netns", "add", name])
    ip = ["ip", "-n", name]
    run(ip + ["link", "set", "lo", "up"])
    run(ip + ["link", "add", "nd0", "type", "veth", "peer", "name", "nd1"])
    run(ip + ["addr", "add", own + "/24", "dev", "nd0"])
    run(ip + ["link", "set", "nd1", "up"])
    run(ip + ["link", "set", "nd0", "up"])
    run(ip + ["route", "add", "default", "via", gateway, "dev", "nd0"])
    for address, mac in ((nameserver, "02:00:00:00:00:53"), (gateway, "02:00:00:00:00:fe")):
        run(ip + ["neigh", "replace", address, "lladdr", mac, "dev", "nd0", "nud", "permanent"])
    folder = os.path.join("/etc/netns", name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "resolv.conf"), "w") as f:  # `ip netns exec` bind-mounts it on /etc/resolv.conf
        f.write("# offline-docs.py: a nameserver that does not exist\nnameserver %s\n" % nameserver)


def netns_teardown(name):
    if netns_exists(name):
        run(["ip", "netns", "del", name])
    folder = os.path.join("/etc/netns", name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)


def dns_probe(name):
    """Seconds `getent` takes to fail in the namespace: `ahosts` is getaddrinfo(AF_UNSPEC), what
    libcurl's resolver calls; `hosts` is gethostbyname2 for IPv6 then IPv4."""
    result = {}
    for database in ("ahosts", "hosts"):
        start = time.monotonic()
        done = subprocess.run(["ip", "netns", "exec", name, "getent", database, "example.com"], capture_output=True, text=True)
        result[database] = {"seconds": round(time.monotonic() - start, 2), "exit": done.returncode, "output": done.stdout.strip()}
    return result


# --- the configs ---------------------------------------------------------------------------------

def plugin_blocks(lines):
    """(start, end) of the top-level `plugins:` list, and each item's (name, start, end)."""
    start = next((i for i, l in enumerate(lines) if re.match(r"^plugins:\s*(#.*)?$", l)), None)
    if start is None:
        raise SystemExit("no top-level `plugins:` list in the config")
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith((" ", "\t", "-"))):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    items, current = [], None
    indent = None
    for i in range(start + 1, end):
        m = re.match(r"^(\s*)- +([^:\s#]+)", lines[i])
        if m and (indent is None or len(m.group(1)) == indent):
            indent = len(m.group(1))
            if current:
                items.append((current[0], current[1], i))
            current = (m.group(2), i)
    if current:
        items.append((current[0], current[1], end))
    return start, end, items, indent or 2


def make_config(text, disable, imgbake=None):
    """The project's config text with plugins in `disable` removed and, if `imgbake` (a dict of the
    plugin's options) is given, `- imgbake:` added after search (else at the end of the list)."""
    lines = text.splitlines()
    start, end, items, indent = plugin_blocks(lines)
    names = [n.split("/")[-1] for n, _, _ in items]
    for name in disable:
        if name not in names and name not in [n for n, _, _ in items]:
            raise SystemExit("plugin %r is not in the config's plugins: %s" % (name, ", ".join(n for n, _, _ in items)))
    keep = [(n, s, e) for n, s, e in items if n not in disable and n.split("/")[-1] not in disable]
    block = []
    inserted = False
    pad = " " * indent
    entry = []
    if imgbake is not None:
        entry = [pad + "- imgbake:"] + ["%s    %s: %s" % (pad, k, json.dumps(v)) for k, v in imgbake.items()]
    for n, s, e in keep:
        block += lines[s:e]
        if imgbake is not None and not inserted and n.split("/")[-1] == "search":
            block += entry
            inserted = True
    if imgbake is not None and not inserted:
        block += entry
    return "\n".join(lines[:start + 1] + block + lines[end:]) + "\n"


# --- running and reading ---------------------------------------------------------------------------

def timed(cmd, cwd, env, log_path, timeout):
    """Runs `cmd`, output to `log_path`; wall seconds, CPU seconds (user+system of the child and all it
    waited for), exit status."""
    with open(log_path, "w") as log:
        start = time.monotonic()
        # A session of its own, so a timeout or ^C ends mkdocs and the imgbake it runs, not only mkdocs.
        child = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = start + timeout
        try:
            while True:
                pid, status, usage = os.wait4(child.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:
                    os.killpg(child.pid, 9)
                    pid, status, usage = os.wait4(child.pid, 0)
                    break
                time.sleep(0.05)
        except BaseException:
            os.killpg(child.pid, 9)
            os.wait4(child.pid, 0)
            raise
        wall = time.monotonic() - start
        child.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "user": usage.ru_utime, "sys": usage.ru_stime,
            "maxrss_mib": usage.ru_maxrss / 1024, "exit": child.returncode, "timed_out": wall > timeout}


SUMMARY = {
    "pages_scanned": r"(\d+) pages scanned, (\d+) rewritten",
    "references": r"(\d+) of (\d+) image references localised",
    "images": r"(\d+) images: (\d+) from cache, (\d+) downloaded, (\d+) revalidated.*?, (\d+) failed",
    "requests": r"variants encoded, \d+ image files written; (\d+) requests(?: \((\d+) not modified\))?, (.+?) downloaded",
    "variants": r"(\d+) variants encoded, (\d+) image files written",
    "done_in": r"imgbake\]? ?done in ([\d.]+) s|\bdone in ([\d.]+) s",
    "mkdocs_built_in": r"Documentation built in ([\d.]+) seconds",
}


def read_log(path):
    text = open(path, errors="replace").read()
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    found = {}
    for key, pattern in SUMMARY.items():
        m = None
        for m in re.finditer(pattern, text):
            pass  # the last one
        if m:
            found[key] = [g for g in m.groups() if g is not None]
    imgbake_lines = [l for l in text.splitlines() if "imgbake" in l]
    warnings = [l for l in imgbake_lines if l.startswith("WARNING")]
    out = {
        "mkdocs_built_in": float(found["mkdocs_built_in"][0]) if "mkdocs_built_in" in found else None,
        "imgbake_done_in": float(found["done_in"][0]) if "done_in" in found else None,
        "requests": int(found["requests"][0]) if "requests" in found else None,
        "not_modified": int(found["requests"][1]) if "requests" in found and len(found["requests"]) == 3 else 0,
        "downloaded": found["requests"][-1] if "requests" in found else None,
        "pages_scanned": int(found["pages_scanned"][0]) if "pages_scanned" in found else None,
        "pages_rewritten": int(found["pages_scanned"][1]) if "pages_scanned" in found else None,
        "references_localised": int(found["references"][0]) if "references" in found else None,
        "references": int(found["references"][1]) if "references" in found else None,
        "images": int(found["images"][0]) if "images" in found else None,
        "images_cached": int(found["images"][1]) if "images" in found else None,
        "images_downloaded": int(found["images"][2]) if "images" in found else None,
        "images_failed": int(found["images"][4]) if "images" in found else None,
        "variants_encoded": int(found["variants"][0]) if "variants" in found else None,
        "imgbake_warnings": len(warnings),
        "imgbake_summary": [l for l in imgbake_lines if not l.startswith("WARNING")][-6:],
        "first_warnings": warnings[:3],
    }
    return out


class ImageRefs(html.parser.HTMLParser):
    """Image URLs of a page: <img src/srcset>, <source srcset>, <image href>, <video poster>,
    <meta property=og:image|twitter:image content>, <link rel=icon href>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self._add(a.get("src"))
            self._srcset(a.get("srcset"))
        elif tag == "source":
            self._srcset(a.get("srcset"))
        elif tag == "image":
            self._add(a.get("href") or a.get("xlink:href"))
        elif tag == "video":
            self._add(a.get("poster"))
        elif tag == "meta" and (a.get("property") or a.get("name") or "") in ("og:image", "twitter:image"):
            self._add(a.get("content"))
        elif tag == "link" and "icon" in (a.get("rel") or "").split():
            self._add(a.get("href"))

    def _srcset(self, value):
        for part in (value or "").split(","):
            if part.strip():
                self._add(part.strip().split()[0])

    def _add(self, url):
        if url:
            self.urls.append(url.strip())


def remote_images(site):
    """Pages, remote image references, distinct remote images and hosts in a built site."""
    pages, refs, urls = 0, 0, set()
    for folder, _, files in os.walk(site):
        for name in files:
            if not name.endswith(".html"):
                continue
            pages += 1
            parser = ImageRefs()
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                parser.feed(f.read())
            for url in parser.urls:
                if url.startswith(("http://", "https://", "//")):
                    refs += 1
                    urls.add(url)
    hosts = {}
    for url in urls:
        host = urllib.parse.urlsplit(url if not url.startswith("//") else "https:" + url).hostname
        hosts[host] = hosts.get(host, 0) + 1
    return {"html_files": pages, "remote_refs": refs, "remote_images": len(urls),
            "hosts": dict(sorted(hosts.items(), key=lambda kv: -kv[1]))}


def versions(venv, imgbake, src):
    py = os.path.join(venv, "bin", "python")
    code = ("import importlib.metadata as m\n"
            "for d in ('mkdocs','mkdocs-material','pymdown-extensions','mkdocs-minify-plugin','imgbake'):\n"
            "    try: print(d, m.version(d))\n"
            "    except Exception: print(d, '-')\n")
    out = {}
    try:
        for line in subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines():
            k, v = line.split(" ", 1)
            out[k] = v
    except (OSError, subprocess.CalledProcessError):
        pass
    try:
        out["imgbake-binary"] = (subprocess.run([imgbake, "--version"], capture_output=True, text=True).stdout.strip().splitlines() or ["-"])[0]
        out["imgbake-binary-mtime"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.stat(imgbake).st_mtime))
    except OSError:
        out["imgbake-binary"] = "-"
    package = os.path.join(src, "package.json")
    if os.path.exists(package):
        out["docs-tree (package.json)"] = json.load(open(package)).get("version", "-")
    out["python"] = platform.python_version()
    out["kernel"] = platform.release()
    return out


# --- main ----------------------------------------------------------------------------------------

def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.teardown:
        netns_teardown(a.netns)
        print("namespace %s removed" % a.netns)
        return 0
    if not os.path.isfile(os.path.join(a.src, a.config)):
        raise SystemExit("no %s in %s (--src)" % (a.config, a.src))
    mkdocs = os.path.join(a.venv, "bin", "mkdocs")
    if not os.access(mkdocs, os.X_OK):
        raise SystemExit("no mkdocs in %s (--venv)" % a.venv)
    if not os.access(a.imgbake, os.X_OK):
        raise SystemExit("imgbake binary %s is not executable (--imgbake)" % a.imgbake)
    os.makedirs(a.work, exist_ok=True)

    made_netns = False
    prefix = []
    if not a.no_netns:
        if os.geteuid() != 0:
            raise SystemExit("network namespaces need root (or --no-netns)")
        if not netns_exists(a.netns):
            netns_setup(a.netns, a.subnet)
            made_netns = True
        prefix = ["ip", "netns", "exec", a.netns]
    results = {"args": {k: v for k, v in vars(a).items()}, "versions": versions(a.venv, a.imgbake, a.src), "phases": {}}
    try:
        if not a.no_netns and not a.skip_dns_probe:
            results["dns"] = dns_probe(a.netns)
            print("DNS in %s: getent ahosts fails after %.1f s (exit %d), getent hosts after %.1f s (exit %d)" % (
                a.netns, results["dns"]["ahosts"]["seconds"], results["dns"]["ahosts"]["exit"],
                results["dns"]["hosts"]["seconds"], results["dns"]["hosts"]["exit"]), flush=True)

        text = open(os.path.join(a.src, a.config)).read()
        # The copies sit beside the project's config: hooks, custom_dir and docs_dir are relative to it.
        cfg_dir = os.path.dirname(os.path.abspath(os.path.join(a.src, a.config)))
        options = {"cache_dir": os.path.abspath(a.cache_dir)}
        if a.imgbake_arg:
            options["args"] = a.imgbake_arg
        plain = os.path.join(cfg_dir, "mkdocs.offline-docs-plain.yml")
        baked = os.path.join(cfg_dir, "mkdocs.offline-docs-imgbake.yml")
        open(plain, "w").write(make_config(text, a.disable_plugin))
        open(baked, "w").write(make_config(text, a.disable_plugin, options))
        docs_copy = os.path.join(a.work, "docs-copy")
        copy_cfg = os.path.join(cfg_dir, "mkdocs.offline-docs-copy.yml")
        docs_dir = re.search(r"^docs_dir:\s*(\S+)", text, re.M)
        docs_src = os.path.join(cfg_dir, docs_dir.group(1) if docs_dir else "docs")
        open(copy_cfg, "w").write(re.sub(r"^docs_dir:.*\n", "", make_config(text, a.disable_plugin, options), flags=re.M)
                                  + "docs_dir: %s\n" % json.dumps(docs_copy))

        env = dict(os.environ, IMGBAKE=os.path.abspath(a.imgbake), NO_MKDOCS_2_WARNING="1", PYTHONUNBUFFERED="1")
        env.pop("GOOGLE_ANALYTICS_KEY", None)
        sites = {"a": os.path.join(a.work, "site-plain"), "b": os.path.join(a.work, "site-imgbake"),
                 "c": os.path.join(a.work, "site-imgbake"), "d": os.path.join(a.work, "site-copy")}
        configs = {"a": plain, "b": baked, "c": baked, "d": copy_cfg}
        for phase in a.phases:
            if phase == "b" and os.path.isdir(a.cache_dir):
                shutil.rmtree(a.cache_dir)
            if phase == "b" and os.path.isdir(sites["b"]):
                shutil.rmtree(sites["b"])
            if phase == "d":
                for folder in (docs_copy, sites["d"]):
                    if os.path.isdir(folder):
                        shutil.rmtree(folder)
                shutil.copytree(docs_src, docs_copy)
            cmd = prefix + [mkdocs, "build", "-f", configs[phase], "-d", sites[phase]]
            log = os.path.join(a.work, "build-%s.log" % phase)
            print("(%s) %s: %s" % (phase, PHASES[phase], " ".join(cmd)), flush=True)
            r = timed(cmd, cwd=cfg_dir, env=env, log_path=log, timeout=a.timeout)
            r.update(read_log(log))
            r["command"] = cmd
            r["log"] = log
            if phase == "a":
                r["site"] = remote_images(sites["a"])
            elif os.path.isdir(sites[phase]):
                r["site_after"] = remote_images(sites[phase])
            results["phases"][phase] = r
            print("    wall %.1f s, cpu %.1f s, exit %d, imgbake requests %s, imgbake done in %s s" % (
                r["wall"], r["cpu"], r["exit"], r["requests"], r["imgbake_done_in"]), flush=True)
            with open(a.json, "w") as f:
                json.dump(results, f, indent=2, default=str)
    finally:
        if made_netns and not a.keep_netns:
            netns_teardown(a.netns)

    print()
    print(report(results))
    with open(a.json, "w") as f:
        json.dump(results, f, indent=2, default=str)
    return 0 if all(p["exit"] == 0 for p in results["phases"].values()) else 1


def report(results):
    phases = results["phases"]
    base = phases.get("a", {}).get("wall")
    rows = ["| build | wall s | beyond MkDocs' own (a) s | CPU s | imgbake's own s | imgbake requests | images (failed) | imgbake warnings | exit |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for key, r in phases.items():
        extra = "%.1f" % (r["wall"] - base) if base is not None and key != "a" else "–"
        imgs = "%s (%s)" % (r["images"], r["images_failed"]) if r["images"] is not None else "–"
        rows.append("| (%s) %s | %.1f | %s | %.1f | %s | %s | %s | %s | %d |" % (
            key, PHASES[key], r["wall"], extra, r["cpu"],
            "%.2f" % r["imgbake_done_in"] if r["imgbake_done_in"] is not None else "–",
            r["requests"] if r["requests"] is not None else "–", imgs,
            r["imgbake_warnings"] if key != "a" else "–", r["exit"]))
    lines = rows
    site = phases.get("a", {}).get("site")
    if site:
        lines += ["", "Site without imgbake: %d HTML files; %d remote image references, %d distinct remote images on %d hosts (%s)." % (
            site["html_files"], site["remote_refs"], site["remote_images"], len(site["hosts"]),
            ", ".join("%s: %d" % kv for kv in site["hosts"].items()))]
    for key in ("b", "c", "d"):
        after = phases.get(key, {}).get("site_after")
        if after:
            lines.append("After (%s): %d remote image references left, %d distinct." % (key, after["remote_refs"], after["remote_images"]))
    dns = results.get("dns")
    if dns:
        lines.append("DNS in the namespace: `getent ahosts` fails after %.1f s, `getent hosts` after %.1f s." % (
            dns["ahosts"]["seconds"], dns["hosts"]["seconds"]))
    lines.append("Versions: " + ", ".join("%s %s" % kv for kv in results["versions"].items()))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""remote.py - what the remote cache costs, per image and in wall time, with the store in "another region":
every request to it goes through Tests/Support/storeproxy.py, which delays it (25 ms by default) and counts
requests and bytes each way. Both stores the tests use: nginx WebDAV and moto's S3 server (signatures checked).

    python3 Benchmarks/remote.py [--pages 200] [--unique 100] [--delay-ms 25] [--stores dav,s3]
        env: IMGBAKE=.build/release/imgbake  BENCH=../shared/bench  RESULTS=/tmp/remote-bench

Runs, one each, on the shared benchmark's site (bench/mksite.py over /tmp/imgcorpus, widths 400/800/1600):
  none      a cold build without a remote (empty local cache)
  write     a cold build writing back to an empty store (empty local cache)            goal: <= 1.05 x none
  read      a second machine: empty local cache, the store as `write` left it           goal: <= 1.1 x (warm + transfer)
  warm      the same machine again, output wiped: the warm local build (no request)
  transfer  the objects `read` downloaded, fetched through the same proxy, 8 at a time (what the network costs)
and checks that every build's output is byte for byte the no-remote build's. Prints a Markdown table and
writes RESULTS/remote.json. Needs nginx with libnginx-mod-http-dav-ext, moto (pip install 'moto[server]').
"""
import argparse, concurrent.futures, json, os, resource, shutil, socket, subprocess, sys, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, seconds=30):
    end = time.time() + seconds
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not answer")


def ready_line(process):
    line = process.stdout.readline().decode().split()
    if not line or line[0] != "READY":
        raise SystemExit(f"did not start: {line}")
    return line[1:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--unique", type=int, default=100)
    ap.add_argument("--delay-ms", type=float, default=25)
    ap.add_argument("--stores", default="dav,s3")
    a = ap.parse_args()
    imgbake = os.environ.get("IMGBAKE", ROOT + "/.build/release/imgbake")
    bench = os.environ.get("BENCH", ROOT + "/../shared/bench")
    if not os.path.isdir(bench):
        bench = "/work/shared/bench"
    r = os.environ.get("RESULTS", "/tmp/remote-bench")
    if not os.access(imgbake, os.X_OK):
        raise SystemExit("build the release binary first: make release")
    if not os.path.exists("/tmp/imgcorpus/manifest.tsv"):
        subprocess.run(["bash", bench + "/corpus/make_corpus.sh"], check=True)
    shutil.rmtree(r, ignore_errors=True)
    os.makedirs(r)
    children = []

    def start(cmd, **kw):
        p = subprocess.Popen(cmd, **kw)
        children.append(p)
        return p

    try:
        oport = free_port()
        start(["python3", bench + "/origin.py", "--root", "/tmp/imgcorpus", "--port", str(oport), "--max-seconds", "7200"],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        origin = f"http://127.0.0.1:{oport}"
        wait_http(origin + "/__stats")

        # nginx: WebDAV with PUT and DELETE, PROPFIND from the dav-ext module.
        dport = free_port()
        os.makedirs(r + "/dav/root/cache")
        module = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"
        conf = f"""{'load_module ' + module + ';' if os.path.exists(module) else ''}
daemon off; {'user root;' if os.geteuid() == 0 else ''} worker_processes 1; pid {r}/dav/nginx.pid; error_log {r}/dav/error.log warn;
events {{ worker_connections 256; }}
http {{ access_log off; client_body_temp_path {r}/dav/body; client_max_body_size 200m;
  server {{ listen 127.0.0.1:{dport}; root {r}/dav/root;
    location /cache/ {{ dav_methods PUT DELETE; {'dav_ext_methods PROPFIND OPTIONS;' if os.path.exists(module) else ''}
      create_full_put_path on; dav_access user:rw group:r all:r; }} }} }}
"""
        open(r + "/dav/nginx.conf", "w").write(conf)
        nginx = "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else "nginx"
        start([nginx, "-c", r + "/dav/nginx.conf", "-p", r + "/dav/", "-e", r + "/dav/error.log"],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_http(f"http://127.0.0.1:{dport}/")

        s3 = start(["python3", ROOT + "/Tests/Support/s3server.py", "--watch-parent"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        s3port, key, secret = ready_line(s3)
        env = dict(os.environ, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret)

        proxies = {}
        for store, upstream in (("dav", f"http://127.0.0.1:{dport}"), ("s3", f"http://127.0.0.1:{s3port}")):
            p = start(["python3", ROOT + "/Tests/Support/storeproxy.py", "--upstream", upstream, "--delay-ms", str(a.delay_ms),
                       "--watch-parent"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            proxies[store] = f"http://127.0.0.1:{ready_line(p)[0]}"

        subprocess.run(["python3", bench + "/mksite.py", "--pages", str(a.pages), "--unique", str(a.unique), "--seed", "1",
                        "--origin", origin, "--out", r + "/site"], check=True, stdout=subprocess.DEVNULL)
        base = "[images]\nwidths = [400, 800, 1600]\n[fetch]\nallow_private_networks = true\n"
        stamp = int(time.time())
        configs = {
            "none": base,
            "dav": base + f'[cache]\nremote = "{proxies["dav"]}/cache"\n',
            "s3": base + f'[cache]\nremote = "s3://cache/bench-{stamp}"\nremote_endpoint = "{proxies["s3"]}"\n'
                         'remote_path_style = true\nremote_region = "us-east-1"\n',
        }
        for name, text in configs.items():
            open(f"{r}/{name}.toml", "w").write(text)

        def proxy(store, what):
            return json.load(urllib.request.urlopen(f"{proxies[store]}/__proxy/{what}", timeout=30))

        def build(label, config, cache, out):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            p = subprocess.run([imgbake, "build", r + "/site", "--out", f"{r}/{out}", "--cache-dir", f"{r}/{cache}",
                                "--config", f"{r}/{config}.toml", "--quiet", "--report", f"{r}/{label}.json"]
                               + (["--no-remote"] if config == "none" else []), env=env, capture_output=True, text=True)
            wall = time.monotonic() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0 or p.stderr.strip():
                print(f"{label}: exit {p.returncode}\n{p.stderr}", file=sys.stderr)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            report = json.load(open(f"{r}/{label}.json"))
            return {"label": label, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "exit": p.returncode,
                    "warnings": p.stderr.strip().count("\n") + (1 if p.stderr.strip() else 0),
                    "images": report["totals"]["images"], "encoded": report["totals"]["variantsEncoded"],
                    "remote": report.get("remote")}

        def same(a_, b_):
            return subprocess.run(["diff", "-rq", f"{r}/{a_}", f"{r}/{b_}"], capture_output=True).returncode == 0

        rows = {"none": build("none", "none", "cache-none", "out-none")}
        images = rows["none"]["images"]
        for store in a.stores.split(","):
            proxy(store, "reset")
            rows[f"{store}-write"] = row = build(f"{store}-write", store, f"cache-{store}-write", f"out-{store}-write")
            row["proxy"] = proxy(store, "reset")
            rows[f"{store}-read"] = row = build(f"{store}-read", store, f"cache-{store}-read", f"out-{store}-read")
            row["proxy"] = proxy(store, "reset")
            rows[f"{store}-warm"] = row = build(f"{store}-warm", store, f"cache-{store}-read", f"out-{store}-warm")
            row["proxy"] = proxy(store, "reset")
            # What the read-through build downloaded, fetched again through the proxy, 8 at a time.
            if store == "dav":
                paths = ["layout.json"] + ["v2/packs/" + n for n in os.listdir(f"{r}/dav/root/cache/v2/packs")]

                def fetch(path):
                    return len(urllib.request.urlopen(f"{proxies['dav']}/cache/{path}", timeout=60).read())
            else:
                import boto3
                direct = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{s3port}", region_name="us-east-1",
                                      aws_access_key_id=key, aws_secret_access_key=secret)
                via = boto3.client("s3", endpoint_url=proxies["s3"], region_name="us-east-1",
                                   aws_access_key_id=key, aws_secret_access_key=secret,
                                   config=__import__("botocore.config").config.Config(max_pool_connections=8))
                prefix = f"bench-{stamp}/"
                keys = [o["Key"] for o in direct.list_objects_v2(Bucket="cache", Prefix=prefix + "v2/packs/", MaxKeys=1000).get("Contents", [])]
                paths = [prefix + "layout.json"] + keys

                def fetch(path):
                    return len(via.get_object(Bucket="cache", Key=path)["Body"].read())
            started = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                fetched = sum(pool.map(fetch, paths))
            rows[f"{store}-transfer"] = {"label": f"{store}-transfer", "wall_s": round(time.monotonic() - started, 3),
                                         "objects": len(paths), "bytes": fetched, "proxy": proxy(store, "reset")}
            for kind in ("write", "read", "warm"):
                rows[f"{store}-{kind}"]["same_site"] = same("out-none", f"out-{store}-{kind}")

        json.dump(rows, open(r + "/remote.json", "w"), indent=1)
        none = rows["none"]["wall_s"]
        print(f"\n{a.pages} pages, {images} images, {rows['none']['encoded']} variants; each request to a store delayed {a.delay_ms:g} ms\n")
        print("| run | wall s | CPU s | ratio | requests per image (up / down) | kB per image (up / down) | same site |")
        print("|---|---|---|---|---|---|---|")
        print(f"| cold, no remote | {none:.2f} | {rows['none']['cpu_s']:.2f} | 1 | | | |")
        for store in a.stores.split(","):
            w, rd, wm, t = (rows[f"{store}-{k}"] for k in ("write", "read", "warm", "transfer"))

            def per(row):
                m = row["proxy"]["by_method"]
                up = sum(v for k, v in m.items() if k in ("PUT", "POST", "DELETE"))
                down = sum(v for k, v in m.items() if k not in ("PUT", "POST", "DELETE"))
                return (f"{(up + down) / images:.2f} ({up / images:.2f} / {down / images:.2f})",
                        f"{row['proxy']['bytes_up'] / images / 1e3:.0f} / {row['proxy']['bytes_down'] / images / 1e3:.0f}")
            name = {"dav": "WebDAV (nginx)", "s3": "S3 (moto)"}[store]
            req, kb = per(w)
            print(f"| {name}: cold, writing back | {w['wall_s']:.2f} | {w['cpu_s']:.2f} | **{w['wall_s'] / none:.3f}** x no remote | {req} | {kb} | {w['same_site']} |")
            req, kb = per(rd)
            base = wm["wall_s"] + t["wall_s"]
            print(f"| {name}: second machine, reading through | {rd['wall_s']:.2f} | {rd['cpu_s']:.2f} | **{rd['wall_s'] / base:.3f}** x (warm + transfer) | {req} | {kb} | {rd['same_site']} |")
            print(f"| {name}: same machine again, warm (output wiped) | {wm['wall_s']:.2f} | {wm['cpu_s']:.2f} | | {wm['proxy']['requests']} requests | | {wm['same_site']} |")
            print(f"| {name}: the read's objects fetched alone, 8 at a time | {t['wall_s']:.2f} | | | {t['objects']} objects | {t['bytes'] / images / 1e3:.0f} down | |")
    finally:
        for p in reversed(children):
            p.terminate()
        for p in children:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()

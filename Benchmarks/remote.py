#!/usr/bin/env python3
"""remote.py - what the remote cache costs, per image and in wall time, with the store in "another region":
every request to it goes through Tests/Support/storeproxy.py, which delays it (25 ms by default) and counts
requests and bytes each way. Both stores the tests use: nginx WebDAV and moto's S3 server (signatures checked).

    python3 Benchmarks/remote.py [--pages 200] [--unique 100] [--delay-ms 25] [--stores dav,s3] [--pairs 3] [--reads N] [--store-nice 19]
        env: IMGBAKE=.build/release/imgbake  BENCH=../shared/bench  RESULTS=/tmp/remote-bench

On the shared benchmark's site (bench/mksite.py over /tmp/imgcorpus, widths 400/800/1600), for each store:
  --pairs times, alternating (so that what else the machine does falls on both):
    a cold build without a remote, then a cold build writing back to an empty store   goal: <= 1.05 x
  --reads times (default --pairs), on what the last writing build left:
    a second machine reading through (empty local cache)                                goal: <= 1.1 x (warm + transfer)
    the same machine again, output wiped: the warm local build (asks the remote nothing)
    the transfer alone: the objects the read downloaded, fetched through the proxy 8 at a time
Every build's output is compared with the no-remote build's. Prints a Markdown table of medians (and each
ratio), writes RESULTS/remote.json, and logs every request (RESULTS/<store>-requests.log: times, method,
path, status, bytes). Needs nginx with libnginx-mod-http-dav-ext and moto (pip install 'moto[server]').
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
    ap.add_argument("--pairs", type=int, default=3, help="alternating cold builds without and with the remote")
    ap.add_argument("--store-nice", type=int, default=0,
                    help="run the stores and proxies at this niceness: a store elsewhere takes no CPU from the build")
    ap.add_argument("--reads", type=int, default=None, help="second machines reading through (default: --pairs); each is seconds, not a cold build")
    a = ap.parse_args()
    if a.reads is None:
        a.reads = a.pairs
    imgbake = os.environ.get("IMGBAKE", ROOT + "/.build/release/imgbake")
    bench = os.environ.get("BENCH", ROOT + "/../shared/bench")
    if not os.path.isdir(bench):
        bench = "/work/shared/bench"
    r = os.environ.get("RESULTS", "/tmp/remote-bench")
    if not os.access(imgbake, os.X_OK):
        raise SystemExit("build the release binary first: make release")
    if not os.path.exists("/tmp/imgcorpus/manifest.tsv"):
        subprocess.run(["bash", bench + "/corpus/make_corpus.sh"], check=True)
    if os.path.exists(r):
        shutil.rmtree(r)
        # ext4 looks harder for a free inode while inodes freed in the last 30 s (dirty_expire_centisecs)
        # are about: right after deleting a previous run's ~100,000 files, every file a build creates cost
        # more (42 % of a read-through's samples in recently_deleted). Nothing is deleted during the runs.
        time.sleep(35)
    os.makedirs(r)
    children = []

    def start(cmd, store=False, **kw):
        p = subprocess.Popen((["nice", "-n", str(a.store_nice)] if store and a.store_nice else []) + cmd, **kw)
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
        nginx_pid = start([nginx, "-c", r + "/dav/nginx.conf", "-p", r + "/dav/", "-e", r + "/dav/error.log"], store=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid
        wait_http(f"http://127.0.0.1:{dport}/")

        s3 = start(["python3", ROOT + "/Tests/Support/s3server.py", "--watch-parent"], store=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        s3port, key, secret = ready_line(s3)
        env = dict(os.environ, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret)

        proxies, proxy_processes = {}, {}
        for store, upstream in (("dav", f"http://127.0.0.1:{dport}"), ("s3", f"http://127.0.0.1:{s3port}")):
            p = start(["python3", ROOT + "/Tests/Support/storeproxy.py", "--upstream", upstream, "--delay-ms", str(a.delay_ms),
                       "--log", f"{r}/{store}-requests.log", "--watch-parent"], store=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            proxies[store] = f"http://127.0.0.1:{ready_line(p)[0]}"
            proxy_processes[store] = p

        subprocess.run(["python3", bench + "/mksite.py", "--pages", str(a.pages), "--unique", str(a.unique), "--seed", "1",
                        "--origin", origin, "--out", r + "/site"], check=True, stdout=subprocess.DEVNULL)
        base = "[images]\nwidths = [400, 800, 1600]\n[fetch]\nallow_private_networks = true\n"
        stamp = int(time.time())
        stores = a.stores.split(",")

        def remote_config(store, run):
            """A store of its own for each cold writing build (an empty one), by path or key prefix."""
            if store == "dav":
                return base + f'[cache]\nremote = "{proxies["dav"]}/cache/run{run}"\n'
            return base + (f'[cache]\nremote = "s3://cache/bench-{stamp}-{run}"\nremote_endpoint = "{proxies["s3"]}"\n'
                           'remote_path_style = true\nremote_region = "us-east-1"\n')
        open(f"{r}/none.toml", "w").write(base)
        for store in stores:
            for run in range(a.pairs):
                open(f"{r}/{store}{run}.toml", "w").write(remote_config(store, run))

        def proxy(store, what):
            """`reset` answers the counts as they were, then zeroes them."""
            stats = json.load(urllib.request.urlopen(f"{proxies[store]}/__proxy/stats", timeout=30))
            if what == "reset":
                urllib.request.urlopen(f"{proxies[store]}/__proxy/reset", timeout=30).read()
            return stats

        servers = {"dav": nginx_pid, "s3": s3.pid}
        proxy_pids = {store: p.pid for store, p in proxy_processes.items()}

        def cpu_of(pids):
            """User + system seconds of these processes and their children (nginx's worker), from /proc."""
            tick = os.sysconf("SC_CLK_TCK")
            total = 0.0
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(entry) in pids or int(fields[1]) in pids:
                    total += (int(fields[11]) + int(fields[12])) / tick
            return total

        def build(label, config, cache, out):
            store = next((name for name in servers if config.startswith(name)), None)
            served = cpu_of({servers[store], proxy_pids[store]}) if store else 0
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
            served = cpu_of({servers[store], proxy_pids[store]}) - served if store else 0
            return {"label": label, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "exit": p.returncode,
                    "store_and_proxy_cpu_s": round(served, 3),
                    "warnings": p.stderr.strip().count("\n") + (1 if p.stderr.strip() else 0),
                    "images": report["totals"]["images"], "encoded": report["totals"]["variantsEncoded"],
                    "remote": report.get("remote")}

        def same(a_, b_):
            return subprocess.run(["diff", "-rq", f"{r}/{a_}", f"{r}/{b_}"], capture_output=True).returncode == 0

        def transfer(store, run):
            """What a read-through build downloads (the marker and every pack), fetched through the proxy, 8 at a time."""
            if store == "dav":
                paths = [f"run{run}/layout.json"] + [f"run{run}/v2/packs/" + n for n in os.listdir(f"{r}/dav/root/cache/run{run}/v2/packs")]

                def fetch(path):
                    return len(urllib.request.urlopen(f"{proxies['dav']}/cache/{path}", timeout=60).read())
            else:
                import boto3, botocore.config
                direct = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{s3port}", region_name="us-east-1",
                                      aws_access_key_id=key, aws_secret_access_key=secret)
                via = boto3.client("s3", endpoint_url=proxies["s3"], region_name="us-east-1", aws_access_key_id=key,
                                   aws_secret_access_key=secret, config=botocore.config.Config(max_pool_connections=8))
                prefix = f"bench-{stamp}-{run}/"
                listing = direct.list_objects_v2(Bucket="cache", Prefix=prefix + "v2/packs/", MaxKeys=1000).get("Contents", [])
                paths = [prefix + "layout.json"] + [o["Key"] for o in listing]

                def fetch(path):
                    return len(via.get_object(Bucket="cache", Key=path)["Body"].read())
            started = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                fetched = sum(pool.map(fetch, paths))
            return {"wall_s": round(time.monotonic() - started, 3), "objects": len(paths), "bytes": fetched, "proxy": proxy(store, "reset")}

        def median(values):
            values = sorted(values)
            return values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2

        # Cold builds alternate, without and with the remote, so that what else the machine does falls on both.
        results = {}
        for store in stores:
            pairs, reads = [], []
            for run in range(a.pairs):
                none = build(f"none-{store}{run}", "none", f"cache-none-{store}{run}", f"out-none-{store}{run}")
                proxy(store, "reset")
                write = build(f"{store}-write{run}", f"{store}{run}", f"cache-{store}-write{run}", f"out-{store}-write{run}")
                write["proxy"] = proxy(store, "reset")
                write["same_site"] = same(f"out-none-{store}{run}", f"out-{store}-write{run}")
                pairs.append({"none": none, "write": write, "ratio": round(write["wall_s"] / none["wall_s"], 3)})
            last = a.pairs - 1
            for run in range(a.reads):
                read = build(f"{store}-read{run}", f"{store}{last}", f"cache-{store}-read{run}", f"out-{store}-read{run}")
                read["proxy"] = proxy(store, "reset")
                read["same_site"] = same(f"out-none-{store}{last}", f"out-{store}-read{run}")
                warm = build(f"{store}-warm{run}", f"{store}{last}", f"cache-{store}-read{run}", f"out-{store}-warm{run}")
                warm["proxy"] = proxy(store, "reset")
                warm["same_site"] = same(f"out-none-{store}{last}", f"out-{store}-warm{run}")
                moved = transfer(store, last)
                reads.append({"read": read, "warm": warm, "transfer": moved,
                              "ratio": round(read["wall_s"] / (warm["wall_s"] + moved["wall_s"]), 3)})
            results[store] = {"pairs": pairs, "reads": reads}
        json.dump(results, open(r + "/remote.json", "w"), indent=1)

        images = results[stores[0]]["pairs"][0]["none"]["images"]
        print(f"\n{a.pages} pages, {images} images, {results[stores[0]]['pairs'][0]['none']['encoded']} variants; "
              f"each request to a store delayed {a.delay_ms:g} ms; {a.pairs} alternating pairs of cold builds, {a.reads} reads; medians\n")
        print("| store | build | wall s | ratio (each run) | requests per image: up / down | kB per image: up / down | same site |")
        print("|---|---|---|---|---|---|---|")

        def per_image(row):
            m = row["proxy"]["by_method"]
            up = sum(v for k, v in m.items() if k in ("PUT", "POST", "DELETE"))
            down = sum(v for k, v in m.items() if k not in ("PUT", "POST", "DELETE"))
            return (f"{up / images:.2f} / {down / images:.2f}",
                    f"{row['proxy']['bytes_up'] / images / 1e3:.0f} / {row['proxy']['bytes_down'] / images / 1e3:.0f}")
        for store in stores:
            name = {"dav": "WebDAV (nginx)", "s3": "S3 (moto)"}[store]
            pairs, reads = results[store]["pairs"], results[store]["reads"]
            none = median([p["none"]["wall_s"] for p in pairs])
            print(f"| {name} | cold, no remote | {none:.2f} | | | | |")
            req, kb = per_image(pairs[-1]["write"])
            print(f"| {name} | cold, writing back to an empty store | {median([p['write']['wall_s'] for p in pairs]):.2f} | "
                  f"**{median([p['ratio'] for p in pairs]):.3f}** x no remote ({', '.join(str(p['ratio']) for p in pairs)}) | {req} | {kb} | "
                  f"{all(p['write']['same_site'] for p in pairs)} |")
            req, kb = per_image(reads[-1]["read"])
            print(f"| {name} | second machine, reading through | {median([x['read']['wall_s'] for x in reads]):.2f} | "
                  f"**{median([x['ratio'] for x in reads]):.3f}** x (warm + transfer) ({', '.join(str(x['ratio']) for x in reads)}) | {req} | {kb} | "
                  f"{all(x['read']['same_site'] for x in reads)} |")
            print(f"| {name} | warm local build (output wiped) | {median([x['warm']['wall_s'] for x in reads]):.2f} | | "
                  f"{sum(x['warm']['proxy']['requests'] for x in reads)} requests | | {all(x['warm']['same_site'] for x in reads)} |")
            print(f"| {name} | transfer: the same {reads[-1]['transfer']['objects']} objects fetched alone, 8 at a time | "
                  f"{median([x['transfer']['wall_s'] for x in reads]):.2f} | | | {reads[-1]['transfer']['bytes'] / images / 1e3:.0f} down | |")
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

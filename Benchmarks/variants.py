#!/usr/bin/env python3
"""variants.py RESULTS [UNIQUE] - the variants bench.sh timed beside the default build in the same run (fixed
qualities, WebP and the fallback only, JPEG XL first, an older binary at fixed qualities;
RESULTS/variants/<name>): cold CPU, wall and
peak memory, and the bytes of their image files, and files per image (with UNIQUE, the second argument), against the
default build and the pyvips script on the same stack (the last repetition's)."""
import json, os, sys


def rows(path):
    found = {}
    if os.path.exists(path):
        for line in open(path):
            if line.strip():
                r = json.loads(line)
                found[r["label"]] = r
    return found


def size(folder, suffix=""):
    if not os.path.isdir(folder):
        return 0
    return sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder) if n.endswith(suffix))


def files(folder):
    return len(os.listdir(folder)) if os.path.isdir(folder) else 0


def main():
    results = sys.argv[1]
    unique = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    reps = sorted(d for d in os.listdir(results) if d.startswith("rep"))
    if not reps:
        return
    last = os.path.join(results, reps[-1])
    default = rows(os.path.join(last, "imgbake", "results.jsonl")).get("newtool-cold")
    peer = rows(os.path.join(last, "script-stack", "results.jsonl")).get("pyvips-cold")
    peer_out = os.path.join(last, "script-stack", "out", "_img")
    if not default:
        return
    names = {"fixed": "fixed qualities (AVIF 50, WebP, JPEG 80)", "webp": "WebP and the fallback only",
             "jxl": "JPEG XL first", "old": "OLD binary, fixed qualities"}
    print()
    print("Against the script on the same stack (WebP and the source's format, %s):" % ("last repetition" if peer else "not run"))
    print()
    print("| cold build | CPU s | wall s | peak MiB | image bytes | files per image | CPU vs default | CPU vs script | wall vs script | bytes vs script |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def ratio(a, b):
        return "%.2f" % (a / b) if b else ""

    def line(name, row, out):
        cpu, wall, peak = row["cpu_s"]["median"], row["wall_s"]["median"], row["peak_rss_mib"]["median"]
        print("| %s | %.2f | %.2f | %.0f | %.1f MB | %s | %.2f | %s | %s | %s |" % (
            name, cpu, wall, peak, size(out) / 1e6, "%.2f" % (files(out) / unique) if unique else "",
            cpu / default["cpu_s"]["median"], ratio(cpu, peer and peer["cpu_s"]["median"]),
            ratio(wall, peer and peer["wall_s"]["median"]), ratio(size(out), size(peer_out))))

    line("defaults", default, os.path.join(last, "imgbake", "out", "_img"))
    for v in ("fixed", "webp", "jxl", "old"):
        row = rows(os.path.join(results, "variants", v, "results.jsonl")).get("newtool-cold")
        if row:
            line(names[v], row, os.path.join(results, "variants", v, "out", "_img"))
    for v in ("defaults", "jxl"):
        out = os.path.join(last, "imgbake", "out", "_img") if v == "defaults" else os.path.join(results, "variants", v, "out", "_img")
        if os.path.isdir(out):
            counts = ", ".join("%d %s files %.1f MB" % (len([n for n in os.listdir(out) if n.endswith(ext)]), ext[1:].upper(), size(out, ext) / 1e6)
                               for ext in (".jxl", ".avif", ".webp", ".jpg", ".png", ".gif", ".svg") if size(out, ext))
            print()
            print("%s: %s." % ("Defaults" if v == "defaults" else names[v], counts))


if __name__ == "__main__":
    main()

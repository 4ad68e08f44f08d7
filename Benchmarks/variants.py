#!/usr/bin/env python3
"""variants.py RESULTS - the variants bench.sh timed beside the default build in the same run (fixed
qualities, AVIF first, an older binary at fixed qualities; RESULTS/variants/<name>): cold CPU, wall and
peak memory, and the bytes of their image files, against the default build and the pyvips script on the
same stack (the last repetition's)."""
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


def main():
    results = sys.argv[1]
    reps = sorted(d for d in os.listdir(results) if d.startswith("rep"))
    if not reps:
        return
    last = os.path.join(results, reps[-1])
    default = rows(os.path.join(last, "imgbake", "results.jsonl")).get("newtool-cold")
    peer = rows(os.path.join(last, "script-stack", "results.jsonl")).get("pyvips-cold")
    if not default:
        return
    names = {"fixed": "fixed qualities (WebP, JPEG 80)", "avif": "AVIF first", "old": "OLD binary, fixed qualities"}
    print()
    print("| cold build | CPU s | wall s | peak MiB | image bytes | CPU vs default | CPU vs script |")
    print("|---|---|---|---|---|---|---|")

    def line(name, row, out):
        cpu, wall, peak = row["cpu_s"]["median"], row["wall_s"]["median"], row["peak_rss_mib"]["median"]
        print("| %s | %.2f | %.2f | %.0f | %.1f MB | %.2f | %s |" % (
            name, cpu, wall, peak, size(out) / 1e6, cpu / default["cpu_s"]["median"],
            "%.2f" % (cpu / peer["cpu_s"]["median"]) if peer else ""))

    line("defaults", default, os.path.join(last, "imgbake", "out", "_img"))
    for v in ("fixed", "avif", "old"):
        row = rows(os.path.join(results, "variants", v, "results.jsonl")).get("newtool-cold")
        if row:
            line(names[v], row, os.path.join(results, "variants", v, "out", "_img"))
    avif_out = os.path.join(results, "variants", "avif", "out", "_img")
    if os.path.isdir(avif_out):
        avif, webp = size(avif_out, ".avif"), size(avif_out, ".webp")
        print()
        print("AVIF first: %d AVIF files, %.1f MB; the WebP files beside them %.1f MB; the default build's WebP files "
              "%.1f MB." % (len([n for n in os.listdir(avif_out) if n.endswith(".avif")]), avif / 1e6,
                            webp / 1e6, size(os.path.join(last, "imgbake", "out", "_img"), ".webp") / 1e6))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""ratios.py RESULTS.jsonl IMGBAKE_IMG_DIR PYVIPS_IMG_DIR - imgbake against the pyvips script of the same
run: wall, CPU and peak memory ratios (cold and warm) and the bytes of image files each wrote."""
import json, os, sys


def main():
    rows = {}
    for line in open(sys.argv[1]):
        if line.strip():
            r = json.loads(line)
            rows[r["label"]] = r

    def m(label, what):
        r = rows.get(label)
        return r and (r[what]["median"])

    def size(folder):
        return sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)) if os.path.isdir(folder) else 0

    print("| | imgbake | pyvips script | ratio | target |")
    print("|---|---|---|---|---|")
    for label, peer, what, unit, target in (
            ("newtool-cold", "pyvips-cold", "wall_s", "s", "≤ 0.6"),
            ("newtool-cold", "pyvips-cold", "cpu_s", "s CPU", "≤ 0.6"),
            ("newtool-cold", "pyvips-cold", "peak_rss_mib", "MiB", "≤ 250 MiB"),
            ("newtool-warm", "pyvips-warm-trustcache", "wall_s", "s", "≤ 0.2 s")):
        a, b = m(label, what), m(peer, what)
        if a is None or b is None:
            continue
        print("| %s %s | %.2f %s | %.2f %s | %.2f | %s |" % (label.split("-")[1], what.split("_")[0], a, unit, b, unit, a / b, target))
    mine, theirs = size(sys.argv[2]), size(sys.argv[3])
    if mine and theirs:
        print("| image bytes out | %.1f MB | %.1f MB | %.2f | ≤ 0.70 |" % (mine / 1e6, theirs / 1e6, mine / theirs))
    if len(sys.argv) > 4:  # bench.sh BASE=: another imgbake binary timed after this one
        base = {}
        for line in open(sys.argv[4]):
            if line.strip():
                r = json.loads(line)
                base[r["label"]] = r
        for label in ("newtool-cold", "newtool-warm"):
            if label in base and label in rows:
                a, b = m(label, "cpu_s"), base[label]["cpu_s"]["median"]
                print("| %s CPU against BASE | %.2f s CPU | %.2f s CPU (BASE) | %.2f | %s |" % (
                    label.split("-")[1], a, b, a / b, "≤ 1.3" if label == "newtool-cold" else ""))
    for label in ("hugo-cold", "vips-P2"):
        if label in rows and "newtool-cold" in rows:
            print("| cold wall, %s | | | imgbake %.2f× faster | |" % (label, m(label, "wall_s") / m("newtool-cold", "wall_s")))


if __name__ == "__main__":
    main()

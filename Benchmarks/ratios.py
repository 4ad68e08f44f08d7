#!/usr/bin/env python3
"""ratios.py RESULTS UNIQUE - imgbake against the pyvips script on the same stack (pyvips-binary, the
library imgbake ships), on Debian's libvips, and with AVIF (--avif: sharp's defaults, Q 50; and once at
--avif-q 80, cold only), from one `make bench` run (bench.sh): the median over the repetitions of each
timing, the ratios, the image bytes and files each wrote (per unique image), and, when the run had BASE=,
this build against that one. Each repetition's own ratios follow the table."""
import json
import os
import statistics
import sys

WHO = ("imgbake", "script-stack", "script-debian", "script-avif", "script-avif80", "base")
ONCE = ("script-avif80",)  # run once, after the repetitions: in RESULTS/once


def rows(path):
    found = {}
    if os.path.exists(path):
        for line in open(path):
            if line.strip():
                r = json.loads(line)
                found[r["label"]] = r
    return found


def files(folder):
    folder = os.path.join(folder, "_img")
    if not os.path.isdir(folder):
        return []
    return [os.path.join(folder, n) for n in os.listdir(folder)]


def main():
    results, unique = sys.argv[1], int(sys.argv[2])
    reps = sorted(d for d in os.listdir(results) if d.startswith("rep"))
    # who -> rep -> label -> row
    where = {who: ["once"] if who in ONCE else reps for who in WHO}
    runs = {who: {rep: rows(os.path.join(results, rep, who, "results.jsonl")) for rep in where[who]} for who in WHO}

    def label(who, kind):
        prefix = "newtool" if who in ("imgbake", "base") else "pyvips"
        return {"cold": prefix + "-cold", "warm": prefix + ("-warm" if prefix == "newtool" else "-warm-trustcache")}[kind]

    def value(who, rep, kind, what):
        r = runs[who].get(rep, {}).get(label(who, kind))
        return r and r[what]["median"]

    def median(who, kind, what):
        values = [v for v in (value(who, rep, kind, what) for rep in where[who]) if v is not None]
        return statistics.median(values) if values else None

    def out(who):
        return os.path.join(results, where[who][-1], who, "out") if where[who] else ""

    peers = [p for p in ("script-stack", "script-debian", "script-avif", "script-avif80") if any(runs[p].values())]
    names = {"script-stack": "script, same stack", "script-debian": "script, Debian's libvips",
             "script-avif": "script + AVIF Q50, same stack", "script-avif80": "script + AVIF Q80 (cold only)"}
    print("%d repetition(s), medians; %s" % (len(reps), open(os.path.join(results, "stacks.txt")).read().strip().replace("\n", ", ")
                                             if os.path.exists(os.path.join(results, "stacks.txt")) else ""))
    print()
    print("| | imgbake | " + " | ".join("%s | ratio" % names[p] for p in peers) + " |")
    print("|---|---|" + "---|---|" * len(peers))
    for kind, what, unit in (("cold", "wall_s", "s"), ("cold", "cpu_s", "s CPU"), ("cold", "peak_rss_mib", "MiB"),
                             ("warm", "wall_s", "s")):
        mine = median("imgbake", kind, what)
        if mine is None:
            continue
        cells = []
        for p in peers:
            theirs = median(p, kind, what)
            cells.append("%.2f %s | %.2f" % (theirs, unit, mine / theirs) if theirs else "| ")
        print("| %s %s | %.2f %s | %s |" % (kind, what.split("_")[0], mine, unit, " | ".join(cells)))
    mine = files(out("imgbake"))
    if mine:
        size = sum(map(os.path.getsize, mine))
        cells, counts = [], []
        for p in peers:
            theirs = files(out(p))
            other = sum(map(os.path.getsize, theirs))
            cells.append("%.1f MB | %.2f" % (other / 1e6, size / other) if other else "| ")
            counts.append("%.2f | %.2f" % (len(theirs) / unique, len(mine) / len(theirs)) if theirs else "| ")
        print("| image bytes out | %.1f MB | %s |" % (size / 1e6, " | ".join(cells)))
        print("| files per image (%d images) | %.2f | %s |" % (unique, len(mine) / unique, " | ".join(counts)))
    # The script on the stack against itself on Debian's libvips: what the library alone changes.
    if "script-stack" in peers and "script-debian" in peers:
        for kind, what in (("cold", "cpu_s"),):
            a, b = median("script-stack", kind, what), median("script-debian", kind, what)
            if a and b:
                print()
                print("The script on the stack takes %.2f× the cold CPU of itself on Debian's libvips (%.2f s against %.2f s)"
                      % (a / b, a, b), end="")
                sa, sb = sum(map(os.path.getsize, files(out("script-stack")))), sum(map(os.path.getsize, files(out("script-debian"))))
                print(" and writes %.2f× its bytes." % (sa / sb) if sa and sb else ".")
    # The script with AVIF against itself without: what AVIF at sharp's defaults costs a user's script.
    for avif in ("script-avif", "script-avif80"):
        if avif in peers and "script-stack" in peers:
            a, b = median(avif, "cold", "cpu_s"), median("script-stack", "cold", "cpu_s")
            sa, sb = sum(map(os.path.getsize, files(out(avif)))), sum(map(os.path.getsize, files(out("script-stack"))))
            if a and b:
                print()
                print("The script with AVIF at Q %s takes %.2f× the cold CPU of itself without (%.2f s against %.2f s)%s" % (
                    "80" if avif.endswith("80") else "50", a / b, a, b,
                    " and writes %.2f× its bytes (%.1f MB against %.1f MB)." % (sa / sb, sa / 1e6, sb / 1e6) if sa and sb else "."))
    if any(runs["base"][r] for r in reps):
        print()
        print("| against BASE | this build | BASE | ratio |")
        print("|---|---|---|---|")
        for kind in ("cold", "warm"):
            for what, unit in (("cpu_s", "s CPU"), ("wall_s", "s"), ("peak_rss_mib", "MiB")):
                a, b = median("imgbake", kind, what), median("base", kind, what)
                if a is not None and b:
                    print("| %s %s | %.2f %s | %.2f %s | %.2f |" % (kind, what.split("_")[0], a, unit, b, unit, a / b))
    if len(reps) > 1:
        print()
        for rep in reps:
            parts = []
            for p in peers:
                a, b = value("imgbake", rep, "cold", "cpu_s"), value(p, rep, "cold", "cpu_s")
                w, v = value("imgbake", rep, "cold", "wall_s"), value(p, rep, "cold", "wall_s")
                if a and b and w and v:
                    parts.append("against %s: CPU %.2f×, wall %.2f×" % (names[p], a / b, w / v))
            print("- %s: imgbake cold CPU %s s; %s" % (rep, value("imgbake", rep, "cold", "cpu_s"), "; ".join(parts)))
    once = rows(os.path.join(results, "once", "hugo", "results.jsonl"))
    vips = rows(os.path.join(results, "once", "vips", "results.jsonl"))
    cold = median("imgbake", "cold", "wall_s")
    for name, table, key in (("Hugo", once, "hugo-cold"), ("vipsthumbnail -P 2", vips, "vips-P2")):
        if key in table and cold:
            r = table[key]
            print("- %s: cold wall %.2f s, CPU %.2f s; imgbake's cold wall is %.2f× it" % (
                name, r["wall_s"]["median"], r["cpu_s"]["median"], cold / r["wall_s"]["median"]))


if __name__ == "__main__":
    main()

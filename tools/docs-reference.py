#!/usr/bin/env python3
"""The documentation's reference pages, written from the binary itself so they cannot drift from it.

    tools/docs-reference.py IMGBAKE OUTDIR

OUTDIR/configuration.md comes from `imgbake config keys --json` (the table of keys the configuration
reader uses, ConfigurationKey.all); OUTDIR/commands.md from each command's `--help`. `make docs` runs it
before MkDocs; the folder is not committed.
"""
import json
import os
import subprocess
import sys

INTRO = """\
# Configuration: `imgbake.toml`

imgbake reads `imgbake.toml` from the site folder, or the file `--config FILE` names. Every key is
optional; a flag on the command line wins over the file. An unknown key or a bad value is an error that
names the file, the line and the key, and exits with status 2:

```
imgbake.toml:12: error: fetch.timout: unknown key (did you mean timeout?); known here: policy, …
```

Relative paths are relative to the file's folder, and `~/` is the home folder. Durations are written
`"500ms"`, `"30s"`, `"10m"`, `"24h"`, `"7d"` (or a number of seconds); sizes `"800KB"`, `"50MB"`, `"5GB"`,
`"1GiB"` (or a number of bytes).

This page is generated from the table of keys the configuration reader itself uses
(`imgbake config keys` prints the same list), so it names every key imgbake takes and no other.
"""

SECTIONS = {
    "output": "Where the rewritten site goes and what its pages say.",
    "images": "Which files are made from each image.",
    "fetch": "How remote images are downloaded and how long they stay fresh.",
    "cache": "The local cache and the remote cache shared by machines ([The remote cache](../REMOTE-CACHE.md)).",
    "build": "The build as a whole.",
}


def run(imgbake, *args):
    return subprocess.run([imgbake, *args], check=True, capture_output=True, text=True).stdout


def configuration(imgbake):
    keys = json.loads(run(imgbake, "config", "keys", "--json"))
    lines = [INTRO]
    section = None
    for key in keys:
        top = key["name"].split(".")[0]
        if top != section:
            section = top
            if top not in SECTIONS:
                sys.exit(f"docs-reference: no introduction for [{top}]: add it to SECTIONS")
            lines += [f"## `[{top}]`", "", SECTIONS[top], ""]
        default = f"`{key['default']}`" if key["default"] else key["default_note"]
        lines += [f"### `{key['name']}`", "", key["summary"], "",
                  f"- Takes: `{key['type']}`", f"- Default: {default}"]
        if key["example"] and key["example"] != key["default"]:
            lines.append(f"- Example: `{key['name'].split('.', 1)[1]} = {key['example']}`")
        lines.append("")
    return "\n".join(lines), len(keys)


def commands(imgbake):
    lines = ["# Commands", "",
             "Each command's own `--help`, as this version of imgbake prints it (the manual page `imgbake(1)`",
             "that the package installs says the same).", ""]
    for command in [[], ["build"], ["scan"], ["cache", "stats"], ["cache", "verify"], ["cache", "gc"], ["cache", "clean"],
                    ["config", "keys"]]:
        title = " ".join(["imgbake", *command])
        lines += [f"## `{title}`", "", "```", run(imgbake, *command, "--help").rstrip(), "```", ""]
    return "\n".join(lines)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    imgbake, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    text, count = configuration(imgbake)
    with open(os.path.join(out, "configuration.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "commands.md"), "w") as f:
        f.write(commands(imgbake))
    print(f"docs-reference: {count} configuration keys, {out}/configuration.md and {out}/commands.md")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Not a test: the sites two imgbake binaries make from the same sources, compared file by file.

    python3 Benchmarks/compare-outputs.py --base /path/to/other/imgbake [--binary .build/release/imgbake]
        [--set 'output.relative_urls = false']

The sources: Examples/site, the Hugo, Jekyll, MkDocs and Sphinx examples as their generators write
them (Debian's hugo, jekyll and sphinx-build, PyPI's mkdocs; `make deps` installs them), and a site
with every kind of reference (remote, the site's own, root-relative, page-relative and absolute under
base_url). Each binary builds each site cold into an output of its own, with a cache of its own,
against a loopback origin serving Examples/images; then every file of the two outputs is compared.
Then each binary builds its own copy of each site in place, twice (cold, then again with the cache
kept), and the two copies are compared after each build.
`--set` appends settings to each site's imgbake.toml for this binary only (to take out a change of
bytes another setting makes on purpose). Prints the files that differ and exits 1 if any do.
"""
import argparse, filecmp, os, shutil, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--base", required=True)
ap.add_argument("--binary", default=os.path.join(root, ".build/release/imgbake"))
ap.add_argument("--set", action="append", default=[], help="a line of TOML under [output] for --binary only")
a = ap.parse_args()
work = tempfile.mkdtemp(prefix="imgbake-compare-")
images = os.path.join(root, "Examples/images")


def origin(*extra):
    process = subprocess.Popen([sys.executable, os.path.join(root, "Tests/Support/origin.py"), "--root", images, "--watch-parent", *extra],
                               stdout=subprocess.PIPE, text=True)
    return process, int(process.stdout.readline().split()[1])


# images.test over HTTP (the generator examples), images.example.com over HTTPS (Examples/site).
cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=images.example.com",
                "-addext", "subjectAltName=DNS:images.example.com", "-keyout", key, "-out", cert], check=True, capture_output=True)
plain, plain_port = origin()
tls, tls_port = origin("--tls-cert", cert, "--tls-key", key)
network = ["--connect-to", "images.test:80:127.0.0.1:%d" % plain_port, "--connect-to", "images.example.com:443:127.0.0.1:%d" % tls_port,
           "--cacert", cert]

KINDS = {
    "img.html": '<img src="{0}" alt="a"><img src="{1}" alt="b" width="300"><img src="{2}" alt="c">',
    "srcset.html": '<img srcset="{0} 1x, {1} 2x" alt="a"><picture><source srcset="{2} 2x"><img src="{0}" alt="b"></picture>',
    "style.html": "<div style=\"background: url('{0}')\"></div><style>.h {{ background: url({1}) }}</style>",
    "head.html": '<meta property="og:image" content="{0}"><meta name="twitter:image" content="{1}"><link rel="icon" href="{2}">'
                 '<link rel="preload" as="image" href="{0}"><script type="application/ld+json">{{"image": "{2}"}}</script>',
    "media.html": '<video poster="{0}"></video><a href="{1}"><img src="{1}" alt="l"></a><input type="image" src="{2}" alt="i">',
    "site.css": '.a {{ background-image: url("{0}") }}\n.b {{ background: image-set("{1}" 1x, "{2}" 2x) }}\n',
    "feed.xml": '<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>'
                '<item><title>i</title><enclosure url="{0}" length="1" type="image/png"/><media:content url="{1}" medium="image"/>'
                '<description>&lt;img src=&quot;{2}&quot; alt=&quot;a&quot;&gt;</description></item></channel></rss>\n',
    "feed.json": '{{"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": [{{"id": "0", "image": "{0}", "banner_image": "{1}"}}]}}\n',
    "post.md": "---\ntitle: Post\nimage: {0}\n---\n# Post\n\n![a]({1})\n\n![b][r]\n\n[r]: {2}\n",
}


def every_kind(site):
    os.makedirs(os.path.join(site, "img"))
    for name in ["astronaut.jpg", "coffee.png"]:
        shutil.copy(os.path.join(images, name), os.path.join(site, "img", name))
    for n, (name, template) in enumerate(KINDS.items()):
        folder = os.path.join(site, "kinds", str(n))
        os.makedirs(folder)
        urls = ["http://images.test/img/hubble.jpg?k=%d" % n, "/img/astronaut.jpg" if n % 2 else "../../img/coffee.png",
                "https://example.org/img/coffee.png"]
        with open(os.path.join(folder, name), "w") as f:
            f.write(("<!doctype html><html><head><title>t</title></head><body>%s</body></html>\n" if name.endswith(".html") else "%s")
                    % template.format(*urls))
    with open(os.path.join(site, "imgbake.toml"), "w") as f:
        f.write('[output]\nbase_url = "https://example.org/"\n')
    return site


def generated(example, output):
    """The example as its generator writes it (imgbake replaced by `true`)."""
    examples = os.path.join(work, "examples")
    if not os.path.isdir(examples):
        shutil.copytree(os.path.join(root, "Examples"), examples)
    folder = os.path.join(examples, example)
    subprocess.run(["make", "-s", "IMGBAKE=true"], cwd=folder, check=True, capture_output=True)
    return os.path.join(folder, output), os.path.join(folder, "imgbake.toml")


sites = [("site", os.path.join(root, "Examples/site"), os.path.join(root, "Examples/site/imgbake.toml")),
         ("every-kind", every_kind(os.path.join(work, "kinds-site")), os.path.join(work, "kinds-site/imgbake.toml"))]
for example, output in [("hugo", "public"), ("jekyll", "_site"), ("mkdocs", "site"), ("sphinx", "_build/html")]:
    sites.append((example, *generated(example, output)))

def files_of(folder):
    found = []
    for base, _, names in os.walk(folder):
        found += [os.path.relpath(os.path.join(base, n), folder) for n in names]
    return found


def compare(name, first, second):
    files, others = files_of(first), files_of(second)
    different = sorted(set(files) ^ set(others)) + sorted(f for f in set(files) & set(others)
                                                          if not filecmp.cmp(os.path.join(first, f), os.path.join(second, f), shallow=False))
    print("%-21s %4d files, %d differ%s" % (name, len(files), len(different), (": " + ", ".join(different[:8])) if different else ""))
    return len(different)


differ = 0
for name, site, config in sites:
    outputs = []
    for tag, binary in [("base", a.base), ("this", a.binary)]:
        settings = os.path.join(work, "%s-%s.toml" % (name, tag))
        text = open(config).read()
        if tag == "this" and a.set:
            keys = [line.split("=")[0].strip() for line in a.set]
            text = "\n".join(line for line in text.split("\n") if line.split("=")[0].strip() not in keys)
            lines = "\n".join(a.set)
            text = text.replace("[output]", "[output]\n" + lines, 1) if "[output]" in text else text + "\n[output]\n" + lines + "\n"
        with open(settings, "w") as f:
            f.write(text)
        out = os.path.join(work, "out-%s-%s" % (name, tag))
        result = subprocess.run([binary, "build", site, "--out", out, "--cache-dir", os.path.join(work, "cache-" + tag),
                                 "--config", settings, "--quiet"] + network, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit("%s with %s failed: %s" % (name, binary, result.stderr[-2000:]))
        outputs.append(out)
    differ += compare(name + " --out", *outputs)
    # In place: each binary rewrites its own copy of the site, cold and then warm.
    copies = []
    for tag, binary in [("base", a.base), ("this", a.binary)]:
        copy = os.path.join(work, "inplace-%s-%s" % (name, tag))
        shutil.copytree(site, copy, symlinks=True)
        copies.append((copy, binary, tag))
    for build in ["cold", "warm"]:
        for copy, binary, tag in copies:
            result = subprocess.run([binary, "build", copy, "--cache-dir", os.path.join(work, "cache-inplace-%s-%s" % (name, tag)),
                                     "--config", os.path.join(work, "%s-%s.toml" % (name, tag)), "--quiet"] + network,
                                    capture_output=True, text=True)
            if result.returncode != 0:
                sys.exit("%s in place with %s failed: %s" % (name, binary, result.stderr[-2000:]))
        differ += compare("%s in place, %s" % (name, build), copies[0][0], copies[1][0])
plain.terminate()
tls.terminate()
shutil.rmtree(work)
sys.exit(1 if differ else 0)

#!/usr/bin/env python3
"""Every internal link of a built site resolves: each href, src, srcset candidate and url() of its HTML
pages that is not an absolute URL names a file of the site, and a #fragment names an id on its page.

    tools/check-links.py SITE

Exits 1 listing the broken ones. `make docs` runs it on the documentation after imgbake has rewritten
it, so the images imgbake wrote are checked as well as the pages' links to each other.
"""
import os
import re
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

ATTRIBUTES = {"href", "src", "poster", "data"}


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name") and (name == "id" or tag == "a"):
                self.ids.add(value)
            if name in ATTRIBUTES and not (tag == "link" and name == "href" and ("preconnect" in dict(attrs).get("rel", ""))):
                self.links.append(value)
            elif name in ("srcset", "imagesrcset"):
                self.links += [candidate.strip().split()[0] for candidate in value.split(",") if candidate.strip()]
            elif name == "style":
                self.links += re.findall(r"url\(\s*['\"]?([^'\")]+)", value)


def internal(link):
    parts = urlsplit(link)
    return not (parts.scheme or parts.netloc or link.startswith(("data:", "javascript:", "mailto:")))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    site = os.path.abspath(sys.argv[1])
    pages = {}
    for folder, _, files in os.walk(site):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(folder, name)
                page = Page()
                with open(path, encoding="utf-8") as f:
                    page.feed(f.read())
                pages[path] = page
    broken, checked = [], 0
    for path, page in sorted(pages.items()):
        for link in page.links:
            if not internal(link):
                continue
            checked += 1
            parts = urlsplit(link)
            target = path if not parts.path else os.path.normpath(
                os.path.join(site, unquote(parts.path).lstrip("/")) if parts.path.startswith("/")
                else os.path.join(os.path.dirname(path), unquote(parts.path)))
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            where = os.path.relpath(path, site)
            if not target.startswith(site + os.sep) and target != site:
                broken.append(f"{where}: {link}: outside the site")
            elif not os.path.isfile(target):
                broken.append(f"{where}: {link}: no such file")
            elif parts.fragment and target in pages and unquote(parts.fragment) not in pages[target].ids:
                broken.append(f"{where}: {link}: no id {parts.fragment!r} on {os.path.relpath(target, site)}")
    for line in broken:
        print("check-links: " + line, file=sys.stderr)
    print(f"check-links: {len(pages)} pages, {checked} internal links, {len(broken)} broken")
    # No page or no link means nothing was checked: that is a failure, not a pass.
    sys.exit(1 if broken or not pages or not checked else 0)


if __name__ == "__main__":
    main()

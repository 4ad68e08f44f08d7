#!/usr/bin/env python3
"""Checks of a built site that do not use imgbake's own scanners (tests of the generator examples).

  sitecheck.py references ROOT BASE_URL   every image URL of every text file names a file that exists
  sitecheck.py changes BEFORE AFTER       between the generator's output and imgbake's, only image
                                          references and the <img> tags changed (markup added around them)
  sitecheck.py parse ROOT                 every .xml parses as XML, every .json as JSON

Each prints what is wrong, one line each, and exits 1 if anything is.
"""
import difflib
import html
import json
import os
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET

IMAGE = r"[^\s\"'()<>,]+?\.(?:jpe?g|png|gif|webp|avif|svg|ico)(?:[?#][^\s\"'()<>,]*)?"
# An image URL wherever a page, stylesheet or feed can hold one: after a quote, `(`, `=`, a comma or
# white space (srcset), or escaped in HTML inside XML (&quot;).
IMAGE_URL = re.compile(r"(?:(?<=[\"'(=,\s])|(?<=&quot;))(" + IMAGE + r")(?=[\"')\s,&]|$)", re.I)
TEXT = (".html", ".htm", ".xml", ".json", ".css", ".md")


def text_files(root):
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(TEXT):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, root), open(path, encoding="utf-8", errors="replace").read()


def local_path(url, page, base_url):
    """The file (relative to the site) a URL on `page` names, or None when it is not the site's."""
    url = html.unescape(url)
    parts = urllib.parse.urlsplit(url)
    base = urllib.parse.urlsplit(base_url)
    if parts.scheme or parts.netloc:
        if (parts.scheme, parts.netloc) != (base.scheme, base.netloc) or not parts.path.startswith(base.path):
            return None
        path = parts.path[len(base.path):]
    elif parts.path.startswith("/"):
        if not parts.path.startswith(base.path):
            return "/outside-the-site" + parts.path
        path = parts.path[len(base.path):]
    else:
        path = os.path.normpath(os.path.join(os.path.dirname(page), parts.path))
    return urllib.parse.unquote(path)


def references(root, base_url):
    problems = []
    for page, text in text_files(root):
        for match in IMAGE_URL.finditer(text):
            path = local_path(match.group(1), page, base_url)
            if path is not None and not os.path.isfile(os.path.join(root, path)):
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{page}:{line}: {match.group(1)} names {path}, which does not exist")
    return problems


def allowed_spans(text):
    """Where imgbake may change a page: image URLs, and <img> tags with what wraps them."""
    spans = [m.span(1) for m in IMAGE_URL.finditer(text)]
    spans += [m.span() for m in re.finditer(r"<img\b[^>]*>", text, re.I)]
    spans += [m.span() for m in re.finditer(r"&lt;img\b.*?&gt;", text, re.I)]
    return spans


def changes(before, after):
    problems = []
    for page, old in text_files(before):
        path = os.path.join(after, page)
        if not os.path.exists(path):
            problems.append(f"{page}: gone after imgbake")
            continue
        new = open(path, encoding="utf-8", errors="replace").read()
        if old == new:
            continue
        spans = allowed_spans(old)
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            # A change within an image URL or <img> tag, or an insertion right at one (the <picture>;
            # the matcher may align it one byte early, on the `>` before the tag).
            if not any(start <= i1 and i2 <= end if i2 > i1 else start - 1 <= i1 <= end for start, end in spans):
                line = old.count("\n", 0, i1) + 1
                problems.append(f"{page}:{line}: changed outside image references: {old[i1:i2][:80]!r} -> {new[j1:j2][:80]!r}")
                break
    return problems


def parse(root):
    problems = []
    for page, text in text_files(root):
        try:
            if page.endswith(".xml"):
                ET.fromstring(text.encode("utf-8"))
            elif page.endswith(".json"):
                json.loads(text)
        except Exception as error:  # noqa: BLE001 - any parse error is the finding
            problems.append(f"{page}: does not parse: {error}")
    return problems


def main():
    command, *arguments = sys.argv[1:]
    problems = {"references": references, "changes": changes, "parse": parse}[command](*arguments)
    for problem in problems:
        print(problem)
    print(f"{command}: {len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""shape-counts.py [ROOT] - counts that say how the build's core is shaped, read from the sources:

  mode tests        the mode asked of anything but the output target, in the pipeline outside the
                    target's own file (Sources/ImgBake/Pipeline/OutputTarget.swift): the flags inPlace,
                    writesSite and check not reached through `target.`, and tests of the configuration's
                    `outputDirectory`, `shard` or `check` against nil or true
  page stage lines  lines of the page stage: Pipeline/PageStream*.swift and Pipeline/PagePlan*.swift (all
                    lines, and code lines: neither blank nor only a comment); the journal's files
                    (Pipeline/BuildJournal*.swift), which carry out what the page stage decided, apart
  largest bag       the most stored `var`s of one struct or class of the pipeline (its mutable bags)
  state writers     call sites that write the site state store (record, putSeal, recordOutputs, keepPage)
                    outside the store and the journal (BuildJournal*.swift)
  state makers      places that construct a PageState (`PageState(`) outside its own file
  concurrency       the mechanisms in use: task groups or actors; DispatchQueue.concurrentPerform; threads
                    parked on an NSCondition; threads of their own (the transfer thread); task executors
                    (whose own threads, in the file that declares the executor, are that mechanism)
  unchecked         `@unchecked Sendable` conformances
  long functions    functions longer than 45 lines (from the `func` line to the brace that closes its
                    body, as LayeringTests counts them) in Pipeline, Rewriting and Resolving
  coalescing maps   stored dictionaries whose values are tasks (`[Key: Task<…>]`) or entries that hold
                    waiters (a type with a `waiters` array): each a hand-made "one in-flight task per
                    key" with its own failure and eviction rules (maps of finished results are not counted)
  asked "is it there"  calls that look at a file of the images folder (`FileStamp.of`, `AtomicFile.size(of:`,
                    `fileExists(atPath:` on a path built from a folder: `folder`, `imagesFolder`, or the
                    image files' writer's `target`) outside the folder's owner (Pipeline/ImagesFolder.swift)
  repair paths      places that have an image made again after its cached files turned out damaged:
                    calls of the demand's `repair` or the manager's `reload` outside the image stage
                    (Resolving/), and success branches of `ImageManager.load` past its first
  blocking in serve `Task { … }` bodies of imgbake serve (ImgBakeServe/, Serving/) that run on Swift's
                    cooperative pool and block it: inflating or reading a blob there (not inside
                    `onPageThreads`), or calling ServedSite's `image`/`page` when that entry point
                    does not move itself to the page stage's threads (`withTaskExecutorPreference`)
  proxy unit tests  tests of the proxy's state machine, with no socket (ExchangeStateMachineTests)
  task pools        uses of the one coalescing mechanism (`TaskPool<…>(` stored in a type), each named
  fabricated pages  pages serve makes up to reach the page plan (`LoadedPage(` under Serving/)

Run from anywhere: `python3 tools/shape-counts.py` (ROOT defaults to the repository this file is in).
`git stash`/`git worktree` gives the same counts for another commit.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(ROOT, "Sources")
PIPELINE = os.path.join(SOURCES, "ImgBake", "Pipeline")


def swift_files(folder):
    for base, _, names in os.walk(folder):
        for name in sorted(names):
            if name.endswith(".swift"):
                yield os.path.join(base, name)


def code(path):
    """The file's lines without comments (// to the end of a line; doc comments included)."""
    lines = []
    for line in open(path, encoding="utf-8"):
        lines.append(re.sub(r"//.*$", "", line.rstrip("\n")))
    return lines


def count(pattern, files, skip=()):
    total = 0
    for path in files:
        if os.path.basename(path) in skip:
            continue
        total += sum(len(re.findall(pattern, line)) for line in code(path))
    return total


def largest_bag():
    """(name, count): the struct or class of the pipeline with the most stored `var` properties."""
    best = ("", 0)
    for path in swift_files(PIPELINE):
        depth, current, fields, stack = 0, None, 0, []
        for line in code(path):
            match = re.match(r"\s*(?:private |fileprivate |public |package )?(?:final )?(struct|class)\s+(\w+)", line)
            if match:
                stack.append((depth, match.group(2), 0))
            # A stored var at the body's own level: `var name` (not computed: no `{` after the type).
            # Not computed: no brace between the name and a default value (`var a: T { … }` on one line).
            if stack and depth == stack[-1][0] + 1 and re.match(r"\s*(?:private(?:\(set\))? |fileprivate |public |package |internal )*var \w+", line) \
                    and not re.match(r"[^=]*\{", line):
                d, name, n = stack[-1]
                stack[-1] = (d, name, n + 1)
            depth += line.count("{") - line.count("}")
            while stack and depth <= stack[-1][0]:
                d, name, n = stack.pop()
                if n > best[1]:
                    best = (name, n)
    return best


FUNC = re.compile(r"^\s*(?:(?:public|private|fileprivate|package|static|mutating|nonisolated|override|final)\s+)*func\s+(\w+)")


def long_functions(folders, limit=45):
    """[(file, name, lines)] of the functions longer than `limit` lines in `folders`."""
    found = []
    for folder in folders:
        for path in swift_files(folder):
            lines = open(path, encoding="utf-8").read().split("\n")
            for first, line in enumerate(lines):
                match = FUNC.match(line)
                if not match:
                    continue
                braces, opened, last = 0, False, first
                for number in range(first, len(lines)):
                    braces += lines[number].count("{") - lines[number].count("}")
                    opened = opened or "{" in lines[number]
                    if opened and braces <= 0:
                        last = number
                        break
                if last - first + 1 > limit:
                    found.append((os.path.relpath(path, SOURCES), match.group(1), last - first + 1))
    return found


def coalescing_maps(files):
    """["File.name", ...]: stored dictionaries of tasks, or of a type of the same file holding `waiters`."""
    found = []
    for path in files:
        lines = code(path)
        text = "\n".join(lines)
        waiting = []
        for match in re.finditer(r"(?:struct|class)\s+(\w+)[^{]*\{", text):
            depth, index = 1, match.end()
            while depth and index < len(text):
                depth += {"{": 1, "}": -1}.get(text[index], 0)
                index += 1
            if re.search(r"\bvar\s+waiters\s*:", text[match.end():index]):
                waiting.append(re.escape(match.group(1)) + r"\]")
        values = "|".join([r"Task<"] + waiting)
        for line in lines:
            match = re.search(r"\b(?:var|let)\s+(\w+)\b[^=]*?[=:]\s*(?:Locked\()?\[[^\[\]:]+:\s*(?:%s)" % values, line)
            if match:
                found.append("%s.%s" % (os.path.basename(path)[:-len(".swift")], match.group(1)))
    return found


def asks_if_there(files):
    """["File:line", ...]: looks at an image file's presence outside the images folder's owner."""
    found = []
    call = re.compile(r"(?:FileStamp\.of|AtomicFile\.size\(of:|fileExists\(atPath:)\s*\(?([^)]*)")
    for path in files:
        if os.path.basename(path) == "ImagesFolder.swift":
            continue
        writer = os.path.basename(path) == "ImageFiles.swift"
        for number, line in enumerate(code(path), 1):
            for match in call.finditer(line):
                argument = match.group(1)
                if re.search(r"\b(?:folder|imagesFolder)\b", argument) or (writer and re.search(r"\btarget\b", argument)):
                    found.append("%s:%d" % (os.path.basename(path)[:-len(".swift")], number))
    return found


def repair_paths(files):
    """["File", ...]: calls that make an image again from outside the image stage, and repeated success
    branches of ImageManager.load."""
    found = []
    for path in files:
        name = os.path.basename(path)[:-len(".swift")]
        lines = code(path)
        if os.sep + "Resolving" + os.sep not in path:
            found += [name for line in lines if re.search(r"\.(?:repair|reload)\(", line)]
        if name == "ImageManager+Variants":
            text = "\n".join(lines)
            start = text.find("func load(")
            end = text.find("\n    }\n", start)
            found += [name + ".load"] * max(0, text[start:end].count(".resolved(image(") - 1)
    return found


def body_after(text, start):
    """The text from `start` to the brace that closes the first block opened after it."""
    open_at = text.find("{", start)
    if open_at < 0:
        return ""
    depth, index = 1, open_at + 1
    while depth and index < len(text):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        index += 1
    return text[open_at:index]


def blocking_in_serve(root_sources):
    """["File:Task", ...]: tasks of serve on the cooperative pool that block it."""
    folders = [os.path.join(root_sources, "ImgBakeServe"), os.path.join(root_sources, "ImgBake", "Serving")]
    files = [p for folder in folders for p in swift_files(folder)]
    site = os.path.join(root_sources, "ImgBake", "Serving", "ServedSite.swift")
    site_text = "\n".join(code(site)) if os.path.exists(site) else ""

    def moves_itself(name):
        match = re.search(r"func %s\(" % name, site_text)
        return bool(match) and "withTaskExecutorPreference" in body_after(site_text, match.end())

    found = []
    for path in files:
        text = "\n".join(code(path))
        for match in re.finditer(r"\bTask\s*(\(|\{)", text):
            head = text[match.start():text.find("{", match.start())]
            if "executorPreference" in head:
                continue
            body = body_after(text, match.start())
            unguarded = re.sub(r"onPageThreads\((?:[^()]|\([^()]*\))*\)", "", body)
            if (re.search(r"\b(?:gunzip|readBlobHere|served)\(", unguarded)
                    or (re.search(r"\bsite\.image\(", body) and not moves_itself("image"))
                    or (re.search(r"\bsite\.page\(", body) and not moves_itself("page"))):
                found.append("%s:%d" % (os.path.basename(path)[:-len(".swift")], text.count("\n", 0, match.start()) + 1))
    return found


def proxy_unit_tests(root, suite="ExchangeStateMachineTests"):
    path = os.path.join(root, "Tests", "UnitTests", suite + ".swift")
    if not os.path.exists(path):
        return 0
    return len(re.findall(r"@Test\b", open(path, encoding="utf-8").read()))


def task_pools(files):
    """["File.name", ...]: stored properties made as a `TaskPool`."""
    found = []
    for path in files:
        for line in code(path):
            match = re.search(r"\b(?:var|let)\s+(\w+)\s*=\s*TaskPool<", line)
            if match:
                found.append("%s.%s" % (os.path.basename(path)[:-len(".swift")], match.group(1)))
    return found


def main():
    pipeline = list(swift_files(PIPELINE))
    everything = list(swift_files(SOURCES))
    mode = count(r"(?<!target\.)(?<!case \.)(?<![(,] \.)\b(?:inPlace|writesSite)\b(?!\()|(?<!target\.)\b(?:plan|config|configuration)\.check\b"
                 r"|\b(?:outputDirectory|shard)\s*[!=]=\s*nil", pipeline, skip=("OutputTarget.swift",))
    stage = [p for p in pipeline if os.path.basename(p).startswith(("PageStream", "PagePlan"))]
    stage_lines = sum(len(open(p, encoding="utf-8").read().splitlines()) for p in stage)
    stage_code = sum(sum(1 for line in code(p) if line.strip()) for p in stage)
    journal = [p for p in pipeline if os.path.basename(p).startswith("BuildJournal")]
    journal_lines = sum(len(open(p, encoding="utf-8").read().splitlines()) for p in journal)
    journal_code = sum(sum(1 for line in code(p) if line.strip()) for p in journal)
    name, fields = largest_bag()
    writers = count(r"\b(?:store|sites|run\.store)\.(?:record|putSeal|recordOutputs|keepPage)\(",
                    [p for p in everything if not os.path.basename(p).startswith("BuildJournal")], skip=("SiteStateStore.swift",))
    makers = count(r"\bPageState\(", everything, skip=("SiteState.swift", "PageStateCodec.swift"))
    mechanisms = []
    if count(r"\bwithTaskGroup|withThrowingTaskGroup|\bactor\b", everything):
        mechanisms.append("task groups and actors")
    if count(r"concurrentPerform", everything):
        mechanisms.append("DispatchQueue.concurrentPerform")
    executors = [p for p in everything if count(r":\s*TaskExecutor\b", [p])]
    others = [p for p in everything if p not in executors]
    if count(r"NSCondition", others):
        mechanisms.append("threads parked on an NSCondition")
    if count(r"\bThread\s*\{", others):
        mechanisms.append("threads of their own (Thread)")
    if executors:
        mechanisms.append("task executors")
    unchecked = count(r"@unchecked\s+Sendable", everything)
    library = os.path.join(SOURCES, "ImgBake")
    long = long_functions([os.path.join(library, name) for name in ("Pipeline", "Rewriting", "Resolving")])
    maps = coalescing_maps(everything)
    pools = task_pools(everything)
    there = asks_if_there(everything)
    repairs = repair_paths(everything)
    blocking = blocking_in_serve(SOURCES)
    proxy_tests = proxy_unit_tests(ROOT)
    fabricated = count(r"\bLoadedPage\(", list(swift_files(os.path.join(library, "Serving"))))
    print("| count | value |")
    print("|---|---|")
    print("| mode tests outside the output target | %d |" % mode)
    print("| lines of the page stage (%s) | %d (%d of code) |" % (", ".join(sorted(os.path.basename(p) for p in stage)), stage_lines, stage_code))
    print("| lines of the journal (%s) | %d (%d of code) |" % (", ".join(sorted(os.path.basename(p) for p in journal)) or "none",
                                                            journal_lines, journal_code))
    print("| fields of the largest mutable bag | %d (%s) |" % (fields, name))
    print("| places that write the site state store | %d |" % writers)
    print("| places that construct a PageState | %d |" % makers)
    print("| concurrency mechanisms | %d: %s |" % (len(mechanisms), "; ".join(mechanisms)))
    print("| @unchecked Sendable | %d |" % unchecked)
    print("| functions over 45 lines in Pipeline, Rewriting, Resolving | %d%s |" % (
        len(long), ": " + ", ".join("%s %s (%d)" % f for f in long) if long else ""))
    print("| coalescing maps | %d: %s |" % (len(maps), ", ".join(maps)))
    print("| task pools | %d: %s |" % (len(pools), ", ".join(pools)))
    print("| places asking whether an image file is there, outside its owner | %d%s |" % (len(there), ": " + ", ".join(there) if there else ""))
    print("| repair paths | %d: %s |" % (len(repairs), ", ".join(repairs)))
    print("| pages fabricated in serve | %d |" % fabricated)
    print("| blocking calls on the cooperative pool in serve | %d%s |" % (len(blocking), ": " + ", ".join(blocking) if blocking else ""))
    print("| unit tests of the proxy state machine, no socket | %d |" % proxy_tests)
    print("| tests of the proxy's handlers on NIO's testing channels | %d |" % proxy_unit_tests(ROOT, "ProxyHandlerTests"))


if __name__ == "__main__":
    main()

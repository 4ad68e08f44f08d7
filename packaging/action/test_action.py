#!/usr/bin/env python3
"""The GitHub Action (action.yml) run as a runner would run it, in a clean Debian 13 root (the nearest to
GitHub's ubuntu-latest, Ubuntu 24.04, that can be made here: the same 64-bit-time libraries, no libvips)
with the built tarball: `make dist-check` calls this on a root with nothing of imgbake's installed.

Each step of action.yml is taken as written: its `if`, `env` and `run` are evaluated with the inputs
and the runner's variables (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, RUNNER_TEMP, ...), and its shell steps
run in the root with bash, as GitHub runs them. The `uses:` steps (actions/cache, upload-artifact) are
GitHub's own and cannot run here: their `with` is evaluated and checked instead (the cache key, its
restore-keys, the report to upload). Three runs: a cold one, a warm one that must find every image in
the cache, and one with --strict that fails and must still write its summary. The YAML of the action
and of Examples/ci parses.
"""
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys

import yaml

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Expression:
    """The part of GitHub's expression language action.yml uses: literals, contexts, ==, !=, !, &&, ||,
    parentheses, format(), hashFiles(), always(), success(), failure(). Anything else is an error, so
    a new construct in action.yml fails this test until it is taught here."""

    TOKEN = re.compile(r"\s*(?:('(?:[^']|'')*')|(\d+)|([A-Za-z_][A-Za-z0-9_.-]*)|(==|!=|&&|\|\||!|\(|\)|,))")

    def __init__(self, text, context, functions):
        self.tokens, at = [], 0
        while at < len(text.rstrip()):
            m = self.TOKEN.match(text, at)
            if not m:
                raise ValueError(f"cannot read expression at {text[at:]!r}")
            self.tokens.append(m.groups())
            at = m.end()
        self.at, self.context, self.functions = 0, context, functions

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else (None, None, None, None)

    def take(self, op=None):
        token = self.peek()
        if op is not None and token[3] != op:
            raise ValueError(f"expected {op}, found {token}")
        self.at += 1
        return token

    def value(self):
        result = self.either()
        if self.at != len(self.tokens):
            raise ValueError(f"unexpected {self.peek()}")
        return result

    def either(self):
        left = self.both()
        while self.peek()[3] == "||":
            self.take()
            right = self.both()
            left = left if truthy(left) else right
        return left

    def both(self):
        left = self.compare()
        while self.peek()[3] == "&&":
            self.take()
            right = self.compare()
            left = right if truthy(left) else left
        return left

    def compare(self):
        left = self.unary()
        while self.peek()[3] in ("==", "!="):
            op = self.take()[3]
            right = self.unary()
            left = (str(left).lower() == str(right).lower()) == (op == "==")
        return left

    def unary(self):
        if self.peek()[3] == "!":
            self.take()
            return not truthy(self.unary())
        if self.peek()[3] == "(":
            self.take()
            inner = self.either()
            self.take(")")
            return inner
        string, number, name, op = self.take()
        if string is not None:
            return string[1:-1].replace("''", "'")
        if number is not None:
            return int(number)
        if name is None:
            raise ValueError(f"unexpected {op}")
        if self.peek()[3] == "(":
            self.take()
            arguments = []
            while self.peek()[3] != ")":
                arguments.append(self.either())
                if self.peek()[3] == ",":
                    self.take()
            self.take(")")
            if name not in self.functions:
                raise ValueError(f"function {name}() is not known to this test")
            return self.functions[name](*arguments)
        value = self.context
        for part in name.split("."):
            if not isinstance(value, dict) or part not in value:
                raise ValueError(f"{name} is not known to this test")
            value = value[part]
        return value


def truthy(value):
    return value not in (None, "", False, 0)


def evaluate(text, context, functions):
    """A value with ${{ }} expressions in it (an `if` is an expression without them)."""
    def one(m):
        value = Expression(m.group(1), context, functions).value()
        return "" if value is None else ("true" if value is True else "false" if value is False else str(value))
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(text))


class Runner:
    def __init__(self, args, action):
        self.args, self.action = args, action
        self.root = args.root
        self.gh = "/tmp/gh"  # inside the root
        self.status = "success"

    def path(self, inside):
        return self.root + inside

    def run(self, run_id, inputs, expect_status):
        gh = self.gh
        # RUNNER_TEMP is kept from run to run (it holds the cache, as actions/cache would restore it);
        # the workspace is a fresh checkout.
        shutil.rmtree(self.path(f"{gh}/workspace"), ignore_errors=True)
        os.makedirs(self.path(f"{gh}/temp"), exist_ok=True)
        shutil.copytree(os.path.join(ROOT_DIR, self.args.site), self.path(f"{gh}/workspace/site"))
        for name in ("summary.md", "output", "path"):
            open(self.path(f"{gh}/{name}"), "w").close()
        # The runner's tool cache survives from run to run, as on a runner that keeps its tools.
        os.makedirs(self.path(f"{gh}/toolcache"), exist_ok=True)
        declared = self.action["inputs"]
        unknown = set(inputs) - set(declared)
        assert not unknown, f"inputs not declared in action.yml: {unknown}"
        values = {name: inputs.get(name, str(spec.get("default", ""))) for name, spec in declared.items()}
        env = {
            "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux", "RUNNER_TEMP": f"{gh}/temp",
            "GITHUB_WORKSPACE": f"{gh}/workspace", "GITHUB_STEP_SUMMARY": f"{gh}/summary.md",
            "GITHUB_OUTPUT": f"{gh}/output", "GITHUB_ACTION_PATH": f"{gh}/action", "GITHUB_RUN_ID": str(run_id),
            "GITHUB_PATH": f"{gh}/path", "RUNNER_TOOL_CACHE": f"{gh}/toolcache",
            "HOME": "/root", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
        }
        context = {
            "inputs": values,
            "runner": {"temp": env["RUNNER_TEMP"], "os": "Linux"},
            "github": {"action_path": env["GITHUB_ACTION_PATH"], "run_id": str(run_id), "run_attempt": "1",
                       "workspace": env["GITHUB_WORKSPACE"]},
            "steps": {},
        }
        self.status = "success"
        functions = {
            "format": lambda f, *a: re.sub(r"\{(\d+)\}", lambda m: str(a[int(m.group(1))]), f),
            "hashFiles": self.hash_files,
            "always": lambda: True,
            "success": lambda: self.status == "success",
            "failure": lambda: self.status == "failure",
        }
        uses = {}
        for step in self.action["runs"]["steps"]:
            name = step.get("name", step.get("uses", step.get("run")))
            condition = step.get("if", "success()")
            if not truthy(Expression(condition.replace("${{", "").replace("}}", ""), context, functions).value()):
                print(f"   - {name}: skipped ({condition})")
                continue
            if "uses" in step:
                uses.setdefault(step["uses"], []).append({k: evaluate(v, context, functions) for k, v in step.get("with", {}).items()})
                print(f"   - {name}: {step['uses']} (GitHub's; checked, not run)")
                continue
            assert step.get("shell") == "bash", f"{name}: a run step needs shell: bash"
            step_env = dict(env)
            # Folders a step added to GITHUB_PATH come first on PATH in the steps after it.
            added = [line for line in open(self.path(f"{gh}/path")).read().splitlines() if line]
            step_env["PATH"] = ":".join(list(reversed(added)) + [env["PATH"]])
            step_env.update({k: evaluate(v, context, functions) for k, v in step.get("env", {}).items()})
            script = evaluate(step["run"], context, functions)
            open(self.path(f"{gh}/output"), "w").close()
            # As GitHub runs a step: bash without profiles, -e and pipefail, in the workspace.
            command = ["chroot", self.root, "/usr/bin/env", "-i", "-C", env["GITHUB_WORKSPACE"]] + [f"{k}={v}" for k, v in step_env.items()] + \
                      ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script]
            result = subprocess.run(command, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            outputs = dict(line.split("=", 1) for line in open(self.path(f"{gh}/output")).read().splitlines() if "=" in line)
            if "id" in step:
                context["steps"][step["id"]] = {"outputs": outputs, "outcome": "success" if result.returncode == 0 else "failure"}
            for line in result.stdout.splitlines()[-12:]:
                print(f"     | {line}")
            print(f"   - {name}: exit {result.returncode}")
            if result.returncode != 0:
                self.status = "failure"
        assert self.status == expect_status, f"the action ended in {self.status}, expected {expect_status}"
        return context, uses, open(self.path(f"{gh}/summary.md")).read()

    def hash_files(self, *patterns):
        digest = hashlib.sha256()
        found = False
        for pattern in patterns:
            path = self.path(f"{self.gh}/workspace/{pattern}")
            if os.path.isfile(path):
                digest.update(open(path, "rb").read())
                found = True
        return digest.hexdigest() if found else ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True, help="a clean root (Debian 13) to run the steps in")
    parser.add_argument("--package", required=True, help="the tarball the install step installs")
    parser.add_argument("--site", required=True, help="a site folder of this repository")
    parser.add_argument("--args", default="", help="extra arguments for imgbake build (the origin)")
    args = parser.parse_args()

    action = yaml.safe_load(open(os.path.join(ROOT_DIR, "action.yml")))
    assert action["runs"]["using"] == "composite"
    for name in sorted(os.listdir(os.path.join(ROOT_DIR, "Examples/ci"))):
        if name.endswith((".yml", ".yaml")):
            yaml.safe_load(open(os.path.join(ROOT_DIR, "Examples/ci", name)))
            print(f"   Examples/ci/{name} parses")

    runner = Runner(args, action)
    gh = runner.gh
    # The action's files as a workflow's checkout of imgbake/imgbake would have them.
    shutil.rmtree(runner.path(gh + "/action"), ignore_errors=True)
    os.makedirs(runner.path(gh + "/action/packaging"))
    shutil.copy(os.path.join(ROOT_DIR, "action.yml"), runner.path(gh + "/action/"))
    shutil.copytree(os.path.join(ROOT_DIR, "packaging/action"), runner.path(gh + "/action/packaging/action"))
    shutil.copy(args.package, runner.path(gh + "/"))
    package = f"{gh}/{os.path.basename(args.package)}"
    version = re.fullmatch(r"imgbake-(.+)-linux-x86_64\.tar\.gz", os.path.basename(args.package)).group(1)
    assert action["inputs"]["version"]["default"] == version.split("+")[0], \
        f"action.yml installs {action['inputs']['version']['default']} by default, the package is {version}"
    inputs = {"site": "site", "package": package, "version": version, "args": args.args}

    print(" cold run (empty cache)")
    context, uses, summary = runner.run(1001, inputs, "success")
    print("\n".join("     > " + line for line in summary.splitlines()))
    outputs = context["steps"]["build"]["outputs"]
    assert outputs["exit-code"] == "0", outputs
    assert os.path.isfile(runner.path(outputs["report"])), "no JSON report"
    assert f"### imgbake {version}: site" in summary, summary
    assert re.search(r"^\| pages \| 3 \(3 rewritten", summary, re.M), summary
    assert re.search(r"^\| images \| \d+: 0 from the cache, [1-9]\d* downloaded", summary, re.M), summary
    assert re.search(r"^\| bytes before → after \| [\d.]+ [KM]?B → [\d.]+ [KM]?B", summary, re.M), summary
    assert re.search(r"^#### Failures \(1\)", summary, re.M) and re.search(r"^\| `index\.html:\d+` \| https://images\.example\.com/img/not-there\.jpg \| HTTP 404 \|$", summary, re.M), summary
    # The cache: a key per run, restored from the latest run with the same configuration, then from any.
    restore, = uses["actions/cache/restore@v4"]
    save, = uses["actions/cache/save@v4"]
    cache_dir = f"{gh}/temp/imgbake-cache"
    assert restore["path"] == save["path"] == cache_dir, (restore, save)
    assert restore["key"] == save["key"] and restore["key"].startswith("imgbake-Linux-") and restore["key"].endswith("-1001-1"), restore
    keys = restore["restore-keys"].split()
    assert keys == [restore["key"][: -len("1001-1")], "imgbake-Linux-"], keys
    assert os.path.isdir(runner.path(cache_dir + "/blobs")), "the build left no cache to save"
    upload, = uses["actions/upload-artifact@v4"]
    assert upload["name"] == "imgbake-report" and os.path.isfile(runner.path(upload["path"])), upload
    assert "<h1>imgbake report</h1>" in open(runner.path(upload["path"])).read()
    # Installed into the tool cache, on PATH for the steps after it, needing nothing of the root's.
    tool = f"{gh}/toolcache/imgbake/{version}/x64"
    assert os.path.isfile(runner.path(tool + "/bin/imgbake")) and os.path.isfile(runner.path(tool + ".complete")), tool
    assert open(runner.path(f"{gh}/path")).read().split() == [tool + "/bin"], open(runner.path(f"{gh}/path")).read()
    assert not os.path.exists(runner.path("/usr/bin/imgbake")) and not os.path.exists(runner.path("/usr/local/bin/imgbake"))

    print(" warm run (the cache restored: RUNNER_TEMP kept)")
    context, uses, summary = runner.run(1002, inputs, "success")
    print("\n".join("     > " + line for line in summary.splitlines()))
    assert re.search(r"^\| images \| \d+: [1-9]\d* from the cache, 0 downloaded", summary, re.M), summary
    assert re.search(r"^\| network \| [01] requests", summary, re.M), summary  # at most the 404, remembered

    print(" failing run (--strict with a missing image)")
    context, uses, summary = runner.run(1003, dict(inputs, args=args.args + " --strict"), "failure")
    print("\n".join("     > " + line for line in summary.splitlines()))
    assert context["steps"]["build"]["outputs"]["exit-code"] == "1"
    assert "**The build failed (exit code 1).**" in summary and "not-there.jpg" in summary, summary
    assert uses.get("actions/cache/save@v4") and uses.get("actions/upload-artifact@v4"), "a failed build must still save its cache and report"
    print(" the action's steps passed: 3 runs")


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, ValueError) as error:
        print(f"test_action: FAIL: {error}", file=sys.stderr)
        sys.exit(1)

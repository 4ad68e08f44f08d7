#!/usr/bin/env python3
"""Check the project's CI files before a forge runs them: each against its schema, each script in them
with shellcheck.

    tools/check-workflows.py [FILE...]

Without FILEs: .github/workflows/*.yml and Examples/ci/*.yml (GitHub workflows, or GitLab's for a name
with "gitlab" in it) and action.yml (a GitHub Action). Schemas are check-jsonschema's vendored copies
of SchemaStore's (`--builtin-schema vendor.github-workflows`, `vendor.github-actions`,
`vendor.gitlab-ci`), so nothing is fetched. Every `run:` of a step (GitHub) and every `script`,
`before_script` and `after_script` (GitLab) is written to a file with its `${{ … }}` expressions
replaced by underscores of the same length, as actionlint does, and given to shellcheck for the shell
it runs in; so is every repository script a step runs with `bash path/to/script.sh`. Exits 1 naming
each finding. `make test` runs it (actionlint cannot be installed here: its PyPI package downloads its
binary when it builds).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

from ruamel.yaml import YAML

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
# `bash .ci/run`, `bash "${{ github.action_path }}/packaging/action/install.sh"`: a script of this
# repository (an action's path is the repository's root).
CALLED = re.compile(r"\b(?:bash|sh)\s+\"?(?:\$\{\{\s*github\.action_path\s*\}\}/)?((?:\.?[\w-]+/)*[\w.-]+?(?:\.sh|/run))\"?")


def kind(path):
    name = os.path.basename(path)
    if name in ("action.yml", "action.yaml"):
        return "vendor.github-actions"
    return "vendor.gitlab-ci" if "gitlab" in name else "vendor.github-workflows"


def scripts(path, document):
    """(where, shell, text) for every shell script in a CI file."""
    found = []
    if kind(path) == "vendor.gitlab-ci":
        for job, body in (document or {}).items():
            if not isinstance(body, dict):
                continue
            for key in ("before_script", "script", "after_script"):
                lines = body.get(key)
                if lines:
                    found.append((f"{job}.{key}", "bash", "\n".join(lines if isinstance(lines, list) else [lines])))
        return found
    if kind(path) == "vendor.github-actions":
        steps = [("runs", (document.get("runs") or {}).get("steps") or [])]
    else:
        defaults = ((document.get("defaults") or {}).get("run") or {}).get("shell", "bash")
        steps = [(f"jobs.{job}", body.get("steps") or []) for job, body in (document.get("jobs") or {}).items()]
    for where, items in steps:
        for number, step in enumerate(items, 1):
            if "run" in step:
                shell = step.get("shell", defaults if kind(path) == "vendor.github-workflows" else "bash")
                name = step.get("name") or f"step {number}"
                found.append((f"{where}.steps[{number}] ({name})", shell.split()[0], step["run"]))
    return found


def main():
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, ".github/workflows/*.yml")) +
                                   glob.glob(os.path.join(ROOT, "Examples/ci/*.yml")) + [os.path.join(ROOT, "action.yml")])
    problems = 0
    by_schema = {}
    for path in files:
        by_schema.setdefault(kind(path), []).append(path)
    for schema, paths in sorted(by_schema.items()):
        result = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *paths],
                                capture_output=True, text=True)
        if result.returncode != 0:
            problems += 1
            print(f"check-workflows: {schema}:\n{result.stdout}{result.stderr}", file=sys.stderr)
    called = set()
    checked = 0
    with tempfile.TemporaryDirectory() as work:
        for path in files:
            with open(path) as f:
                document = YAML(typ="safe").load(f)
            for number, (where, shell, text) in enumerate(scripts(path, document)):
                if shell not in ("bash", "sh"):
                    continue
                called.update(CALLED.findall(text))
                body = EXPRESSION.sub(lambda m: "_" * len(m.group(0)), text)
                script = os.path.join(work, f"{number}.{shell}")
                with open(script, "w") as f:
                    f.write(f"#!/usr/bin/env {shell}\n{body}\n")
                checked += 1
                result = subprocess.run(["shellcheck", "--shell", shell, script], capture_output=True, text=True)
                if result.returncode != 0:
                    problems += 1
                    report = result.stdout.replace(script, f"{os.path.relpath(path, ROOT)}: {where}")
                    print(f"check-workflows: shellcheck, {os.path.relpath(path, ROOT)}: {where}:\n{report}", file=sys.stderr)
    for script in sorted(called):
        full = os.path.join(ROOT, script)
        if not os.path.isfile(full):
            problems += 1
            print(f"check-workflows: a step runs {script}, which is not in the repository", file=sys.stderr)
            continue
        checked += 1
        result = subprocess.run(["shellcheck", full], capture_output=True, text=True)
        if result.returncode != 0:
            problems += 1
            print(f"check-workflows: shellcheck:\n{result.stdout}", file=sys.stderr)
    print(f"check-workflows: {len(files)} files against their schemas, {checked} scripts through shellcheck, "
          f"{problems} with problems")
    # A run that checked no script would pass whatever the files said.
    sys.exit(1 if problems or not checked else 0)


if __name__ == "__main__":
    main()

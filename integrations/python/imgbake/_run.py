"""What the MkDocs plugin and the Sphinx extension share: finding the imgbake binary, the settings it
is given, running `imgbake build` on the generator's output, and its diagnostics as the generator's."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

try:
    import tomllib
except ModuleNotFoundError:  # Python before 3.11
    import tomli as tomllib

INSTALL = ("imgbake is not installed: `pip install imgbake` (the wheel carries the binary), or a package from "
           "https://github.com/imgbake/imgbake (`make dist` builds the wheel, the tarball and the .deb; `make release` "
           "the binary alone), then put `imgbake` on PATH or name it with %s or the IMGBAKE environment variable")

# The keys of imgbake.toml whose values are paths, relative to the file that holds them
# (Sources/ImgBake/Configuration/ConfigurationFile.swift): made absolute, since imgbake reads the
# settings from a file of their own.
PATH_KEYS = {("output", "dir"), ("output", "templates_dir"), ("fetch", "cacert"), ("cache", "dir"),
             ("build", "report"), ("build", "depfile")}

DIAGNOSTIC = re.compile(r"^(?P<where>.*?):? ?\b(?P<severity>warning|error|note): (?P<text>.*)$")


class ImgbakeError(Exception):
    """A reason the site's images were not localised: no binary, bad settings, a failed build."""


def find_binary(named=None, option="the plugin's `binary` option"):
    """The imgbake executable: the one this package's wheel installed beside it (the binary of the
    plugin's own version, in the environment's bin/), else `named` (a path, or a command on PATH),
    else $IMGBAKE, else `imgbake` on PATH. `option` is how the generator's configuration names it,
    for the error."""
    own = _installed_binary()
    if own:
        return own
    named = named or os.environ.get("IMGBAKE")
    found = shutil.which(os.path.expanduser(named or "imgbake"))
    if found:
        return found
    raise ImgbakeError(("imgbake binary %r not found or not executable. " % named if named else "") + INSTALL % option)


def _installed_binary():
    """bin/imgbake as the installed distribution lists it (the wheel's; a source install of this package
    has none), wherever pip put the environment's scripts: a virtual environment, --user, a prefix."""
    try:
        from importlib import metadata
        files = metadata.distribution("imgbake").files or []
    except Exception:  # not installed as a distribution (run from a checkout), or metadata unreadable
        return None
    for file in files:
        if file.name == "imgbake" and file.parent.name == "bin":
            path = os.path.abspath(file.locate())
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


def settings(base, config_file=None, options=None, defaults=None):
    """The settings imgbake gets, as tables: `defaults` (what the generator's own configuration says,
    such as the site's URL) where nothing else says, then `config_file` (an imgbake.toml), then
    `options` (written in the generator's configuration, paths relative to `base`)."""
    merged = {}
    _merge(merged, defaults or {})
    if config_file:
        try:
            with open(config_file, "rb") as file:
                written = tomllib.load(file)
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ImgbakeError("cannot read %s: %s" % (config_file, error))
        _merge(merged, _absolute(written, os.path.dirname(os.path.abspath(config_file))))
    _merge(merged, _absolute(options or {}, base))
    return merged


def write_settings(tables):
    """`tables` as an imgbake.toml in a folder of the user's own; named by its content, so an unchanged
    configuration is the same file with the same time and the next build can trust its seal."""
    text = dumps(tables)
    folder = os.path.join(tempfile.gettempdir(), "imgbake-settings-%d" % os.getuid())
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, hashlib.sha256(text.encode()).hexdigest()[:16] + ".toml")
    if not os.path.exists(path):
        fd, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    return path


def build(site, binary, config, log, cache_dir=None, args=(), prefix="imgbake: "):
    """Runs `imgbake build SITE` in place; every warning goes to `log.warning` and every note to
    `log.info`, the summary to `log.info`, each after `prefix` (MkDocs' plugin logger has its own).
    Raises ImgbakeError when the build fails (exit 1) or the settings are wrong (exit 2), with
    imgbake's errors."""
    # Paths as text: Sphinx 7.2 and later give the output folder as a path object.
    command = [os.fspath(binary), "build", os.fspath(site), "--config", os.fspath(config)]
    if cache_dir:
        command += ["--cache-dir", os.path.expanduser(cache_dir)]
    command += list(args)
    log.debug("%srunning %s", prefix, " ".join(command))
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        raise ImgbakeError("cannot run %s: %s" % (binary, error.strerror))
    errors = []
    for line in done.stderr.splitlines():
        match = DIAGNOSTIC.match(line)
        if not match:
            log.debug("%s%s", prefix, line)  # progress
            continue
        where = match["where"] if match["where"] not in ("", "imgbake") else None
        message = "%s%s%s" % (prefix, where + ": " if where else "", match["text"])
        if match["severity"] == "error":
            errors.append(message)
        elif match["severity"] == "warning":
            log.warning(message)
        else:
            log.info(message)
    for line in done.stdout.splitlines():
        if line.strip():
            log.info("%s%s", prefix, line.strip().removeprefix("imgbake: "))
    if done.returncode != 0:
        raise ImgbakeError("imgbake build %s failed (exit %d)%s" % (site, done.returncode,
                                                                   ":\n" + "\n".join(errors) if errors else ""))
    for message in errors:  # errors of a build that still succeeded (none today): shown, not lost
        log.warning(message)
    return done.stdout


def dumps(tables):
    """TOML for imgbake's settings: tables of strings, numbers, booleans and arrays."""
    lines = []
    _table(lines, [], tables)
    return "\n".join(lines) + "\n"


def _table(lines, path, table):
    values = [(key, value) for key, value in table.items() if not isinstance(value, dict)]
    tables = [(key, value) for key, value in table.items() if isinstance(value, dict)]
    if path and (values or not tables):
        lines.append("[%s]" % ".".join(_key(part) for part in path))
    lines.extend("%s = %s" % (_key(key), _value(value)) for key, value in values)
    for key, value in tables:
        _table(lines, path + [key], value)


def _key(key):
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[%s]" % ", ".join(_value(item) for item in value)
    if isinstance(value, dict):
        return "{ %s }" % ", ".join("%s = %s" % (_key(key), _value(item)) for key, item in value.items())
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise ImgbakeError("imgbake setting %r: cannot write a %s" % (value, type(value).__name__))


def _merge(into, tables):
    for key, value in tables.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _absolute(tables, base):
    """A copy of `tables` with the path values made absolute from `base`."""
    copy = {key: dict(value) if isinstance(value, dict) else value for key, value in tables.items()}
    for table, key in PATH_KEYS:
        value = copy.get(table, {}).get(key) if isinstance(copy.get(table), dict) else None
        if isinstance(value, str):
            copy[table][key] = os.path.join(base, os.path.expanduser(value))
    return copy

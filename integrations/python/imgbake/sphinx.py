"""imgbake as a Sphinx extension: `extensions = ["imgbake.sphinx"]` in conf.py.

When an HTML build finishes (`html`, `dirhtml`, `singlehtml`; `imgbake_builders` names others), the
output folder's images are localised in place by `imgbake build`; other builders (LaTeX, man, epub,
linkcheck...) are left alone. imgbake's warnings are Sphinx warnings (type `imgbake`: `-W` makes them
errors, `suppress_warnings = ["imgbake"]` silences them); a failed build or a missing binary is an
extension error. Under sphinx-autobuild each rebuild is localised the same way, from the cache.

    imgbake_config = "imgbake.toml"        # optional; imgbake.toml beside conf.py is read when it exists
    imgbake_settings = {"images": {"widths": [480, 960]}}   # tables of imgbake.toml, laid over it
    imgbake_binary = None                  # when the wheel's own binary is not installed: else $IMGBAKE, else PATH
    imgbake_cache_dir = None
    imgbake_args = []                      # more arguments for `imgbake build`
"""
import os

from sphinx.errors import ExtensionError
from sphinx.util import logging

from imgbake import __version__, _run

logger = logging.getLogger(__name__)
OPTION = "`imgbake_binary` in conf.py"


class _Log:
    """imgbake's diagnostics as Sphinx warnings of their own type."""

    def warning(self, message, *args):
        logger.warning(message, *args, type="imgbake", subtype="build")

    def info(self, message, *args):
        logger.info(message, *args)

    def debug(self, message, *args):
        logger.debug(message, *args)


def _applies(app):
    return app.builder.name in app.config.imgbake_builders


def _prepare(app):
    """Before the build, so that a missing binary or unreadable settings stop it at once."""
    if not _applies(app):
        return
    try:
        _run.find_binary(app.config.imgbake_binary, OPTION)
    except _run.ImgbakeError as error:
        raise ExtensionError(str(error), modname=__name__)


def _build_finished(app, exception):
    if exception is not None or not _applies(app):
        return
    config = app.config
    written = config.imgbake_config
    if written is None and os.path.isfile(os.path.join(app.confdir, "imgbake.toml")):
        written = "imgbake.toml"
    defaults = {"build": {"exclude": ["_static/**", "_sources/**"]}}  # the theme's files, the copied sources
    if config.html_baseurl:
        defaults["output"] = {"base_url": config.html_baseurl}
    try:
        # Sphinx 7.2 and later give its folders as path objects (a subclass of pathlib.Path in 9).
        confdir, outdir = os.fspath(app.confdir), os.fspath(app.outdir)
        settings = _run.settings(confdir, written and os.path.join(confdir, written), config.imgbake_settings, defaults)
        _run.build(outdir, _run.find_binary(config.imgbake_binary, OPTION), _run.write_settings(settings), _Log(),
                   cache_dir=config.imgbake_cache_dir, args=config.imgbake_args)
    except _run.ImgbakeError as error:
        raise ExtensionError(str(error), modname=__name__)


def setup(app):
    # "" (no rebuild of the pages): the settings change only what imgbake does to the output.
    app.add_config_value("imgbake_binary", None, "")
    app.add_config_value("imgbake_config", None, "")
    app.add_config_value("imgbake_settings", {}, "")
    app.add_config_value("imgbake_cache_dir", None, "")
    app.add_config_value("imgbake_args", [], "")
    app.add_config_value("imgbake_builders", ["html", "dirhtml", "singlehtml"], "")
    app.connect("builder-inited", _prepare)
    app.connect("build-finished", _build_finished)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

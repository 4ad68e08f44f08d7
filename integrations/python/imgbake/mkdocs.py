"""imgbake as an MkDocs plugin: `plugins: [imgbake]` in mkdocs.yml.

After every build, `mkdocs build` and each rebuild of `mkdocs serve` (on the folder it serves), the
site's images are localised in place by `imgbake build`, with the image cache kept between builds
(imgbake's own, or `cache_dir`), so a rebuild fetches and encodes only what is new. imgbake's
warnings are MkDocs warnings (`mkdocs build --strict` fails on them); a failed build or a missing
binary stops MkDocs with one error.

    plugins:
      - search
      - imgbake:
          config: imgbake.toml          # optional; imgbake.toml beside mkdocs.yml is read when it exists
          images: { widths: [480, 960] }  # any table of imgbake.toml: output, images, fetch, cache, build
"""
import os

from mkdocs.config import base
from mkdocs.config import config_options as option
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

from imgbake import _run

try:
    from mkdocs.plugins import get_plugin_logger  # MkDocs 1.5 and later: messages prefixed with the plugin's name

    log, PREFIX = get_plugin_logger(__name__), ""
except ImportError:  # MkDocs 1.4 (Debian 12's): a logger under mkdocs', whose warnings --strict counts
    import logging

    log, PREFIX = logging.getLogger("mkdocs.plugins." + __name__), "imgbake: "


class ImgbakeConfig(base.Config):
    enabled = option.Type(bool, default=True)
    # The imgbake executable when the wheel's own is not installed; else $IMGBAKE, else `imgbake` on PATH.
    binary = option.Optional(option.Type(str))
    # An imgbake.toml, relative to mkdocs.yml; the tables below are laid over it.
    config = option.Optional(option.Type(str))
    cache_dir = option.Optional(option.Type(str))
    # More arguments for `imgbake build` (`--offline`, `--connect-to ...`).
    args = option.ListOfItems(option.Type(str), default=[])
    output = option.Type(dict, default={})
    images = option.Type(dict, default={})
    fetch = option.Type(dict, default={})
    cache = option.Type(dict, default={})
    build = option.Type(dict, default={})


class ImgbakePlugin(BasePlugin[ImgbakeConfig]):
    serving = False

    def on_startup(self, command, dirty):
        self.serving = command == "serve"

    def on_config(self, config):
        if not self.config.enabled:
            return config
        try:
            self.binary = _run.find_binary(self.config.binary, "`binary:` under `imgbake` in mkdocs.yml")
            self.settings = _run.write_settings(self._settings(config))
        except _run.ImgbakeError as error:
            raise PluginError(str(error))
        return config

    def on_post_build(self, config):
        if not self.config.enabled:
            return
        try:
            _run.build(config.site_dir, self.binary, self.settings, log, cache_dir=self.config.cache_dir, args=self.config.args, prefix=PREFIX)
        except _run.ImgbakeError as error:
            raise PluginError(str(error))

    def _settings(self, config):
        project = os.path.dirname(os.path.abspath(config.config_file_path))
        written = self.config.config
        if written is None and os.path.isfile(os.path.join(project, "imgbake.toml")):
            written = "imgbake.toml"
        options = {table: self.config[table] for table in ("output", "images", "fetch", "cache", "build") if self.config[table]}
        if self.serving and config.site_url:
            # `mkdocs serve` gives site_url the dev server's address: the pages' absolute URLs are
            # under it, whatever the settings say the published site's is.
            options["output"] = dict(options.get("output", {}), base_url=config.site_url)
        return _run.settings(project, written and os.path.join(project, written), options, self._defaults(config))

    @staticmethod
    def _defaults(config):
        """What mkdocs.yml already says: the site's URL (feeds and social cards need it, and its path
        is where the site is served), and the theme's own files, left as the theme wrote them."""
        output = {"base_url": config.site_url} if config.site_url else {}
        folders = {"search"}
        for folder in config.theme.dirs:
            if os.path.abspath(folder) == os.path.abspath(config.docs_dir):
                continue
            folders.update(entry.name for entry in os.scandir(folder) if entry.is_dir() and not entry.name.startswith((".", "_")))
        return {"output": output, "build": {"exclude": sorted(name + "/**" for name in folders)}}

# A Sphinx project (Debian's python3-sphinx, the default alabaster theme) with imgbake as the step
# after `sphinx-build`.
project = "imgbake after Sphinx"
html_theme = "alabaster"
html_baseurl = "https://example.org/"
html_static_path = []
exclude_patterns = ["_build", "img/README.txt"]

"""imgbake inside static-site generators: `imgbake.mkdocs` (MkDocs' `plugins: [imgbake]`) and
`imgbake.sphinx` (Sphinx's `extensions = ["imgbake.sphinx"]`) run the imgbake binary on the built
site, in builds and under the dev servers."""
__version__ = "0.2.0"

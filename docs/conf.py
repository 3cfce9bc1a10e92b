"""Sphinx configuration of the rbf_bayes site (built by `python tools/build_docs.py`).

The source directory is `_site/src`, which `tools/build_docs.py` fills from `nbs/` (nbdev directives turned
into cell tags, `#| slow` cells shown but not run, API pages generated from every module's `__all__`).
Notebooks are executed by myst-nb through jupyter-cache, so an unchanged notebook is not run again.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

project = "rbf_bayes"
author = "rbf_bayes developers"
copyright = "2026 onwards, rbf_bayes developers"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",  # the estimators' numpydoc sections (Examples, run as doctests by tests/test_examples.py)
    "sphinx.ext.mathjax",
    "rbf_docs",  # MathJax 3 from PyPI (sphinx-mathjax-offline's copy) served from _static, no CDN at read
                 # time; docments (the parameter comments in nbdev signatures) in the API entries
]

napoleon_google_docstring = False   # only numpydoc's underlined sections; "Attributes: ..." prose stays prose
napoleon_numpy_docstring = True
# an "Attributes" section as fields of its class, not a second description of autodoc's members
napoleon_use_ivar = True

root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "jupyter_execute"]
templates_path = []
html_static_path = [os.path.join(os.path.dirname(__file__), "_static")]
html_css_files = ["rbf_bayes.css"]

# --- MyST: the notebooks' $...$ and $$...$$ math, nothing else non-CommonMark is needed
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_dmath_double_inline = True
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # a notebook's first heading may be H2 after its title cell

# --- execution: every notebook in its CI configuration (slow cells were made non-executable by the builder)
nb_execution_mode = os.environ.get("RBF_DOCS_EXECUTE", "cache")
nb_execution_cache_path = os.environ.get("RBF_DOCS_CACHE", "")
# the figure chapters whose kept outputs match their sources (tools/build_docs.py, KEEP): shown as kept, not run
nb_execution_excludepatterns = [p for p in os.environ.get("RBF_DOCS_KEPT", "").split(",") if p]
nb_execution_timeout = 3600
nb_execution_raise_on_error = True   # a failing check fails the build, as in nbdev_test
nb_execution_show_tb = True
nb_merge_streams = True
nb_ipywidgets_js = {}                # no widget JavaScript from a CDN; the explorer shows its static figure
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.jupyter.widget-state+json", None),
]

# --- API entries
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

# --- theme: sphinx-book-theme (Executable Books, maintained with myst-nb; on pydata-sphinx-theme): one left sidebar
# with the whole book under its section captions, a search box, the page's contents on the right; no CDN assets
html_theme = "sphinx_book_theme"
html_title = "rbf_bayes"
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "search_bar_text": "Search the derivations and the API…",
}
html_show_sourcelink = False

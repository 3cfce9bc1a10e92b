"""Sphinx extension: nbdev *docments* in the API entries.

nbdev documents a parameter by a comment after it in the signature (``x:float, # the input``); autodoc sees
only the docstring. This hook reads the comments with ``fastcore.docments`` and appends them as a field
list (``:param x:``, ``:returns:``), so every exported name's entry shows its signature and its docments.
"""
import inspect
import re
from pathlib import Path

_CODE = re.compile(r"(``[^`]+``|`[^`]+`)")


def md_to_rst(text):
    """nbdev docstrings are Markdown: `code` spans, names ending in `_` (fitted attributes), `|` and `*` as text.

    Turn them into reStructuredText that means the same: single-backtick spans -> inline literals, and the
    characters that are markup in reST escaped outside code spans.
    """
    out = []
    for part in _CODE.split(text):
        if part.startswith("``"):
            out.append(part)
        elif part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append("``" + part[1:-1] + "``")
        else:
            part = re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", part)
            part = part.replace("|", "\\|").replace("*", "\\*")
            out.append(part)
    return "".join(out)


def _docments(obj):
    from fastcore.docments import docments
    target = obj.__init__ if inspect.isclass(obj) else obj
    if not callable(target):
        return {}
    try:
        return docments(target, full=True)
    except Exception:  # noqa: BLE001 - builtins, Cython functions, signatures fastcore cannot read
        return {}


def add_docments(app, what, name, obj, options, lines):
    if what not in ("function", "method", "class", "module", "attribute", "data", "property", "exception"):
        return
    if what not in ("function", "method", "class"):
        lines[:] = md_to_rst("\n".join(lines)).split("\n") if lines else []
        return
    converted = md_to_rst("\n".join(lines)).split("\n") if lines else []
    lines[:] = converted
    d = _docments(obj)
    text = "\n".join(lines)
    extra = []
    for p, info in d.items():
        doc = info.get("docment") if isinstance(info, dict) else None
        if not doc or p in ("self", "cls"):
            continue
        doc = " ".join(doc.split())     # a comment wrapped over lines (docments joins them with newlines): one field
        if p == "return":
            if ":returns:" not in text:
                extra.append(f":returns: {md_to_rst(doc)}")
        elif f":param {p}:" not in text:
            extra.append(f":param {p}: {md_to_rst(doc)}")
    if extra:
        if lines and lines[-1].strip():
            lines.append("")
        lines.extend(extra)


def skip_foreign(app, what, name, obj, skip, options):
    """Members a class inherits from scikit-learn (get_params, set_*_request, ...) are documented there."""
    mod = getattr(obj, "__module__", None) or ""
    qual = getattr(obj, "__qualname__", "") or ""
    if mod.startswith("sklearn") or "_metadata_requests" in qual or (name.startswith("set_")
                                                                      and name.endswith("_request")):
        return True
    return None


def _mathjax_dir():
    """MathJax 3 as shipped by the PyPI package sphinx-mathjax-offline (its directory name has hyphens)."""
    import importlib.util
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or spec.origin is None:
        raise RuntimeError("the docs need MathJax from PyPI: pip install -e '.[docs]' (sphinx-mathjax-offline)")
    return Path(spec.origin).parent / "static" / "mathjax"


def copy_mathjax(app, exc):
    """Serve MathJax from _static/mathjax: the site typesets with the network off."""
    from sphinx.util.fileutil import copy_asset
    if exc is None and app.builder.format == "html":
        copy_asset(str(_mathjax_dir()), str(Path(app.outdir) / "_static" / "mathjax"))


def setup(app):
    _mathjax_dir()                                   # fail early, with the install hint
    app.config.mathjax_path = "mathjax/tex-chtml.js"
    app.connect("build-finished", copy_mathjax)
    app.connect("autodoc-process-docstring", add_docments)
    app.connect("autodoc-skip-member", skip_foreign)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

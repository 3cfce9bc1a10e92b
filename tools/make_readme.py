"""Generate README.md from nbs/index.ipynb with nbconvert (Quarto cannot be installed here).

`python tools/make_readme.py` writes README.md; `--check` fails if README.md is out of sync, or
if `.ci/run` does not run the README's test command verbatim.
"""
import re
import sys
from pathlib import Path

import nbformat
from nbconvert import MarkdownExporter

ROOT = Path(__file__).resolve().parents[1]
HEADER = "<!-- generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, not this file -->\n\n"


def render() -> str:
    """README text from the index notebook: hidden cells dropped, nbdev directives stripped, code without its outputs
    (the index keeps its outputs for the site, stamped: in the README they would be timings that change with every
    run and figures it does not hold)."""
    nb = nbformat.read(ROOT / "nbs" / "index.ipynb", as_version=4)
    cells = []
    for cell in nb.cells:
        src = cell.source
        if re.search(r"^#\|\s*hide\b", src, flags=re.M):
            continue
        if cell.cell_type == "code":
            cell.source = "\n".join(l for l in src.splitlines() if not l.startswith("#|")).strip()
            cell.outputs = []
        cells.append(cell)
    nb.cells = cells
    body, _ = MarkdownExporter().from_notebook_node(nb)
    body = re.sub(r"\n{3,}", "\n\n", body).strip() + "\n"
    return HEADER + body


def test_command(readme: str) -> str:
    """The single command in the README's `sh` block under the 'Develop and test' heading."""
    m = re.search(r"## Develop and test.*?```(?:sh|bash)\n(.+?)\n```", readme, flags=re.S)
    if not m:
        raise SystemExit("README.md has no ```sh block under '## Develop and test'")
    return m.group(1).strip()


def main(argv):
    text = render()
    readme = ROOT / "README.md"
    if "--check" in argv:
        if not readme.exists() or readme.read_text(encoding="utf-8") != text:
            raise SystemExit("README.md is out of sync with nbs/index.ipynb: run `python tools/make_readme.py`")
        cmd = test_command(text)
        ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if cmd not in [l.strip() for l in ci]:
            raise SystemExit(f".ci/run does not run the README's test command verbatim: {cmd!r}")
        print("README.md in sync; .ci/run runs:", cmd)
    else:
        readme.write_text(text, encoding="utf-8")
        print("wrote", readme)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Keep the figures of the figure chapters as notebook outputs, so that a chapter shows its figures on GitHub, in
Jupyter and in any notebook viewer, not only in the built site.

    python tools/keep_figures.py                          # nbs/14_plot.ipynb and every nbs/experiments/*.ipynb
    python tools/keep_figures.py nbs/experiments/exp2_robot_arm.ipynb

The policy (ARCHITECTURE.md, "Figures kept as outputs"):

- Only figures are kept: each notebook is executed as `nbdev_test` executes it (cells flagged `#| slow` or
  `#| eval: false` are skipped), and of its outputs only the PNG images stay; printed text, tables, warnings and
  execution counts are dropped (the site shows them, executed afresh on every build).
- Small: every PNG is redrawn at most `MAX_WIDTH` pixels wide with a 64-colour palette (a few tens of KB), its
  output metadata cleared; `tests/test_architecture.py` checks the sizes and that nothing else is kept.
- Kept figures are a snapshot: the site (`tools/build_docs.py`) and `nbdev_test` execute every notebook again, so
  neither depends on them. Run this tool after changing a figure chapter or the code it draws.
"""
import argparse
import base64
import copy
import io
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
MAX_WIDTH = 720          # pixels
COLOURS = 64             # palette size of a kept PNG


def figure_chapters() -> list[Path]:
    "The chapters whose figures are kept: the plotting chapter and every experiment."
    return [ROOT / "nbs" / "14_plot.ipynb", *sorted((ROOT / "nbs" / "experiments").glob("*.ipynb"))]


def skipped(src: str) -> bool:
    "A cell nbdev_test does not run: flagged `#| slow` or `#| eval: false` in its leading directives."
    for line in src.splitlines():
        s = line.strip()
        if not s.startswith("#|"): break
        flag = s[2:].strip().replace(" ", "")
        if flag == "slow" or flag == "eval:false": return True
    return False


def small_png(b64: str) -> str:
    "The PNG at most MAX_WIDTH wide, palette-quantised and optimised, as base64."
    im = Image.open(io.BytesIO(base64.b64decode(b64))).convert("RGB")
    if im.width > MAX_WIDTH:
        im = im.resize((MAX_WIDTH, round(im.height * MAX_WIDTH / im.width)), Image.LANCZOS)
    out = io.BytesIO()
    im.quantize(COLOURS, method=Image.Quantize.MEDIANCUT).save(out, format="PNG", optimize=True)
    return base64.b64encode(out.getvalue()).decode("ascii")


def keep_figures(path: Path) -> int:
    "Execute the notebook at `path` and write it back with only its (small) figures as outputs; the count kept."
    nb = nbformat.read(path, as_version=4)
    run = nbformat.v4.new_notebook(metadata=copy.deepcopy(nb.metadata))   # the kernel's widget state stays there
    index = []                                      # positions in nb of the cells executed
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and not skipped(c.source):
            run.cells.append(nbformat.v4.new_code_cell(c.source)); index.append(i)
    NotebookClient(
        run, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    for c in nb.cells:
        if c.cell_type == "code": c.outputs, c.execution_count = [], None
    kept = 0
    for i, c in zip(index, run.cells, strict=True):
        for o in c.outputs:
            png = o.get("data", {}).get("image/png") if o.output_type in ("display_data", "execute_result") else None
            if png:
                nb.cells[i].outputs.append(nbformat.v4.new_output("display_data", data={"image/png": small_png(png)}))
                kept += 1
    nbformat.write(nb, path)
    return kept


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="*", type=Path)
    a = ap.parse_args()
    for p in a.notebooks or figure_chapters():
        p = p.resolve()
        if not p.is_file(): sys.exit(f"{p}: no such notebook")
        n = keep_figures(p)
        print(f"{p.relative_to(ROOT)}: {n} figure(s) kept", flush=True)


if __name__ == "__main__":
    main()

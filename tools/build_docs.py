"""Build the rbf_bayes documentation site from `nbs/`, offline: `python tools/build_docs.py` -> `_site/html/index.html`.

Toolchain: Sphinx + myst-nb + pydata-sphinx-theme, MathJax 3 from PyPI (`sphinx-mathjax-offline`). Quarto, which
`nbdev_docs` needs, cannot be installed from the registries our machines reach; `nbs/_quarto.yml` is left valid
so `nbdev_docs` still works where Quarto exists.

What this script does, in order:

1. copies every notebook under `nbs/` to `_site/src/` in the same layout (one level deeper from the repository
   root; the tremor data, which the notebooks look for at `../shared/data` beside the repository, is passed on
   as `RBF_BAYES_TREMOR_DIR`, as the tests do), turning nbdev directives into what
   myst-nb understands: `#| hide` -> the cell runs but is removed from the page (`remove-cell`);
   `#| slow` -> not run, shown as a code block with a sentence saying how to run it (the CI configuration,
   exactly what `nbdev_test` runs); the `#| ...` lines themselves are dropped from the shown source;
2. prepends to each notebook a hidden comment cell with a hash of the package's sources, so the execution
   cache (jupyter-cache, keyed on the code cells) re-runs every notebook when the package changes and
   re-runs none when only prose changed;
3. writes the navigation (hidden toctrees appended to the index notebook, in the order of NAV below) and
   one API page per module, each an `automodule` over the module's `__all__` (every exported name, with its
   signature and docments: `docs/rbf_docs.py`);
4. executes the notebooks the cache does not hold, `-j` at a time, the longest first (`pre_execute`), into the
   cache myst-nb reads: sphinx's parallel reader hands each process a fixed run of documents in name order, so
   the experiments, adjacent by name and half the execution time, ran one after another in one process while
   the other sat idle;
5. runs `sphinx-build` with the configuration in `docs/conf.py`; warnings are errors (`-W --keep-going`).

Kept outputs (ARCHITECTURE.md, "Outputs kept in the figure chapters"). The figure chapters (`KEEP`: every experiment
and the chapters whose checks draw figures, `FIGURE_CHAPTERS`) keep their outputs in `nbs/`, so they
show their figures, tables and numbers wherever a notebook is read (GitHub, Jupyter, nbviewer), not only here; so do
the slowest module chapters without a figure (`SLOW_CHAPTERS`), so that CI does not execute them twice.
`--keep-outputs` executes them in this build and writes their outputs there: printed text and tables as they are,
every PNG redrawn at most `MAX_WIDTH` pixels wide with a `COLOURS`-colour palette, widget views dropped (their
static figure stays; a widget with none, a progress bar, is dropped whole), no metadata, then `nbdev_clean`. It
records in `nbs/kept_outputs.json` a stamp for each: a sha256 over the package's sources (as in 2.) and the
notebook's code cells as executed. A build in which a chapter's stamp matches shows its kept outputs and does not
execute it again (`nbdev_test`, the README's test command, executes it in any case, so a kept output never hides a
failing check); a stale stamp (the package or the chapter changed since) means the chapter is executed as any other,
and the build says so. What the site shows is therefore always the output of the sources it is built from.

Every notebook under `nbs/` must appear in NAV: the build fails on a notebook that has no place in the book.
`--fresh` empties the execution cache first; `--no-exec` renders without running anything (outputs empty).
"""
import argparse
import base64
import contextlib
import hashlib
import inspect
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
SITE = ROOT / "_site"
SRC = SITE / "src"
OUT = SITE / "html"
CACHE = SITE / "cache"

# the book's order: model -> moves -> kernel -> samplers -> calibration -> convergence -> SMC -> BMARS
# -> estimators -> experiments; the package's foundations and the API reference close it
NAV = [
    ("The model", ["00_basis", "01_priors", "02_posterior"]),
    ("Moves", ["03_moves"]),
    ("The kernel", ["04_kernel"]),
    ("Samplers", ["05_rjmcmc", "05b_chains", "05c_probit", "05d_learned_basis"]),
    ("Calibration and annealing", ["06_calibration", "07_annealing"]),
    ("Convergence", ["08_convergence"]),
    ("Sequential Monte Carlo", ["09_smc"]),
    ("Bayesian MARS", ["10_bmars"]),
    ("Estimators and tools", ["12_estimators", "16_workflow", "14_plot", "13_datasets", "15_cli"]),
    ("Experiments", ["experiments/exp1_signal_detection", "experiments/exp2_robot_arm", "experiments/exp3_bmars",
                     "experiments/exp4_smc", "experiments/exp5_classification",
                     "experiments/exp6_learned_basis", "experiments/exp7_annealing_study",
                     "experiments/exp8_benchmarks"]),
    ("Foundations", ["00a_validation", "00b_base", "04a_results", "04b_progress"]),
]
PUBLIC_MODULES = ["basis", "priors", "posterior", "moves", "kernel", "rjmcmc", "chains", "probit", "calibration",
                  "annealing", "convergence", "smc", "bmars", "estimators", "plot", "datasets", "results", "progress",
                  "cli", "_validation", "_base"]

DIRECTIVE = re.compile(r"^\s*#\|\s*(.*?)\s*$")
SLOW_NOTE = ("*Slow cell: the full configuration, not run in this build (the site shows the CI configuration, "
             "as `nbdev_test` runs it); `nbdev_test --flags slow` runs it.*")


# Chapters that keep their outputs in nbs/ (module docstring), each with its stamp: besides the experiments, the
# chapters whose checks draw figures (the index's quick start among them), and the module chapters without a figure
# whose execution takes longest (30-65 s each on 2 cores; since stop 68 also the next four, 8-21 s each). CI's site
# would otherwise execute them all a second time after nbdev_test.
FIGURE_CHAPTERS = ["index", "05d_learned_basis", "14_plot", "16_workflow"]
SLOW_CHAPTERS = ["02_posterior", "05c_probit", "09_smc", "12_estimators",
                 "03_moves", "05b_chains", "08_convergence", "10_bmars"]
KEEP = FIGURE_CHAPTERS + SLOW_CHAPTERS + [d for cap, ds in NAV if cap == "Experiments" for d in ds]
STAMPS = NBS / "kept_outputs.json"
MAX_WIDTH = 720          # pixels: the widest kept PNG
COLOURS = 64             # palette size of a kept PNG
DROP_MIME = ("application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json")

EXEC_CONFIG = "kernel python3, inline matplotlib, slow cells not run (v1)"   # change it to re-run everything


def source_hash(extra=""):
    """sha256 over the package's sources, C headers and data and the benchmark scripts bench/bench_*.py (exp8 runs
    bench/bench_defaults.py; the studies, bench/study_*.py, are run by hand, never by a notebook), and `extra`: what
    else the outputs depend on, e.g. whether the tremor data were found (`notebook_hash`). A change invalidates every
    cached execution it enters."""
    h = hashlib.sha256((EXEC_CONFIG + extra).encode())
    for p in [*sorted((ROOT / "rbf_bayes").rglob("*")), *sorted((ROOT / "bench").glob("bench_*.py"))]:
        if p.is_file() and p.suffix in {".py", ".pyx", ".pxd", ".h", ".csv"} and p.name != "_modidx.py":
            h.update(p.relative_to(ROOT).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def reads_tremor(nb) -> bool:
    """Whether a notebook's code can read the tremor data (`datasets.load_tremor`, the only reader, or the
    classifier benchmark's --tremor): its code cells name it. Prose that mentions tremor does not count."""
    return any(c["cell_type"] == "code" and "tremor" in _lines(c["source"]).lower() for c in nb["cells"])


def notebook_hash(nb, shashes):
    """The source hash a notebook's execution and kept-output stamp depend on: `shashes` = (without, with) whether
    the tremor data were found; only a notebook that reads them (`reads_tremor`) takes the second. So a checkout
    without ../shared/data re-executes the chapters whose outputs depend on the data, not every kept chapter."""
    return shashes[1] if reads_tremor(nb) else shashes[0]


def _lines(src):
    return src if isinstance(src, str) else "".join(src)


def process_cell(cell, outputs=False):
    """One notebook cell -> the cells shown on the site (nbdev directives -> myst-nb tags); with `outputs`, a code
    cell that is run keeps the outputs it has in `nbs/`."""
    if cell["cell_type"] != "code":
        return [cell]
    src = _lines(cell["source"])
    lines = src.splitlines()
    directives, body = [], []
    for ln in lines:
        m = DIRECTIVE.match(ln)
        if m and not body:
            directives.append(m.group(1).split())
        else:
            body.append(ln)
    names = {d[0] for d in directives if d}
    code = "\n".join(body).strip("\n")
    if "default_exp" in names:
        return []                                       # the module name is in the title cell's prose
    if "slow" in names or "eval:" in names and any(d[:2] == ["eval:", "false"] for d in directives):
        fence = "```python\n" + code + "\n```"
        return [{"cell_type": "markdown", "metadata": {}, "source": SLOW_NOTE + "\n\n" + fence}]
    tags = list(cell.get("metadata", {}).get("tags", []))
    if "hide" in names:
        tags.append("remove-cell")
    if "export" in names or "exporti" in names:
        tags.append("rbf-export")
    new = {"cell_type": "code", "execution_count": None, "metadata": {"tags": tags} if tags else {},
           "outputs": list(cell.get("outputs", [])) if outputs else [], "source": code}
    return [new]


def nav_toctrees():
    out = []
    for caption, docs in NAV:
        entries = "\n".join(docs)
        out.append(f"```{{toctree}}\n:hidden:\n:caption: {caption}\n:maxdepth: 2\n\n{entries}\n```")
    out.append("```{toctree}\n:hidden:\n:caption: Reference\n\napi/index\n```")
    return "\n\n".join(out)


def stamp(cells, shash):
    """The kept-output stamp of a prepared notebook: its code cells as executed and the package's source hash."""
    h = hashlib.sha256(shash.encode())
    for c in cells:
        if c["cell_type"] == "code":
            h.update(b"\0" + _lines(c["source"]).encode())
    return h.hexdigest()


def process_notebook(src_path, dst_path, shash, is_index=False, stamps=None):
    """Prepare one notebook for the site. Returns True if it shows kept outputs (and is not to be executed)."""
    nb = json.loads(src_path.read_text(encoding="utf-8"))
    shash = notebook_hash(nb, shash)
    cells = [k for c in nb["cells"] for k in process_cell(c, outputs=True)]   # the stamp reads the code alone
    name = src_path.relative_to(NBS).with_suffix("").as_posix()
    kept = name in KEEP and stamps is not None and stamps.get(name) == stamp(cells, shash)
    if not kept:                  # an unstamped or stale chapter runs from scratch, as every other notebook
        for c in cells:
            if c["cell_type"] == "code":
                c["outputs"] = []
    # hidden first cell: the package's source hash (invalidates the execution cache when the package changes)
    cells.insert(0, {"cell_type": "code", "execution_count": None, "metadata": {"tags": ["remove-cell"]},
                     "outputs": [], "source": f"# rbf_bayes sources sha256 {shash}"})
    if is_index:
        cells.append({"cell_type": "markdown", "metadata": {}, "source": nav_toctrees()})
    nb["cells"] = cells
    nb["metadata"] = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                      "language_info": {"name": "python"}}
    nb.setdefault("nbformat", 4)
    nb["nbformat_minor"] = max(nb.get("nbformat_minor", 5), 5)
    for i, c in enumerate(nb["cells"]):
        c["id"] = f"c{i:03d}"
    dst_path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    if not dst_path.exists() or dst_path.read_text(encoding="utf-8") != text:   # keep mtimes of unchanged pages
        dst_path.write_text(text, encoding="utf-8")
    return kept


def module_notebooks():
    """module -> the notebook that exports it (its `#| default_exp`)."""
    out = {}
    for p in sorted(NBS.rglob("*.ipynb")):
        for c in json.loads(p.read_text(encoding="utf-8"))["cells"]:
            m = re.search(r"^#\|\s*default_exp\s+(\S+)", _lines(c["source"]), re.M)
            if c["cell_type"] == "code" and m:
                out[m.group(1)] = p.relative_to(NBS).with_suffix("").as_posix()
    return out


def api_pages():
    import importlib
    nbs = module_notebooks()
    top = importlib.import_module("rbf_bayes")
    where = {n: getattr(top, n).__module__ for n in top.__all__}
    lines = [f"- {{py:obj}}`{n} <{where[n]}.{n}>` (from `{where[n]}`)" for n in top.__all__]
    pages = {"index": "# API reference\n\nEvery name a module exports (its `__all__`), with its signature and the "
                      "parameter comments (docments) of the notebook that defines it. The notebooks hold the "
                      "derivations; these entries are the reference.\n\n```{toctree}\n:maxdepth: 1\n\n"
                      + "\n".join(f"rbf_bayes.{m}" for m in ["__init__"] + PUBLIC_MODULES) + "\n```\n"}
    pages["rbf_bayes.__init__"] = ("# rbf_bayes\n\nThe names `import rbf_bayes` gives (`rbf_bayes.__all__`); each is "
                                   "documented with the module that defines it.\n\n" + "\n".join(lines) + "\n")
    for m in PUBLIC_MODULES:
        nb = nbs.get(m)
        src = f"Derived, implemented and checked in [{nb}](../{nb}.ipynb).\n\n" if nb else ""
        mod = importlib.import_module(f"rbf_bayes.{m}")
        data = []                  # exported constants: automodule leaves out data without a docstring
        for n in mod.__all__:
            v = getattr(mod, n)
            if not (callable(v) or inspect.ismodule(v)):
                shown = "" if isinstance(v, Path) or len(repr(v)) > 100 else f"\n   :value: {v!r}"
                data.append(f".. py:data:: {n}\n   :type: {type(v).__name__}{shown}\n\n"
                            f"   Exported by ``rbf_bayes.{m}``; its meaning is derived in {nb or 'the module'}.")
        consts = ("\n## Constants\n\n```{eval-rst}\n" + "\n\n".join(data) + "\n```\n") if data else ""
        pages[f"rbf_bayes.{m}"] = (f"# rbf_bayes.{m}\n\n{src}```{{eval-rst}}\n.. automodule:: rbf_bayes.{m}\n"
                                   "   :members:\n   :undoc-members:\n   :show-inheritance:\n```\n" + consts)
    return pages


def prepare(shash, use_kept=True):
    """Fill _site/src from nbs/. Returns the notebooks that show kept outputs (not executed)."""
    docs_in_nav = {d for _, ds in NAV for d in ds} | {"index"}
    found = {p.relative_to(NBS).with_suffix("").as_posix() for p in NBS.rglob("*.ipynb")
             if ".ipynb_checkpoints" not in p.parts}
    missing, extra = sorted(found - docs_in_nav), sorted(docs_in_nav - found)
    if missing or extra:
        raise SystemExit(f"tools/build_docs.py NAV is out of date: notebooks not in the book {missing}, "
                         f"entries without a notebook {extra}")
    SRC.mkdir(parents=True, exist_ok=True)
    stamps = json.loads(STAMPS.read_text(encoding="utf-8")) if use_kept and STAMPS.exists() else None
    kept = [name for name in sorted(found)
            if process_notebook(NBS / f"{name}.ipynb", SRC / f"{name}.ipynb", shash, is_index=(name == "index"),
                                stamps=stamps)]
    # files the notebooks read relative to themselves
    for extra_file in ["styles.css"]:
        if (NBS / extra_file).exists():
            shutil.copy2(NBS / extra_file, SRC / extra_file)
    (SRC / "api").mkdir(exist_ok=True)
    for name, text in api_pages().items():
        p = SRC / "api" / f"{name}.md"
        if not p.exists() or p.read_text(encoding="utf-8") != text:
            p.write_text(text, encoding="utf-8")
    # stale pages (a notebook renamed or removed) would stay in the book otherwise
    keep = {SRC / f"{n}.ipynb" for n in found} | {SRC / "api" / f"{n}.md" for n in api_pages()}
    for p in list(SRC.rglob("*.ipynb")) + list((SRC / "api").glob("*.md")):
        if p not in keep:
            p.unlink()
    return kept


def small_png(b64: str) -> str:
    "The PNG at most MAX_WIDTH wide, palette-quantised and optimised, as base64 (a few tens of KB)."
    from PIL import Image
    im = Image.open(io.BytesIO(base64.b64decode(b64))).convert("RGB")
    if im.width > MAX_WIDTH:
        im = im.resize((MAX_WIDTH, round(im.height * MAX_WIDTH / im.width)), Image.LANCZOS)
    out = io.BytesIO()
    im.quantize(COLOURS, method=Image.Quantize.MEDIANCUT).save(out, format="PNG", optimize=True)
    return base64.b64encode(out.getvalue()).decode("ascii")


def kept_output(o: dict) -> dict | None:
    "One executed output as a figure chapter keeps it (None: nothing of it is kept)."
    o = json.loads(json.dumps(o))
    if o.get("output_type") == "stream":
        return o
    if o.get("output_type") not in ("display_data", "execute_result"):
        return None
    data = {m: v for m, v in o.get("data", {}).items() if m not in DROP_MIME}
    if len(data) < len(o.get("data", {})) and set(data) <= {"text/plain"}:
        return None       # a widget with no static view (a progress bar): its text is its first state, "0%"
    if "image/png" in data:
        data = {"image/png": small_png(data["image/png"])}           # a figure is its picture alone
    if not data:
        return None
    return {**o, "data": data, "metadata": {}}


def write_kept_outputs(shash):
    """Copy this build's outputs of the KEEP notebooks (from the execution cache) into nbs/, clean them with
    nbdev_clean and record their stamps."""
    import nbformat
    from jupyter_cache import get_cache
    cache = get_cache(str(CACHE))
    stamps = json.loads(STAMPS.read_text(encoding="utf-8")) if STAMPS.exists() else {}
    for name in KEEP:
        src = NBS / f"{name}.ipynb"
        prepared = nbformat.read(SRC / f"{name}.ipynb", as_version=4)
        _, executed = cache.merge_match_into_notebook(prepared)      # KeyError: not executed in this build
        nb = json.loads(src.read_text(encoding="utf-8"))
        i = 1                                                         # cell 0 of the prepared notebook: the hash
        for c in nb["cells"]:
            shown = process_cell(c)
            if shown and shown[0]["cell_type"] == "code" and c["cell_type"] == "code":
                outs = [k for o in executed.cells[i].get("outputs", []) if (k := kept_output(o)) is not None]
                c["outputs"] = outs
            elif c["cell_type"] == "code":
                c["outputs"] = []                                     # slow cells and the module name: not run
            i += len(shown)
        src.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        subprocess.run(["nbdev_clean", "--fname", str(src)], cwd=ROOT, check=True)
        nb = json.loads(src.read_text(encoding="utf-8"))
        cells = [k for c in nb["cells"] for k in process_cell(c)]
        stamps[name] = stamp(cells, notebook_hash(nb, shash))
        print(f"kept outputs written: nbs/{name}.ipynb ({src.stat().st_size // 1024} KiB)")
    STAMPS.write_text(json.dumps(dict(sorted(stamps.items())), indent=1) + "\n", encoding="utf-8")


def _execute_into_cache(path: str) -> tuple[str, float, str | None]:
    """Execute one prepared notebook and store it in the execution cache, as myst-nb's cache mode does (same cache,
    same working directory, same options), unless the cache holds it. Returns (path, seconds, traceback or None)."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.executors.utils import single_nb_execution

    cache = get_cache(str(CACHE))
    nb = nbformat.read(path, as_version=4)
    with contextlib.suppress(KeyError):
        cache.match_cache_notebook(nb)
        return path, 0.0, None
    stage = cache.add_nb_to_project(path)
    for attempt in range(3):
        # a kernel that fails to start is retried: kernels started side by side pick their ports at random and, rarely,
        # the same one (CI, stop 55: 'Address already in use' in the kernel, then "Kernel didn't respond in 60
        # seconds" here); no cell has run when this happens, so the retry executes the same notebook
        try:
            r = single_nb_execution(nb, cwd=str(Path(path).parent), timeout=3600, allow_errors=False,
                                    meta_override=True)
            break
        except RuntimeError as e:
            if "Kernel didn't respond" not in str(e) and "Kernel died" not in str(e) or attempt == 2:
                raise
            print(f"{path}: the kernel did not start ({e}); starting another", file=sys.stderr)
            nb = nbformat.read(path, as_version=4)
    if r.err is not None:
        return path, r.time, r.exc_string
    cache.cache_notebook_bundle(CacheBundleIn(nb, stage.uri, data={"execution_seconds": r.time}),
                                check_validity=False, overwrite=True)
    return path, r.time, None


def pre_execute(jobs: int, skip=()) -> int:
    """Run every notebook of the site into the execution cache, `jobs` at a time from one queue, the experiments
    first (the longest), then the rest by size. Returns the number that failed (each is printed with its traceback)."""
    paths = sorted((p for p in SRC.rglob("*.ipynb") if p.relative_to(SRC).with_suffix("").as_posix() not in skip),
                   key=lambda p: (p.parent.name != "experiments", -p.stat().st_size))
    failed, total, t0 = 0, 0.0, time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        for path, secs, tb in ex.map(_execute_into_cache, [str(p) for p in paths]):
            total += secs
            if tb is not None:
                failed += 1
                print(f"{Path(path).relative_to(SRC)} failed after {secs:.0f} s:\n{tb}", file=sys.stderr)
    print(f"notebooks executed in {time.perf_counter() - t0:.0f} s ({total:.0f} s of execution, {jobs} at a time)")
    return failed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fresh", action="store_true", help="empty the execution cache first")
    ap.add_argument("--no-exec", action="store_true", help="render without executing the notebooks")
    ap.add_argument("--keep-outputs", action="store_true",
                    help="execute the figure chapters (KEEP) and write their outputs and stamps into nbs/")
    ap.add_argument("-j", "--jobs", default="auto",
                    help="notebooks executed at a time, and sphinx-build's parallel jobs (default: one per core)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    if a.fresh and CACHE.exists():
        shutil.rmtree(CACHE)
    if not a.no_exec:
        # create the execution cache (directory and database) now: on a fresh checkout sphinx's parallel readers
        # otherwise race to create it (FileExistsError, seen once in CI)
        from jupyter_cache import get_cache
        get_cache(str(CACHE)).list_cache_records()
    env = dict(os.environ)
    env["RBF_DOCS_EXECUTE"] = "off" if a.no_exec else "cache"
    env["RBF_DOCS_CACHE"] = str(CACHE)
    shared = ROOT.parent / "shared" / "data"
    if "RBF_BAYES_TREMOR_DIR" not in env and (shared / "tremor_train.csv").is_file():
        env["RBF_BAYES_TREMOR_DIR"] = str(shared)
    env.pop("MPLBACKEND", None)   # the kernel's inline backend: plt.show() puts each figure on the page
    found = 'RBF_BAYES_TREMOR_DIR' in env
    shash = (source_hash(), source_hash(f" tremor={found}"))   # (for every notebook, for those that read tremor)
    kept = prepare(shash, use_kept=not a.keep_outputs)
    stale = [n for n in KEEP if n not in kept]
    if kept:
        print(f"kept outputs shown, not executed: {', '.join(kept)}")
    if stale and not a.keep_outputs and not a.no_exec:
        print(f"kept outputs stale (executed in this build): {', '.join(stale)}; "
              "`python tools/build_docs.py --keep-outputs` refreshes them")
    env["RBF_DOCS_KEPT"] = ",".join(f"{n}.ipynb" for n in kept)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "docs"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if not a.no_exec:
        jobs = (os.cpu_count() or 1) if a.jobs == "auto" else int(a.jobs)
        os.environ.clear()
        os.environ.update(env)   # the kernels start with the environment the sphinx process gets
        if jobs > 1:   # kernels side by side: one BLAS thread each (OpenBLAS's threads spin while they wait)
            os.environ.update({v: "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
        if pre_execute(jobs, skip=kept):
            print(f"docs build FAILED after {time.perf_counter() - t0:.0f} s: a notebook failed", file=sys.stderr)
            return 1
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(ROOT / "docs"), "-W", "--keep-going",
           "-j", a.jobs, "-q", str(SRC), str(OUT), "-d", str(SITE / "doctrees")]
    r = subprocess.run(cmd, cwd=ROOT, env=env)
    dt = time.perf_counter() - t0
    if r.returncode:
        print(f"docs build FAILED after {dt:.0f} s (sphinx-build exit {r.returncode})", file=sys.stderr)
        return r.returncode
    print(f"docs built in {dt:.0f} s: open {OUT / 'index.html'}")
    if a.keep_outputs and not a.no_exec:
        write_kept_outputs(shash)
    return 0


if __name__ == "__main__":
    sys.exit(main())

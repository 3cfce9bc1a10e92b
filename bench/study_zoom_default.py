"""The zoom in the default, on the benchmark's protocols (issue 35, stop 100): a study, run by hand.

    python bench/study_zoom_default.py --cases robot friedman2 --configs default zoom gp --out zd.jsonl
    python bench/study_zoom_default.py --cases boston --configs zoom --splits 0 1 2 --out zd.jsonl
    python bench/study_zoom_default.py --summary zd.jsonl            # the summary of the rows kept so far

"zoom" is `RJMCMCRegressor(random_state=s)` (bench_defaults' "default": both fits, the plain model's and the
products', stacked) with a share `--zoom` (0.3) of every learned-scale step a zoom about a data point of sd
`--zoom-step` (1.0) (`RJConfig.scale_zoom`, `05d_learned_basis`, "A zoom about a data point"; the study sets both in
the configuration the estimator builds, `estimators._rj_config`, for both fits: the zooms' step is no estimator
argument; the share is `RJMCMCRegressor(scale_zoom=...)` since stop 102). Every other configuration is
bench_defaults'. Each (case, split, configuration) is one call of
`bench_defaults.run`, its row appended to --out as a JSON line as soon as it is done; rows already in --out are not
run again (a stopped study resumes). At the end (or with --summary alone) `bench_defaults`' summary of the rows in
--out, against the GP on the same splits.

Since stop 101 the default zooms (`estimators.SCALE_ZOOM` 0.3, `ZOOM_STEP` 1.0): "default" is now the same fit as
"zoom" at its defaults, and "zoom" with `--zoom 0` is the default as it was before (the rows of stops 100-101, in
exp8_benchmarks, were measured before the change, "default" without zooms).
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_defaults as B  # noqa: E402
from study_scale_zoom import configured  # noqa: E402


def zoomed(share, step):
    "bench_defaults' default with a share `share` of the learned scales' steps zooms of sd `step`, in both fits."
    default = B.CONFIGS["default"]

    def fit(*args, **kw):
        with configured(scale_zoom=share, zoom_step=step):
            return default(*args, **kw)
    return fit


def read(path):
    "The rows kept in path (none if it does not exist)."
    if path is None or not path.exists(): return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=["robot", "friedman2", "friedman1", "friedman3", "boston"])
    ap.add_argument("--configs", nargs="*", default=["default", "zoom", "gp"])
    ap.add_argument("--splits", type=int, nargs="*", default=None, help="only these splits (seeds); default: all")
    ap.add_argument("--zoom", type=float, default=0.3, help="the share of the scale steps that are zooms")
    ap.add_argument("--zoom-step", type=float, default=1.0, help="the zooms' sd of the change of log s")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--summary", type=Path, default=None, help="print the summary of these rows and stop")
    a = ap.parse_args(argv)
    if a.summary is not None:
        B.print_summary(B.summarise(read(a.summary)))
        return
    B.CONFIGS["zoom"] = zoomed(a.zoom, a.zoom_step)
    unknown = [c for c in a.configs if c not in B.CONFIGS] + [c for c in a.cases if c not in B.CASES]
    if unknown: raise SystemExit(f"unknown configuration(s) or case(s) {unknown}")
    done = {(r["case"], r["split"], r["config"]) for r in read(a.out)}
    for case in a.cases:
        n = 10 if case in ("boston", "sinc") else 5
        for s in a.splits if a.splits is not None else range(n):
            for name in a.configs:
                if (case, s, name) in done: continue
                rows = B.run([case], [name], log=lambda t: print(t, flush=True), n_splits=s + 1, splits=[s],
                             keep_models=True)
                for r in rows:
                    m = r.pop("model"); r.pop("pred")
                    r["zoom_acceptance"] = [getattr(f.trace_.meta, "zoom_acceptance", None)
                                            for f in (m, getattr(m, "other_fit_", None)) if hasattr(f, "trace_")]
                    r.update(zoom=a.zoom if name == "zoom" else None, zoom_step=a.zoom_step if name == "zoom" else None)
                    if a.out:
                        with open(a.out, "a") as f:
                            f.write(json.dumps(r, default=float) + "\n")
    rows = read(a.out)
    if rows: B.print_summary(B.summarise(rows))


if __name__ == "__main__":
    main()

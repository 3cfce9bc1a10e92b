"""BMARS's prior on the number of bases (issue 35, item 4: the package's other estimators where their defaults lose to
a peer): `BMARSRegressor()` with the paper's lambda ~ Ga(10, 10) against other Gamma priors on lambda and other
coefficient variances, on bench_defaults' protocols, next to pyBASS and the ARD GP.

    python bench/study_bmars_prior.py --cases sinc --configs bmars lam1 nb10 bass gp
    python bench/study_bmars_prior.py --cases friedman1 friedman2 friedman3 robot boston --configs bmars lam1 nb10 gp
    python bench/study_bmars_prior.py --cases sinc --configs v10 v1 v1000 nmin5 --out bp.jsonl
    python bench/study_bmars_prior.py --cases sinc friedman1 friedman2 friedman3 robot boston --configs bmars joint
    python bench/study_bmars_prior.py --summary bp.jsonl              # the summary of the rows kept so far

k | lambda ~ Poisson(lambda) truncated to k_max, lambda ~ Ga(shape, rate) (`10_bmars`, "Prior"); the marginal prior on k
is negative binomial, NB(shape, rate / (1 + rate)) before the truncation. Configurations (every other setting is the
estimator's default; "bmars" is `BMARSRegressor(random_state=s)` itself):
- `paper`: lambda ~ Ga(10, 10), the paper's (mean 1, sd 0.32: "we expect just a few basis functions"; k's prior odds
  fall by a factor (k + 1) / lambda per basis);
- `lam1`: lambda ~ Ga(1, 0.1), exponential with mean 10: k's prior is geometric, P(k) proportional to (1 / 1.1)^k, a
  tenth of a nat per basis up to k_max = 50, so the marginal likelihood alone prices a basis;
- `nb10`: lambda ~ Ga(10, 1): k ~ NB(10, 1/2), the reversible-jump regressor's prior on k (`01_priors`);
- `v10`, `v1`, `v1000`: the coefficients' prior variance v (a | sigma^2 ~ N(0, sigma^2 v I); the default 100);
- `nmin5`: a basis must be non-zero at 5 or more training points (the default 1; pyBASS's npart is min(20, n / 10));
- `joint`: `lam1` with k <= k_max imposed on the joint p(k, lambda) (`BMARSPrior(k_prior="joint")`, stop 103): k's prior
  is the truncated geometric itself and lambda | k ~ Ga(1 + k, 1.1) a Gibbs draw, where `lam1` truncates Poisson(k |
  lambda) for each lambda (lambda's step an independence MH step, slow in its tail when k sits near k_max).
Each row is appended to --out as a JSON line as soon as it is done; rows already there are not run again.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_defaults as B  # noqa: E402
from study_zoom_default import read  # noqa: E402  (the JSON-lines rows kept so far)

from rbf_bayes.bmars import BMARSPrior  # noqa: E402

PRIORS = {"paper": dict(lambda_shape=10.0, lambda_rate=10.0), "lam1": dict(lambda_shape=1.0, lambda_rate=0.1),
          "nb10": dict(lambda_shape=10.0, lambda_rate=1.0), "v10": dict(coef_var=10.0), "v1": dict(coef_var=1.0),
          "v1000": dict(coef_var=1000.0), "nmin5": dict(n_min=5),
          "joint": dict(lambda_shape=1.0, lambda_rate=0.1, k_prior="joint")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=["sinc", "friedman1", "friedman2", "friedman3", "robot", "boston"])
    ap.add_argument("--configs", nargs="*", default=["bmars", "paper", "lam1", "gp"])
    ap.add_argument("--splits", type=int, nargs="*", default=None, help="only these splits (seeds); default: all")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--summary", type=Path, default=None, help="print the summary of these rows and stop")
    a = ap.parse_args(argv)
    if a.summary is not None:
        B.print_summary(B.summarise(read(a.summary)))
        return
    for name, kw in PRIORS.items():
        B.CONFIGS[name] = B.bmars(prior=BMARSPrior(**kw))
    unknown = [c for c in a.configs if c not in B.CONFIGS] + [c for c in a.cases if c not in B.CASES]
    if unknown: raise SystemExit(f"unknown configuration(s) or case(s) {unknown}")
    done, got = {(r["case"], r["split"], r["config"]) for r in read(a.out)}, []
    for case in a.cases:
        n = 10 if case in ("boston", "sinc") else 5
        for s in a.splits if a.splits is not None else range(n):
            for name in a.configs:
                if (case, s, name) in done: continue
                for r in B.run([case], [name], log=lambda t: print(t, flush=True), n_splits=s + 1, splits=[s]):
                    got.append(r)
                    if a.out:
                        with open(a.out, "a") as f:
                            f.write(json.dumps(r, default=float) + "\n")
    rows = read(a.out) if a.out else got
    if rows: B.print_summary(B.summarise(rows))


if __name__ == "__main__":
    main()

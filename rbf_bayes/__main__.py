"""`python -m rbf_bayes`: the `rbf-bayes` command."""
from rbf_bayes.cli import main

raise SystemExit(main())

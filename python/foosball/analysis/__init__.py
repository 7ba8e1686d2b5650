"""Analysis of recorded matches: what happened (`match`, pure) and the HTML report with its
plots (`report`, matplotlib: the `report` extra)."""

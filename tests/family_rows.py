"""A small CSV with a column of each kind the transforms read, and a config with a feature of each transform family
over it: for tests that run every family through the job (tests/pipelines/test_reuse_key_completeness.py,
tests/pipelines/test_deferred_schema.py)."""

import numpy as np

ROWS = 120


def write_family_csv(folder, columns=("n", "i", "c", "h", "t", "d", "g", "w", "y"), float_i=False, seed=11,
                     c_weights=(.4, .3, .15, .1, .05)):
    """A small CSV with a column of each kind the transforms read (seeded, so every call writes the same rows);
    `c_weights` only changes column c's values (the draws are as many)."""
    rng = np.random.default_rng(seed)
    words = ["Red", "green", "BLUE", "red", "Green", "x-y", "blue."]
    values = {
        "n": [f"{v:.3f}" for v in rng.normal(10, 3, ROWS)],
        "i": [f"{v}.5" if float_i else str(v) for v in rng.integers(0, 50, ROWS)],
        "c": [rng.choice(["a", "b", "c", "d", "e"], p=list(c_weights)) for _ in range(ROWS)],
        "h": [rng.choice(["p", "q", "r", "s"]) for _ in range(ROWS)],
        "t": [" ".join(rng.choice(words, rng.integers(1, 5))) for _ in range(ROWS)],
        "d": [f"2024-0{rng.integers(1, 10)}-1{rng.integers(0, 10)}T{rng.integers(10, 24)}:30:00" for _ in range(ROWS)],
        "g": [rng.choice(["k1", "k2"]) for _ in range(ROWS)],
        "w": [f"{v:.2f}" for v in rng.uniform(0.5, 2, ROWS)],
        "y": [rng.choice(["yes", "no"]) for _ in range(ROWS)],
    }
    values["n"][3] = "NA"  # a token input.na_values may make missing
    values["n"][5] = "inf"  # input.nonfinite decides
    path = folder / "rows.csv"
    with open(path, "w") as handle:
        handle.write(",".join(columns) + "\n")
        for row in range(ROWS):
            handle.write(",".join(values[column][row] for column in columns) + "\n")
    return path


def family_config(folder, out) -> dict:
    """Every transform family over `write_family_csv`'s columns (`folder`), written to `out`."""
    return {
        "name": "reuse",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True,
                  "na_values": [], "nonfinite": "missing"},
        "features": {
            "n": {"transform": "z_score", "fill": "mean"},
            "i": {"transform": "bucketize", "num_buckets": 3},
            "c": {"transform": "vocabulary", "num_oov_buckets": 1},
            "h": {"transform": "hash", "hash_buckets": 8},
            "t": {"transform": "text_vocabulary"},
            "d": {"transform": "datetime", "parts": ["hour", "day"]},
            "w": {"transform": "scale_by_min_max", "range": [0, 1]},
        },
        "label": {"column": "y", "map": {"yes": 1, "no": 0}},
        "output": {"dir": str(out), "splits": {"train": 1.0}, "shards": 1, "max_bad_fraction": 0.1},
    }


def every_family_config(folder) -> dict:
    """The family rows written to `folder` and the config of every transform family over them, writing to
    `folder`/out."""
    write_family_csv(folder)
    return family_config(folder, folder / "out")

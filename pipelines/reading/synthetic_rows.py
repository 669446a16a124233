"""A deterministic census-like dataset, so the main job runs on a fresh machine with nothing downloaded.

Rows are made in blocks of `BLOCK_ROWS`, each from its own generator seeded with (seed, block), so any
row range can be made on its own and the same (seed, row) always gives the same values, whichever
worker makes it.

Columns: numeric (`age`, `hours_per_week`, `fnlwgt`, `capital_gain` with missing values), categorical
with long tails so that `top_k`, frequency thresholds and OOV buckets matter (`workclass`,
`education`, `occupation` with missing values, `native_country` with hundreds of rare values), and a
`label` that depends on the features, so a model can learn it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

BLOCK_ROWS = 10_000

COLUMNS = {
    "age": "int",
    "workclass": "bytes",
    "education": "bytes",
    "occupation": "bytes",
    "hours_per_week": "int",
    "fnlwgt": "float",
    "capital_gain": "float",
    "native_country": "bytes",
    "label": "bytes",
}

_WORKCLASS = ["Private", "Self-emp-not-inc", "Local-gov", "State-gov", "Self-emp-inc", "Federal-gov", "Without-pay"]
_EDUCATION = ["HS-grad", "Some-college", "Bachelors", "Masters", "Assoc-voc", "11th", "Assoc-acdm", "10th",
              "7th-8th", "Prof-school", "9th", "12th", "Doctorate", "5th-6th", "1st-4th", "Preschool"]
_OCCUPATION = ["Prof-specialty", "Craft-repair", "Exec-managerial", "Adm-clerical", "Sales", "Other-service",
               "Machine-op-inspct", "Transport-moving", "Handlers-cleaners", "Farming-fishing", "Tech-support",
               "Protective-serv", "Priv-house-serv", "Armed-Forces"]
_COUNTRIES = ["United-States", "Mexico", "Philippines", "Germany", "Canada", "India"] + [
    f"Country-{i:03d}" for i in range(400)
]


def _zipf_choice(rng: np.random.Generator, values: list[str], size: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, len(values) + 1) ** exponent
    return rng.choice(np.array(values, dtype=object), size=size, p=weights / weights.sum())


def _block(seed: int, block: int) -> pa.Table:
    rng = np.random.default_rng([seed, block])
    n = BLOCK_ROWS
    age = np.clip(rng.normal(39, 13, n), 17, 90).astype(np.int64)
    hours = np.clip(rng.normal(40, 12, n), 1, 99).astype(np.int64)
    education = _zipf_choice(rng, _EDUCATION, n, 1.1)
    workclass = _zipf_choice(rng, _WORKCLASS, n, 1.6)
    occupation = _zipf_choice(rng, _OCCUPATION, n, 0.8)
    occupation_missing = rng.random(n) < 0.05
    country = _zipf_choice(rng, _COUNTRIES, n, 1.3)
    fnlwgt = rng.lognormal(12, 0.5, n).astype(np.float32)
    gain = np.where(rng.random(n) < 0.1, rng.exponential(5000, n), 0.0).astype(np.float32)
    gain_missing = rng.random(n) < 0.08
    senior = np.isin(education, ["Bachelors", "Masters", "Prof-school", "Doctorate"])
    logit = -6.0 + 0.05 * age + 0.04 * hours + 1.5 * senior + 0.0002 * gain
    label = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), ">50K", "<=50K").astype(object)
    return pa.table(
        {
            "age": age,
            "workclass": pa.array(workclass, pa.binary()),
            "education": pa.array(education, pa.binary()),
            "occupation": pa.array(occupation, pa.binary(), mask=occupation_missing),
            "hours_per_week": hours,
            "fnlwgt": fnlwgt,
            "capital_gain": pa.array(gain, pa.float32(), mask=gain_missing),
            "native_country": pa.array(country, pa.binary()),
            "label": pa.array(label, pa.binary()),
        }
    )


def synthetic_rows(seed: int, start: int, stop: int, chunk_rows: int = BLOCK_ROWS):
    """Yields `(first_row, table)` for rows [start, stop), at most `chunk_rows` rows per table."""
    row = start
    while row < stop:
        block, offset = divmod(row, BLOCK_ROWS)
        table = _block(seed, block)
        take = min(BLOCK_ROWS - offset, stop - row, chunk_rows)
        yield row, table.slice(offset, take)
        row += take

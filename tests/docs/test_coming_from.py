"""docs/coming-from.md writes one job three ways (a tf.Transform preprocessing_fn on Beam, a Keras FeatureSpace, a
skewless config): each way gives the values pandas computes from the same 16 rows, and from a 17th row the analysis
did not see, and they differ only where the page's table says (FeatureSpace's vocabulary ids start at 1, its id 0
being the OOV id)."""

import numpy as np
import pandas as pd
import pytest

from doc_blocks import blocks
from example_job import REPO

PAGE = REPO / "docs" / "coming-from.md"
WAYS = ("tft", "featurespace", "skewless")
NEW = {"age": 40, "city": "Nairobi"}  # the row each way transforms after its analysis


@pytest.fixture(scope="module")
def results(page_run):
    folder, done = page_run(PAGE)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    raw = pd.read_csv(folder / "people.csv")
    ways = {name: pd.read_csv(folder / f"{name}.csv") for name in WAYS}
    assert all(len(way) == len(raw) + 1 for way in ways.values()), {name: len(way) for name, way in ways.items()}
    return raw, ways, done.stdout


def _vocabulary_ids(analyzed: pd.Series, values: pd.Series, first: int, oov: int) -> pd.Series:
    """Ids in tf.Transform's order, computed independently: most frequent first, ties by value descending;
    numbered from `first`; a value the analysis did not see gets `oov`."""
    counts = analyzed.value_counts()
    order = sorted(counts.index, key=lambda value: (counts[value], value.encode()), reverse=True)
    return values.map({value: first + index for index, value in enumerate(order)}).fillna(oov).astype(int)


def _with_new_row(raw: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([raw, pd.DataFrame([NEW])], ignore_index=True)


def test_the_data_has_ties_so_their_order_is_tested(results):
    raw, _, _ = results
    assert (raw["city"].value_counts() == 2).sum() >= 2


@pytest.mark.parametrize("way", WAYS)
def test_the_z_score_is_the_population_z_score(results, way):
    raw, ways, _ = results
    expected = (_with_new_row(raw)["age"] - raw["age"].mean()) / raw["age"].std(ddof=0)
    np.testing.assert_allclose(ways[way]["age"], expected, rtol=1e-6, atol=1e-6)


def test_the_three_z_scores_agree_within_a_float32_rounding(results):
    _, ways, _ = results
    tft_age = ways["tft"]["age"].to_numpy("float32")
    for way in ("featurespace", "skewless"):
        np.testing.assert_array_max_ulp(ways[way]["age"].to_numpy("float32"), tft_age, maxulp=1)


# tf.Transform and skewless: the vocabulary from 0, the one OOV bucket after it; FeatureSpace: OOV 0, then the vocabulary
@pytest.mark.parametrize("way, oov_first", [("tft", False), ("skewless", False), ("featurespace", True)])
def test_the_vocabulary_ids_are_tf_transforms_and_featurespace_reserves_0_for_oov(results, way, oov_first):
    raw, ways, _ = results
    size = raw["city"].nunique()
    first, oov = (1, 0) if oov_first else (0, size)
    expected = _vocabulary_ids(raw["city"], _with_new_row(raw)["city"], first, oov)
    assert expected.iloc[-1] == oov
    np.testing.assert_array_equal(ways[way]["city"], expected)


def test_the_table_the_page_shows_is_what_its_code_prints(results):
    *_, printed = results
    [shown] = [block for block in blocks(PAGE) if block.language == "text"]
    assert shown.code in printed, printed[-3000:]

"""`transform: datetime`: calendar parts of ISO-8601 text and epoch seconds, computed in the graph, against pandas
on the same values (time zones with daylight saving included); serving on the raw text equal to the written
rows; text that does not parse quarantined with its reason in the job and refused at serving; the native
preprocessor refusing it with its reason; bad option combinations refused in one line."""

import zoneinfo

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from example_job import assert_feature_refused
from rich_rows import served_rows, write_csv, written_rows
from run_output import quarantined
from skewless.errors import ConfigError

ROWS = 600
PARTS = ["year", "month", "day", "day_of_week", "day_of_year", "hour", "minute", "days"]
BAD = {3: "2024-02-30T10:00:00Z", 7: "yesterday", 11: "2024-06-01T24:00"}  # id: text the graph cannot read


def _timestamps(rng):
    """Instants 1995-2035 written the ways ISO-8601 allows: Z, offsets, naive, date only, fractions, a space."""
    seconds = rng.integers(788918400, 2082758400, ROWS)  # 1995-01-01 .. 2036-01-01
    # around the 2024 daylight saving changes of Paris and New York, to the minute
    seconds[:40] = 1711846800 + rng.integers(-7200, 7200, 40)
    seconds[40:80] = 1730595600 + rng.integers(-10800, 10800, 40)
    texts = []
    for i, second in enumerate(seconds):
        moment = pd.Timestamp(int(second), unit="s", tz="UTC")
        offset = pd.Timedelta(minutes=int(rng.choice([-330, -300, 0, 60, 345, 600])))
        shown = (moment + offset).strftime("%Y-%m-%dT%H:%M:%S")
        sign, span = ("-" if offset < pd.Timedelta(0) else "+"), abs(offset)
        zone = f"{sign}{span.seconds // 3600:02d}:{span.seconds % 3600 // 60:02d}"
        texts.append([moment.strftime("%Y-%m-%dT%H:%M:%SZ"), shown + zone, shown.replace("T", " ")[:16],
                      shown[:10], shown + ".250Z".replace("Z", zone)][i % 5])
    for row, text in BAD.items():
        texts[row] = text
    return texts, rng.integers(-2208988800, 4102444800, ROWS).tolist()  # epoch seconds 1900-2100


@pytest.fixture(scope="module")
def datetime_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(2024)
    folder = tmp_path_factory.mktemp("datetime")
    texts, epochs = _timestamps(rng)
    raw = {"id": list(range(ROWS)), "at": texts, "epoch": epochs, "label": rng.integers(0, 2, ROWS).tolist()}
    write_csv(folder / "rows.csv", raw)
    config = {"name": "datetime", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
              "features": {"id": {"transform": "passthrough"},
                           "at": {"transform": "datetime", "parts": PARTS, "timezone": "Europe/Paris"},
                           "epoch": {"transform": "datetime", "parts": PARTS, "cyclical": True,
                                     "timezone": "America/New_York"}},
              "label": {"column": "label"}, "output": {"dir": str(folder / "out"), "shards": 2}}
    return run(config), raw


def _wall_clock(texts_or_seconds, timezone: str) -> pd.DatetimeIndex:
    """pandas' reading: instants (an offset, or epoch seconds) shown on `timezone`'s clock, naive text as written.

    The zone is a zoneinfo object: pandas would take a name through pytz, whose rules stop at 2037.
    """
    timezone = zoneinfo.ZoneInfo(timezone)
    if isinstance(texts_or_seconds[0], int):
        return pd.to_datetime(texts_or_seconds, unit="s", utc=True).tz_convert(timezone).tz_localize(None)
    stamps = [pd.Timestamp(text) for text in texts_or_seconds]
    return pd.DatetimeIndex([stamp.tz_convert(timezone).tz_localize(None) if stamp.tzinfo else stamp
                             for stamp in stamps])


def _expected(wall: pd.DatetimeIndex, cyclical: bool) -> dict:
    seconds = np.asarray((wall - pd.Timestamp("1970-01-01")) // pd.Timedelta(seconds=1))
    parts = {"": seconds, "year": wall.year, "month": wall.month, "day": wall.day, "day_of_week": wall.dayofweek,
             "day_of_year": wall.dayofyear, "hour": wall.hour, "minute": wall.minute, "days": seconds // 86400}
    expected = {part: np.asarray(values, np.int64) for part, values in parts.items()}
    if cyclical:
        cycles = {"month": (wall.month - 1, 12), "day": (wall.day - 1, wall.days_in_month),
                  "day_of_week": (wall.dayofweek, 7), "day_of_year": (wall.dayofyear - 1, 365 + wall.is_leap_year),
                  "hour": (wall.hour, 24), "minute": (wall.minute, 60)}
        for part, (position, period) in cycles.items():
            angle = 2 * np.pi * np.asarray(position, np.float64) / np.asarray(period, np.float64)
            expected[f"{part}_sin"], expected[f"{part}_cos"] = np.sin(angle), np.cos(angle)
            del expected[part]
    return expected


def test_bad_timestamps_go_to_quarantine_with_their_reason(datetime_run):
    result, raw = datetime_run
    assert result.rows["quarantined"] == len(BAD) and sum(result.rows["written"].values()) == ROWS - len(BAD)
    reasons = quarantined(result.output_dir)
    assert sorted(reasons) == [row + 2 for row in BAD]  # CSV lines: the header is line 1
    for row, text in BAD.items():
        assert reasons[row + 2] == f"at: {text!r} is not an ISO-8601 date or time (YYYY-MM-DD[THH:MM[:SS[.f]]][Z|±HH[:MM]])"


@pytest.mark.parametrize("name, timezone, cyclical", [("at", "Europe/Paris", False),
                                                      ("epoch", "America/New_York", True)])
def test_written_parts_equal_pandas(datetime_run, name, timezone, cyclical):
    result, raw = datetime_run
    written = written_rows(result.output_dir)
    kept = [i for i in range(ROWS) if i not in BAD]
    assert written["id"] == kept
    expected = _expected(_wall_clock([raw[name][i] for i in kept], timezone), cyclical)
    assert set(expected) == {output.removeprefix(name).removeprefix("_") for output in written
                             if output == name or output.startswith(f"{name}_")}
    for part, values in expected.items():
        output = f"{name}_{part}" if part else name
        if values.dtype == np.float64:
            # float64 sin/cos rounded to float32: TensorFlow's and NumPy's float64 may differ in the last bit,
            # which rounding to float32 almost always hides
            np.testing.assert_allclose(written[output], values.astype(np.float32), rtol=0, atol=6e-8, err_msg=output)
        else:
            np.testing.assert_array_equal(written[output], values, err_msg=output)
    # the periodic parts are categories with their counts in the schema (one-hot or embedded by model_inputs)
    graph = tft.TFTransformOutput(result.graph_dir)
    buckets = {"month": 13, "day": 32, "day_of_week": 7, "day_of_year": 367, "hour": 24, "minute": 60}
    for part, count in buckets.items():
        if not cyclical:
            assert graph.num_buckets_for_transformed_feature(f"{name}_{part}") == count, part
            assert 0 <= min(written[f"{name}_{part}"]) and max(written[f"{name}_{part}"]) < count, part
    # daylight saving moves the wall clock: rows on both sides of a change are in the data
    hours = np.asarray(written["at_hour"][:80])
    assert len(set(hours)) > 4


def test_serving_equals_the_written_rows_and_refuses_bad_text(datetime_run):
    from skewless.layers import TransformLayer

    result, raw = datetime_run
    layer = TransformLayer(result.output_dir)
    kept = [i for i in range(ROWS) if i not in BAD]
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in kept]
    served, written = served_rows(layer, rows), written_rows(result.output_dir)
    outputs = [name for name in written if name.startswith(("at", "epoch"))]
    # at and its 8 parts; epoch, its year and days, and its 6 periodic parts as 12 sin/cos
    assert len(outputs) == 1 + len(PARTS) + 1 + 2 + 12
    for name in outputs:
        assert served[name] == written[name], name
    with pytest.raises(tf.errors.InvalidArgumentError, match="raw feature .{1,2}at.{1,2}: a value is not an ISO-8601"):
        served_rows(layer, [{"id": 0, "at": "yesterday", "epoch": 0}])
    # epoch 0 is an instant like any other: 1969-12-31 19:00 in New York
    first = served_rows(layer, [{"id": 0, "at": "2024-01-01", "epoch": 0}])
    assert first["epoch"] == [-5 * 3600] and first["epoch_year"] == [1969] and first["epoch_hour_cos"] == [
        float(np.float32(np.cos(2 * np.pi * 19 / 24)))]


def test_native_preprocessor_refuses_it_with_its_reason(datetime_run):
    from skewless.layers import check_preprocessor
    from skewless.transforms.datetime_parts import TRANSFORM

    result, raw = datetime_run
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(0, ROWS, 7) if i not in BAD]
    statuses = {f.name: (f.status, f.reason) for f in check_preprocessor(result.output_dir, rows=rows, sample=50).features}
    outputs = [name for name in statuses if name.startswith(("at", "epoch"))]
    # a part is named by the feature that writes it, with the reason datetime has no native layers
    expected = {name: TRANSFORM.native_reason if name in ("at", "epoch")
                else f"an output of feature {name.split('_')[0]!r}: {TRANSFORM.native_reason}" for name in outputs}
    assert len(outputs) == 24 and all(statuses[name] == ("unsupported", expected[name]) for name in outputs)


@pytest.mark.parametrize("feature, message", [
    ({"transform": "datetime"}, "transform datetime needs parts"),
    ({"transform": "datetime", "parts": ["hour", "hour"]}, "datetime parts must be distinct"),
    ({"transform": "datetime", "parts": ["week"]}, r"features\.x\.parts\.0: unknown value 'week'"),
    ({"transform": "datetime", "parts": ["hour"], "timezone": "Mars/Olympus"}, "timezone 'Mars/Olympus' is not an IANA"),
    ({"transform": "datetime", "parts": ["hour"], "fill": "mean"}, "fill mean of timestamps"),
    ({"transform": "datetime", "parts": ["hour"], "list": True}, "list only applies to transform"),
    ({"transform": "z_score", "timezone": "Europe/Paris"}, "timezone only applies to transform datetime, not z_score"),
])
def test_config_refuses_bad_combinations_in_one_line(tmp_path, feature, message):
    assert_feature_refused(tmp_path, feature, message)


def test_a_float_column_is_refused(tmp_path):
    from skewless.pipelines import run

    write_csv(tmp_path / "rows.csv", {"t": [1.7e9, 1.8e9], "y": [1, 2]})
    config = {"name": "t", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
              "features": {"t": {"transform": "datetime", "parts": ["hour"]}}, "output": {"dir": str(tmp_path / "o")}}
    with pytest.raises(ConfigError, match="transform datetime takes ISO-8601 text or integer epoch seconds"):
        run(config)

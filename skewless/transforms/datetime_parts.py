"""`transform: datetime`: calendar parts of ISO-8601 text or epoch seconds, computed in the graph.

Serving takes the raw text (or number) and the graph does the calendar arithmetic, so nothing outside the
graph prepares the column. Text without an offset is a wall-clock time in `timezone`; text with an offset
(`Z`, `+05:30`) and epoch seconds are instants, shown on `timezone`'s clock (its UTC offsets 1900-2100 from
the IANA database, a table in the graph). Every output describes that wall clock: `<name>` its seconds since
1970-01-01 00:00 (Unix time when `timezone` is UTC), `<name>_<part>` each chosen part, and with `cyclical`
the periodic parts as `<name>_<part>_sin` / `_cos`. A value that does not parse, or lies outside the years
0001-9999, sends its row to quarantine (`raw_check`, the same parser run on the raw column); at serving,
where no row can be set aside, it fails the request with an InvalidArgumentError naming the feature.
"""

from __future__ import annotations

import datetime
import functools
import math
import zoneinfo
from typing import Literal

import numpy as np
import pyarrow as pa
from pydantic import Field

from skewless.errors import ConfigError
from skewless.lazy_imports import lazy_import
from skewless.transforms.base import Option, Transform
from skewless.transforms.categorical import with_buckets

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
value_rules = lazy_import("skewless.value_rules")

PART_NAMES = ("year", "month", "day", "day_of_week", "day_of_year", "hour", "minute", "days")
# the parts `cyclical` turns into sin/cos pairs, each with its period (day: that month's days, day_of_year: that
# year's); year and days do not repeat
PERIODIC = ("month", "day", "day_of_week", "day_of_year", "hour", "minute")
# the periodic parts as numbers are categories: ids below these counts in the transformed schema, so a model
# one-hot encodes or embeds them (`model_inputs`)
BUCKETS = {"month": 13, "day": 32, "day_of_week": 7, "day_of_year": 367, "hour": 24, "minute": 60}
ISO_8601 = (r"(\d{4})-(\d{2})-(\d{2})"
            r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?")
# the offset of a text ISO_8601 matches, in groups of its own (a rewrite names groups \1-\9 only)
ZONE = r"^.{16}(?::\d{2}(?:\.\d+)?)?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)$"
# 0001-01-01T00:00:00 and 9999-12-31T23:59:59 as Unix time: the instants an epoch column may hold
FIRST_SECOND, LAST_SECOND = -62135596800, 253402300799
INT64_MIN = -(2**63)
DAY = 86400

PARTS = Option("parts", list[Literal[PART_NAMES]] | None, Field(default=None, min_length=1),
               f"the parts written as `<name>_<part>` (required): {', '.join(PART_NAMES)} (`days`: since 1970-01-01; "
               "`day_of_week`: Monday 0)")
CYCLICAL = Option("cyclical", bool, Field(default=False),
                  f"the periodic parts ({', '.join(PERIODIC)}) as `<name>_<part>_sin` and `_cos` of their angle in "
                  "their period, instead of the number")
TIMEZONE = Option("timezone", str, Field(default="UTC"),
                  "the IANA zone whose wall clock the parts describe; text without an offset is read as its time")


class Datetime(Transform):
    name = "datetime"
    doc = ("calendar parts of ISO-8601 text (`YYYY-MM-DD`, then optionally `THH:MM[:SS[.f]]` and `Z` or `±HH[:MM]`) or "
           "of integer epoch seconds, in the graph: `<name>` the wall clock's seconds since 1970 (int64), "
           "`<name>_<part>` int64 parts or float32 sin/cos; rows that do not parse go to quarantine")
    options = (PARTS, CYCLICAL, TIMEZONE)
    required = ("parts",)
    lists = False
    native_reason = "its calendar arithmetic (ISO-8601 parsing, time zones) has no Keras layers"
    report_options = ("parts",)

    def check(self, feature) -> str | None:
        if len(set(feature.parts)) != len(feature.parts):
            return "datetime parts must be distinct"
        if feature.timezone != "UTC":
            try:
                zoneinfo.ZoneInfo(feature.timezone)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                return f"timezone {feature.timezone!r} is not an IANA time zone (e.g. UTC, Europe/Paris)"
        if feature.fill in ("mean", "median"):
            return f"fill {feature.fill} of timestamps would average them as float32; give a default"
        return None

    def check_columns(self, name: str, feature, kinds: dict[str, str]) -> None:
        column = feature.raw_column(name)
        if kinds[column] == "float":
            raise ConfigError(f"features.{name}: transform datetime takes ISO-8601 text or integer epoch seconds; "
                              f"{column} holds floats, which float32 rounds to 128 s around 2024")

    def extra_outputs(self, name: str, feature) -> list[str]:
        return [output for part in feature.parts for output in _part_outputs(name, part, feature.cyclical)]

    def unit_scale_outputs(self, name: str, feature) -> list[str]:
        # sin and cos lie in [-1, 1]; seconds, year and days do not
        return [output for part in feature.parts if feature.cyclical and part in PERIODIC
                for output in _part_outputs(name, part, True)]

    def row_wise(self, feature) -> bool:
        return True  # integer parts of each value; sin and cos in float64 for that (`build`)

    def build(self, name: str, value, options: dict, vocabulary=None, columns=None) -> dict:
        valid, wall = wall_clock(value, options["timezone"])
        # the job quarantines such rows (`raw_check`); serving, where no row can be set aside, refuses the request
        wall = value_rules.refuse_where(wall, tf.logical_not(valid), f"raw feature {name!r}: a value is not an "
                                        "ISO-8601 date or time, or lies outside the years 0001-9999, which the job "
                                        "quarantines; got", raw=value)
        days = tf.math.floordiv(wall, DAY)
        year, month, day = _civil_from_days(days)
        second_of_day = wall - days * DAY
        day_of_year = days - _days_from_civil(year, tf.ones_like(year), tf.ones_like(year)) + 1
        leap = _is_leap(year)
        numbers = {"year": year, "month": month, "day": day, "day_of_week": tf.math.floormod(days + 3, 7),
                   "day_of_year": day_of_year, "hour": second_of_day // 3600, "minute": second_of_day // 60 % 60,
                   "days": days}
        # (position in the period from 0, period) of the periodic parts
        cycles = {"month": (month - 1, 12), "day": (day - 1, _days_in_month(year, month)),
                  "day_of_week": (numbers["day_of_week"], 7), "day_of_year": (day_of_year - 1, 365 + leap),
                  "hour": (numbers["hour"], 24), "minute": (numbers["minute"], 60)}
        outputs = {name: wall}
        for part in options["parts"]:
            if options["cyclical"] and part in PERIODIC:
                # float64, then float32: float32 sin/cos may round a value differently by its place in the
                # batch (SIMD lanes against the scalar tail), which would skew one served row against the batch
                position, period = cycles[part]
                angle = 2 * math.pi * tf.cast(position, tf.float64) / tf.cast(period, tf.float64)
                sin_name, cos_name = _part_outputs(name, part, True)
                outputs[sin_name] = tf.cast(tf.sin(angle), tf.float32)
                outputs[cos_name] = tf.cast(tf.cos(angle), tf.float32)
            else:
                output = numbers[part]
                outputs[f"{name}_{part}"] = with_buckets(output, BUCKETS[part]) if part in BUCKETS else output
        return outputs

    def raw_check(self, feature):
        """Rows whose value the graph cannot read: the graph's own parser, run on the raw column."""
        return _unreadable

    def probe_texts(self, count: int, rng) -> list[bytes]:
        """ISO-8601 texts 1900-2100, some dates alone, some times in UTC or at an offset."""
        days = rng.integers(-25567, 47482, size=count)  # 1900-01-01 .. 2099-12-31 as days since 1970
        seconds = rng.integers(0, 86400, size=count)
        stamps = (np.datetime64("1970-01-01T00:00:00") + days.astype("timedelta64[D]")
                  + seconds.astype("timedelta64[s]"))
        forms = rng.integers(3, size=count)
        return [(str(stamp)[:10] if form == 0 else str(stamp) + ("Z" if form == 1 else "+05:30")).encode()
                for stamp, form in zip(stamps, forms)]

    def run_fields(self, name: str, feature, graph) -> dict:
        return {"parts": feature.parts, "cyclical": feature.cyclical, "timezone": feature.timezone}

    def dates_in(self, feature) -> str:
        return feature.timezone


def _part_outputs(name: str, part: str, cyclical: bool) -> list[str]:
    if cyclical and part in PERIODIC:
        return [f"{name}_{part}_sin", f"{name}_{part}_cos"]
    return [f"{name}_{part}"]


def wall_clock(value, timezone: str):
    """(valid, wall-clock seconds since 1970-01-01 in `timezone`) of text or epoch seconds (dense, int64)."""
    if value.dtype != tf.string:
        utc = tf.cast(value, tf.int64)
        return (utc >= FIRST_SECOND) & (utc <= LAST_SECOND), utc + _offset(utc, timezone)
    matched = tf.strings.regex_full_match(value, ISO_8601)

    def group(index: int, pattern: str = f"^{ISO_8601}$"):
        text = tf.strings.regex_replace(value, pattern, f"\\{index}")
        # a text the pattern does not match is left as it is: none of it is a group
        return tf.where(matched & tf.strings.regex_full_match(value, pattern), text, "")

    def number(index: int, pattern: str = f"^{ISO_8601}$"):
        text = group(index, pattern)
        present = tf.strings.length(text) > 0
        return tf.where(present, tf.strings.to_number(tf.where(present, text, "0"), tf.int64), 0)

    year, month, day, hour, minute, second = (number(index) for index in range(1, 7))
    offset_hours, offset_minutes = number(3, ZONE), number(4, ZONE)
    valid = (matched & (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1)
             & (day <= _days_in_month(year, tf.clip_by_value(month, 1, 12))) & (hour <= 23) & (minute <= 59)
             & (second <= 59) & (offset_hours <= 23) & (offset_minutes <= 59))
    written = _days_from_civil(year, month, day) * DAY + hour * 3600 + minute * 60 + second
    sign = tf.where(tf.equal(group(2, ZONE), "-"), tf.constant(-1, tf.int64), 1)
    utc = written - sign * (offset_hours * 3600 + offset_minutes * 60)
    has_offset = tf.strings.regex_full_match(value, ZONE)
    return valid, tf.where(has_offset, utc + _offset(utc, timezone), written)


def _offset(utc, timezone: str):
    """`timezone`'s UTC offset (seconds) at each instant."""
    if timezone == "UTC":
        return tf.zeros_like(utc)
    starts, offsets = _offset_table(timezone)
    index = tf.searchsorted(tf.constant(starts, tf.int64), utc, side="right", out_type=tf.int64) - 1
    return tf.gather(tf.constant(offsets, tf.int64), index)


@functools.lru_cache(maxsize=None)
def _offset_table(timezone: str) -> tuple[list[int], list[int]]:
    """The instants (Unix seconds) from which `timezone`'s UTC offset holds, and those offsets, 1900-2100.

    Python's zoneinfo answers for one instant at a time: the table walks the years a day at a time and finds
    each change to the second (no zone changes its offset twice within a day).
    """
    zone = zoneinfo.ZoneInfo(timezone)

    def offset(second: int) -> int:
        return int(datetime.datetime.fromtimestamp(second, zone).utcoffset().total_seconds())

    first = int(datetime.datetime(1900, 1, 1, tzinfo=datetime.timezone.utc).timestamp())
    last = int(datetime.datetime(2100, 1, 1, tzinfo=datetime.timezone.utc).timestamp())
    starts, offsets = [INT64_MIN], [offset(first)]
    for day in range(first, last, DAY):
        if offset(day + DAY) == offsets[-1]:
            continue
        low, high = day, day + DAY  # offset(low) is the old one, offset(high) the new one
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if offset(middle) == offsets[-1] else (low, middle)
        starts.append(high)
        offsets.append(offset(high))
    return starts, offsets


def _is_leap(year):
    leap = tf.equal(year % 4, 0) & (tf.not_equal(year % 100, 0) | tf.equal(year % 400, 0))
    return tf.cast(leap, tf.int64)


def _days_in_month(year, month):
    lengths = tf.constant([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], tf.int64)
    return tf.gather(lengths, month - 1) + tf.where(tf.equal(month, 2), _is_leap(year), 0)


def _days_from_civil(year, month, day):
    """Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`, int64)."""
    year = year - tf.cast(month <= 2, tf.int64)
    era = tf.math.floordiv(year, 400)
    year_of_era = year - era * 400
    day_of_year = (153 * tf.where(month > 2, month - 3, month + 9) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _civil_from_days(days):
    """(year, month, day) of days since 1970-01-01 (Howard Hinnant's `civil_from_days`, int64)."""
    shifted = days + 719468
    era = tf.math.floordiv(shifted, 146097)
    day_of_era = shifted - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_from_march = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_from_march + 2) // 5 + 1
    month = tf.where(month_from_march < 10, month_from_march + 3, month_from_march - 9)
    return year_of_era + era * 400 + tf.cast(month <= 2, tf.int64), month, day


def _unreadable(values) -> dict[int, str]:
    """{row: why} of the present values of an Arrow column that `wall_clock` finds invalid (whatever the zone)."""
    present = np.flatnonzero(values.is_valid().to_numpy(zero_copy_only=False))
    if not len(present):
        return {}
    kept = values.take(pa.array(present))
    if pa.types.is_integer(kept.type):
        tensor = tf.constant(kept.to_numpy(zero_copy_only=False).astype(np.int64))
        detail = "{} is outside the years 0001-9999 as epoch seconds"
    else:
        tensor = tf.constant(kept.to_pylist(), tf.string)
        detail = "{!r} is not an ISO-8601 date or time (YYYY-MM-DD[THH:MM[:SS[.f]]][Z|±HH[:MM]])"
    valid = wall_clock(tensor, "UTC")[0].numpy()
    shown = kept.to_pylist()
    return {int(present[i]): detail.format(_text(shown[i])) for i in np.flatnonzero(~valid)}


def _text(value):
    return value.decode("utf-8", errors="backslashreplace") if isinstance(value, bytes) else value


TRANSFORM = Datetime()

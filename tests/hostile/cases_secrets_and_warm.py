"""Issue 41, items 6, 7, 9, 13-15: no credential shown, no control character printed raw, SQL edges, the warm process.

Cases as data, run by test_hostile.py like hostile_cases.py's; each has issue=41 and the item it proves. Items 13-15
need one Python process that lives on: tests/hostile/test_warm_process.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np
import yaml

from hostile_cases import SMALL, Case, damaged, job, run_copy, small_config, write
from postgres_server import shared_url
from skewless.pipelines import run as run_job

# ---------------------------------------------------------------------------------------- 9: SQL queries and types


def duckdb_query(query: str, **input_options) -> Callable[[Path], list]:
    """A job over a DuckDB query's column `a` (a z_score), a tenth of its rows allowed to be quarantined."""
    def make(folder):
        config = small_config(folder, input={"format": "sql", "url": "duckdb://", "query": query, **input_options},
                              features={"a": {"transform": "z_score"}}, label=None,
                              output={**SMALL["output"], "max_bad_fraction": 0.1})
        return job(folder, config)
    return make


def _summary(folder: Path) -> dict:
    return json.loads((folder / "out" / "run.json").read_text())


def _quarantined(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted((folder / "out" / "quarantine").glob("*.jsonl"))
            for line in path.read_text().splitlines()]


def written_values(values: list[float]) -> Callable[[Path], None]:
    """The run kept exactly `values` of column a (count and mean as NumPy has them), and quarantined nothing."""
    def check(folder):
        summary = _summary(folder)
        assert summary["rows"]["written"] == {"train": len(values)} and summary["rows"]["quarantined"] == 0
        assert summary["features"]["a"]["count"] == len(values)
        assert np.isclose(summary["features"]["a"]["mean"], np.mean(values))
    return check


def one_row_quarantined(line: int, reason: str, kept: list[float]) -> Callable[[Path], None]:
    """Row `line` (1-based) alone went to quarantine, its reason holding `reason`; the others were kept."""
    def check(folder):
        (row,) = _quarantined(folder)
        assert row["line"] == line and reason in row["reason"], row
        summary = _summary(folder)
        assert summary["rows"] == {"read": len(kept) + 1, "written": {"train": len(kept)}, "quarantined": 1}
        assert np.isclose(summary["features"]["a"]["mean"], np.mean(kept))
    return check


_FIFTY = "SELECT i::DOUBLE AS a FROM range(50) t(i)"
_BIG = 2**64 - 1  # UBIGINT's largest value

SQL_CASES = [
    Case("sql: a DuckDB query ending in a -- comment", duckdb_query(_FIFTY + " -- the rows"), 0, None, issue=41,
         item=9, writes=("out",), after=written_values(list(range(50)))),
    Case("sql: a query ending in ; then a -- comment", duckdb_query(_FIFTY + "; -- the rows"), 0, None, issue=41,
         item=9, writes=("out",), after=written_values(list(range(50)))),
    Case("sql: a -- comment ending a query cut by order_by", duckdb_query(_FIFTY + " -- rows", order_by=["a"]), 0,
         None, issue=41, item=9, writes=("out",), after=written_values(list(range(50)))),
    Case("sql: a ; inside quoted text stays", duckdb_query("SELECT length('a;b')::DOUBLE + i AS a FROM range(50) t(i);"),
         0, None, issue=41, writes=("out",), after=written_values([3 + i for i in range(50)])),
    Case("sql: a UBIGINT of 2^64-1 in one row", duckdb_query(
        f"SELECT (CASE WHEN i = 29 THEN {_BIG} ELSE i END)::UBIGINT AS a FROM range(40) t(i) ORDER BY i"), 0, None,
        issue=41, item=9, writes=("out",),
        after=one_row_quarantined(30, f"a: {_BIG} is beyond int64", [i for i in range(40) if i != 29])),
    Case("sql: a DuckDB UNION holding text in one row", duckdb_query(
        "SELECT (CASE WHEN i = 12 THEN union_value(s := 'twelve') ELSE union_value(n := i) END)"
        "::UNION(n BIGINT, s VARCHAR) AS a FROM range(40) t(i) ORDER BY i"), 0, None, issue=41, item=9,
        writes=("out",), after=one_row_quarantined(13, "a: 'twelve' is not an int",
                                                   [i for i in range(40) if i != 12])),
    Case("sql: a DuckDB UNION of numbers is read as numbers", duckdb_query(
        "SELECT (CASE WHEN i % 2 = 0 THEN union_value(f := i / 2) ELSE union_value(n := i) END)"
        "::UNION(n BIGINT, f DOUBLE) AS a FROM range(40) t(i) ORDER BY i"), 0, None, issue=41, item=9,
        writes=("out",), after=written_values([i / 2 if i % 2 == 0 else i for i in range(40)])),
]


# ------------------------------------------------------------------------------------- 6: no credential shown

# a password whose pieces are searched for: no piece may be shown or kept, whatever character sits between them
PIECES = ("zq7K", "xw9J")


def password(between: str = "") -> str:
    return PIECES[0] + between + PIECES[1]


def _with_password(secret: str, in_query: bool | str = False, query: str = "") -> str:
    """The shared server's URL (tests/postgres_server.py: it takes any password) holding `secret`; `in_query`: as
    ?password= (or as the key given, which libpq percent-decodes); `query`: a query string to end the URL."""
    url = shared_url()
    if in_query:
        return f"{url}?{'password' if in_query is True else in_query}={secret}"
    return url.replace("postgres@", f"postgres:{secret}@", 1) + query


def _table() -> None:
    """The shared server's table `rows`: 60 values of column a."""
    import adbc_driver_postgresql.dbapi as postgres  # the sql extra; only these cases need it

    with postgres.connect(shared_url()) as connection, connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS rows AS SELECT i::float8 AS a FROM generate_series(1, 60) i")
        connection.commit()


def postgres_job(secret: str, in_query: bool | str = False, table: str = "rows", query: str = ""
                 ) -> Callable[[Path], list]:
    def make(folder):
        _table()
        config = small_config(folder, input={"format": "sql", "url": _with_password(secret, in_query, query),
                                             "table": table}, features={"a": {"transform": "z_score"}}, label=None)
        return job(folder, config)
    return make


def _leaked(text: str) -> list[str]:
    return [piece for piece in PIECES if piece in text]


def shows_no_password(text: str) -> None:
    assert _leaked(text) == [], text[-2000:]


def keeps_no_password(name: str = "out") -> Callable[[Path], None]:
    """No file under `name` (run.json, config.yaml, report.html, quarantine, statistics, the graph) holds a piece
    of the password."""
    def check(folder):
        found = [str(path.relative_to(folder)) for path in sorted((folder / name).rglob("*"))
                 if path.is_file() and any(piece.encode() in path.read_bytes() for piece in PIECES)]
        assert found == [], found
    return check


def shows_the_user_and_host(text: str) -> None:
    """The URL is still named, its user and host kept (errors must say where)."""
    shows_no_password(text)
    assert "postgresql://postgres@127.0.0.1:" in text, text[-2000:]


def _config_kept(section: str, key: str, value) -> Callable[[Path], None]:
    """An older run's config.yaml, which kept `section.key` as given (a URL's password, runner options' keys)."""
    def damage(run):
        config = yaml.safe_load((run / "config.yaml").read_text())
        config[section][key] = value
        (run / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return damage


_OLD_URL = f"postgresql://reader:{password()}@db.example:5432/shop?sslmode=require&password={password('-')}"
# Beam's S3 options as a config gives them (docs/recipes: object stores)
_S3_KEYS = {"s3_access_key_id": password(), "s3_secret_access_key": password("-"), "s3_session_token": password("_")}


SECRET_CASES = [
    Case("secrets: a run with the password in the URL", postgres_job(password()), 0, None, issue=41, item=6,
         writes=("out",), after=keeps_no_password(), printed=shows_no_password),
    Case("secrets: a run with ?password= in the URL", postgres_job(password(), in_query=True), 0, None, issue=41,
         item=6, writes=("out",), after=keeps_no_password(), printed=shows_no_password),
    Case("secrets: a run with a '#' in the password", postgres_job(password("#")), 0, None, issue=41, item=6,
         writes=("out",), after=keeps_no_password(), printed=shows_no_password),
    Case("secrets: a run with ?pass%77ord= (libpq decodes the key)", postgres_job(password(), "pass%77ord"), 0,
         None, issue=41, item=6, writes=("out",), after=keeps_no_password(), printed=shows_no_password),
    Case("secrets: a missing table, ?%70assword= in the URL", postgres_job(password(), "%70assword", "nothere"), 2,
         "the database refuses the query", issue=41, item=6, printed=shows_the_user_and_host),
    Case("secrets: S3 keys in runner.options", lambda f: job(f, small_config(f, runner={"options": _S3_KEYS})), 0,
         None, issue=41, item=6, writes=("out",), after=keeps_no_password(), printed=shows_no_password),
    Case("secrets: report of a run whose config.yaml kept S3 keys", damaged(
        _config_kept("runner", "options", _S3_KEYS), lambda f: ["report", str(run_copy(f))]), 0, None,
        issue=41, item=6, run=True,
        writes=("run",), after=lambda f: shows_no_password((run_copy(f) / "report.html").read_text()),
        printed=shows_no_password),
    Case("secrets: a missing table, the password in the URL", postgres_job(password(), table="nothere"), 2,
         "the database refuses the query", issue=41, printed=shows_the_user_and_host),
    Case("secrets: a missing table, ?password= in the URL", postgres_job(password(), True, "nothere"), 2,
         "the database refuses the query", issue=41, item=6, printed=shows_the_user_and_host),
    Case("secrets: a missing table, a '#' in the password", postgres_job(password("#"), table="nothere"), 2,
         "the database refuses the query", issue=41, item=6, printed=shows_the_user_and_host),
    Case("secrets: a raw '%zz' in the password", postgres_job(password("%zz"), table="nothere"), 2,
         "holds a '%' not followed by two hex digits", issue=41, item=6, printed=shows_the_user_and_host),
    Case("secrets: a raw '/' in the password", postgres_job(password("/"), table="nothere"), 2,
         "holds a raw '/' or '@'", issue=41, item=6, printed=shows_the_user_and_host),
    Case("secrets: a raw '@' in the password", postgres_job(password("@"), table="nothere"), 2,
         "holds a raw '/' or '@'", issue=41, item=6, printed=shows_the_user_and_host),
    Case("secrets: the password in the URL, a raw '@' in its query string", postgres_job(
        password(), query="?application_name=etl@shop"), 2, "the query string after '?' holds an '@' (write it %40",
        issue=41, item=6, printed=shows_no_password),
    Case("secrets: the password in the URL, '%40' in its query string", postgres_job(
        password(), query="?application_name=etl%40shop"), 0, None, issue=41, item=6, writes=("out",),
        after=keeps_no_password(), printed=shows_no_password),
    Case("secrets: a '%zz' in ?password=", postgres_job(password("%zz"), True, "nothere"), 2,
         "postgresql://postgres@127.0.0.1:", issue=41, item=6, printed=shows_no_password),
    Case("secrets: a server that does not answer, ?password=", lambda f: job(f, small_config(
        f, input={"format": "sql", "url": f"postgresql://u@127.0.0.1:9/db?password={password()}", "table": "t"},
        features={"a": {"transform": "z_score"}}, label=None)), 2, "input.url postgresql://u@127.0.0.1:9/db t",
        issue=41, item=6, printed=shows_no_password),
    Case("secrets: report of a run whose config.yaml kept a password", damaged(
        _config_kept("input", "url", _OLD_URL), lambda f: ["report", str(run_copy(f))]), 0, None,
        issue=41, item=6, run=True,
        writes=("run",), after=lambda f: shows_no_password((run_copy(f) / "report.html").read_text()),
        printed=shows_no_password),
    Case("secrets: inspect of a run whose config.yaml kept a password", damaged(
        _config_kept("input", "url", _OLD_URL), lambda f: ["inspect", str(run_copy(f))]), 0, None,
        issue=41, run=True,
        writes=("run",), printed=shows_no_password),
]


# ------------------------------------------------------------------------ 7: nothing printed acts on a terminal

OSC_52 = "\x1b]52;c;aGk=\x07"  # writes the clipboard
CLEAR = "\x1b[2J"  # clears the screen
NAME = f"job{OSC_52}"  # the config's name
COLUMN = f"ci{CLEAR}ty"  # a column's name


def _hostile_rows(folder: Path) -> Path:
    values = [OSC_52, CLEAR, "\u202eevil", "plain"]
    lines = [f"age,{COLUMN}"] + [f"{20 + i % 40},{values[i % len(values)]}" for i in range(200)]
    return write(folder / "rows.csv", "\n".join(lines) + "\n")


def _hostile_config(folder: Path) -> dict:
    return small_config(folder, name=NAME, input={"format": "csv", "paths": [str(_hostile_rows(folder))],
                                                  "header": True},
                        features={"age": {"transform": "z_score"}, COLUMN: {"transform": "vocabulary"}}, label=None,
                        output={**SMALL["output"], "splits": {"train": 0.5, "eval": 0.5}})


def hostile_run(command: Callable[[Path], list]) -> Callable[[Path], list]:
    """A run of the rows above (made in the process), then `command`."""
    def make(folder):
        run_job(_hostile_config(folder))
        return command(folder)
    return make


def shows_escaped(*texts: str) -> Callable[[str], None]:
    """Each of `texts` is printed with its control characters escaped (as `repr`-like text: \\x1b, \\u202e)."""
    def check(printed):
        for text in texts:
            escaped = text.encode("unicode_escape").decode()
            assert escaped in printed, (escaped, printed[-3000:])
    return check


TERMINAL_CASES = [
    Case("terminal: run prints the config's name and progress escaped", lambda f: job(f, _hostile_config(f)), 0,
         None, issue=41, item=7, writes=("out", "rows.csv"), printed=shows_escaped(NAME)),
    Case("terminal: inspect shows category values and column names escaped", hostile_run(
        lambda f: ["inspect", str(f / "out")]), 0, None, issue=41, item=7, printed=shows_escaped(
            NAME, COLUMN, OSC_52, CLEAR, "\u202eevil")),
    Case("terminal: validate's table shows column names escaped", hostile_run(
        lambda f: ["validate", str(f / "out"), "--threshold", "1"]), 0, None, issue=41, item=7,
        printed=shows_escaped(COLUMN)),
    Case("terminal: schema validate shows values escaped", lambda f: [
        "schema", "validate", str(_hostile_rows(f)), "--header", "--schema", str(write(
            f / "s.pbtxt", f'feature {{ name: "age" type: INT }}\nfeature {{ name: "{COLUMN.encode("unicode_escape").decode()}" '
                           'type: BYTES string_domain { value: "plain" } }\n'))], 1, None, issue=41, item=7,
        printed=shows_escaped(COLUMN, OSC_52)),
    Case("terminal: an error naming a hostile feature", lambda f: job(f, small_config(
        f, features={COLUMN: {"transform": "nope"}})), 2, "unknown value 'nope'", issue=41, item=7,
        printed=shows_escaped(CLEAR)),
]


CASES = SQL_CASES + SECRET_CASES + TERMINAL_CASES

"""A dirty CSV input made by the test: good rows with bad ones of each kind at known lines of two files.

`make_inputs` writes the files and returns what the quarantine must hold; `job_config` the job that reads them
(test_quarantine, test_parsed_units).
"""

SCHEMA = """
feature { name: "id" type: INT }
feature { name: "x" type: FLOAT float_domain { min: -100 max: 100 } }
feature { name: "n" type: INT }
feature { name: "city" type: BYTES string_domain { value: ["paris", "oslo", "rome"] } }
feature { name: "label" type: BYTES }
"""
CITIES = [b"paris", b"oslo", b"rome"]

# (line text, expected reason); ids 900+ mark the bad rows
BAD_A = [
    (b"900,1.5,3", "expected 5 fields, found 3"),
    (b"901,1.5,3,paris,yes,extra", "expected 5 fields, found 6"),
    (b"902,abc,3,paris,yes", "x: 'abc' is not a float"),
    (b"903,2.5,4x,oslo,no", "n: '4x' is not an int"),
    (b"904,,3,paris,yes", "x: required value is missing"),
    (b"905,1.5,3,,no", "city: required value is missing"),
    (b"906,1.5,3,par\xffis,yes", "byte 14 of the line is not UTF-8"),
    (b"907,1.5,3,paris,maybe", "label: 'maybe' is not in the domain (no, yes)"),
    (b"908,500.0,3,paris,yes", "x: 500.0 is above the domain maximum 100.0"),
    (b"909,1.5,3,atlantis,no", "city: 'atlantis' is not in the domain (paris, oslo, rome)"),
    # an unbalanced quote is one bad line; it must not swallow the lines after it
    (b'910,1.5,3,"paris,yes', "malformed CSV line: unexpected end of data"
                                   " (a quoted field holding a line break? set input.multiline: true)"),
]
BAD_B = [(b"911,1.5,3,rome", "expected 5 fields, found 4")]
GOOD_ROWS = 240


def good_line(i: int) -> bytes:
    # every 9th row leaves the optional n empty: a good row that takes the default
    n = b"" if i % 9 == 0 else b"%d" % (i % 7)
    return b"%d,%.2f,%s,%s,%s" % (i, (i % 50) / 10 - 2, n, CITIES[i % 3], [b"no", b"yes"][i % 2])


def make_inputs(folder):
    """Two CSV files; returns {(file name, line): (raw line, reason)} of the bad rows and the good ids."""
    header = b"id,x,n,city,label"
    expected, good_ids = {}, []
    files = {"part-a.csv": (range(0, 160), BAD_A, 40), "part-b.csv": (range(160, GOOD_ROWS), BAD_B, 70)}
    for name, (ids, bad, at) in files.items():
        lines = [header] + [good_line(i) for i in ids]
        good_ids.extend(ids)
        # spread the bad rows: one every 7 lines from `at`
        for k, (raw, reason) in enumerate(bad):
            lines.insert(at + 7 * k, raw)
        lines.insert(20, b"")  # a blank line is no row
        lines.append(b"  ")
        (folder / name).write_bytes(b"\n".join(lines) + b"\n")
        for number, line in enumerate(lines, start=1):
            for raw, reason in bad:
                if line == raw:
                    expected[(name, number)] = (raw.decode("utf-8", "backslashreplace"), reason)
    return expected, sorted(good_ids)


def job_config(folder, **output) -> dict:
    (folder / "schema.pbtxt").write_text(SCHEMA)
    return {
        "name": "dirty",
        "input": {"format": "csv", "paths": [str(folder / "part-*.csv")], "header": True},
        "schema": str(folder / "schema.pbtxt"),
        "features": {
            "id": {"transform": "passthrough"},
            "x": {"transform": "z_score"},
            "n": {"transform": "z_score", "default": 0},
            "city": {"transform": "vocabulary"},
        },
        "label": {"column": "label", "map": {"no": 0, "yes": 1}},
        "output": {"dir": str(folder / "out"), "shards": 3, **output},
    }

"""The CLI finds local input files without Beam (pipelines/reading/files.py `local_matches`, issue 42 item 2)
only where it finds what Beam's matching finds, which the job uses: compared here on a tree with hidden
files, nested folders and character classes."""

import pytest

from skewless.pipelines.reading.files import expand_paths, local_matches

TREE = ["a.csv", "b.csv", ".hidden.csv", "c.tsv", "part-1.csv", "part-2.csv", "part-x.csv",
        "sub/d.csv", "sub/.e.csv", "sub/deeper/f.csv", "other/g.csv", "[x].csv"]
# patterns local_matches answers itself, each compared with Beam's answer
ANSWERED = ["a.csv", "*.csv", "*", "sub/*.csv", "*/*.csv", "*/d.csv", "part-[12].csv", "part-[!1].csv",
            "sub/deeper/*", "s*/*", "nope.csv", "nope/*.csv", "*.parquet", "[x].csv", ".*"]
# Beam's `?` and `**` match across folders: left to Beam
LEFT_TO_BEAM = ["part-?.csv", "**/*.csv", "sub/**"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("inputs")
    for name in TREE:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    return root


@pytest.mark.parametrize("pattern", ANSWERED)
def test_local_matches_find_what_beams_matching_finds(tree, pattern):
    found = local_matches(str(tree / pattern))
    try:
        expected = expand_paths([str(tree / pattern)])
    except Exception as error:
        assert "no input file matches" in str(error)
        expected = []
    assert found == expected


@pytest.mark.parametrize("pattern", LEFT_TO_BEAM)
def test_patterns_that_match_across_folders_are_left_to_beam(tree, pattern):
    assert local_matches(str(tree / pattern)) is None

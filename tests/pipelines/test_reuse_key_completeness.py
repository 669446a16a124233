"""The SavedModels kept for reuse (pipelines/analyze/saved_model_reuse.py) and the transform graph kept loaded
(pipelines/write/loaded_graph.py) never serve a run they do not fit: in one warm process a job runs, then ONE thing
changes (a feature option of each transform family, the label, the input's value rules, the schema file's contents
under the same path, the data's column types or order, its values) and the job runs again to the same output
folder; its data/, transform_graph/ and statistics/ must be byte for byte those of a run that traced and loaded
everything (the kept graphs forgotten, as in a fresh process)."""

import pytest

from family_rows import family_config, write_family_csv
from run_output import files_of, forget_kept_graphs

from skewless.pipelines import run



def _schema(n_optional: bool, i_type: str = "INT") -> str:
    """A schema for the CSV: every column required, but `n` optional when `n_optional`; `i` of `i_type`."""
    types = {"n": "FLOAT", "i": i_type, "c": "BYTES", "h": "BYTES", "t": "BYTES", "d": "BYTES", "g": "BYTES",
             "w": "FLOAT", "y": "BYTES"}
    entries = []
    for name, kind in types.items():
        fraction = 0.0 if (name == "n" and n_optional) else 1.0
        entries.append(f'feature {{ name: "{name}" type: {kind} presence {{ min_fraction: {fraction} }} '
                       f'value_count {{ min: 1 max: 1 }} }}')
    return "\n".join(entries) + "\n"


def _feature(name, **options):
    def change(config, folder):
        config["features"][name] = {**config["features"][name], **options}
    return change


def _replace(name, options):
    def change(config, folder):
        config["features"][name] = options
    return change


def _input(**options):
    def change(config, folder):
        config["input"].update(options)
    return change


def _label(**options):
    def change(config, folder):
        config["label"] = {"column": "y", **options}
    return change


def _schema_changed(config, folder):
    (folder / "schema.pbtxt").write_text(_schema(n_optional=False))


def _schema_type_changed(config, folder):
    (folder / "schema.pbtxt").write_text(_schema(n_optional=True, i_type="FLOAT"))


def _hook(config, folder):
    config["preprocessing_fn"] = "test_reuse_key_completeness:doubled_n"


def doubled_n(inputs, outputs):
    """A hook: code no key sees."""
    return {"n_doubled": outputs["n"] * 2.0}


def _int_to_float(config, folder):
    write_family_csv(folder, float_i=True)


def _column_order(config, folder):
    write_family_csv(folder, columns=("y", "w", "g", "d", "t", "h", "c", "i", "n"))


def _other_rows(config, folder):
    write_family_csv(folder, seed=12)


def _vocabulary_order(config, folder):
    # "b" now outnumbers "a": the vocabulary file holds the same tokens, of the same length, in another order
    write_family_csv(folder, c_weights=(.3, .4, .15, .1, .05))


def _add_cross(config, folder):
    config["features"]["c_x_h"] = {"transform": "cross", "columns": ["c", "h"], "hash_buckets": 9}


# (name, change): each changes ONE thing of `_config`; the fast ones first
CHANGES = [
    ("scale_range", _feature("w", range=[-1, 1])),
    ("fill_constant", _replace("n", {"transform": "z_score", "default": 3.5})),
    ("na_values", _input(na_values=["NA"])),
    ("schema_file_contents", _schema_changed),
    ("schema_file_types", _schema_type_changed),
    ("preprocessing_fn_hook", _hook),
    ("vocabulary_top_k", _feature("c", top_k=2)),
    ("vocabulary_num_oov_buckets", _feature("c", num_oov_buckets=3)),
    ("vocabulary_default_value", _feature("c", num_oov_buckets=0, top_k=2, default_value=7)),
    ("vocabulary_labels", _feature("c", labels=True)),
    ("vocabulary_weights", _feature("c", weights="w")),
    ("bucketize_num_buckets", _feature("i", num_buckets=5)),
    ("bucketize_epsilon", _feature("i", epsilon=0.3)),
    ("text_lowercase", _feature("t", lowercase=False)),
    ("text_strip_regex", _feature("t", strip_regex=None)),
    ("text_ngrams", _feature("t", ngram_range=[1, 2])),
    ("datetime_timezone", _feature("d", timezone="America/New_York")),
    ("datetime_parts", _feature("d", parts=["hour", "minute"])),
    ("cross", _add_cross),
    ("hash_key", _feature("h", key=[1, 2])),
    ("per_key", _feature("n", key="g")),
    ("clip", _feature("w", clip=[0.8, 1.5])),  # w: no fill, so its min and max are the first phase's
    ("log", _replace("w", {"transform": "log"})),
    ("label_map", _label(map={"yes": 0, "no": 1})),
    ("label_transform", _label(transform="vocabulary")),
    ("label_missing", _label(map={"yes": 1, "no": 0}, missing="drop")),
    ("nonfinite", _input(nonfinite="quarantine")),
    ("int_to_float_column", _int_to_float),
    ("raw_column_order", _column_order),
    ("data_values", _other_rows),
    ("data_vocabulary_order", _vocabulary_order),
]
FAST = {"text_lowercase", "clip", "schema_file_contents", "data_vocabulary_order"}  # ~16 s each; the rest are marked slow


def _outputs(result) -> dict:
    return files_of(result.output_dir)


@pytest.mark.parametrize("name, change", [
    pytest.param(name, change, marks=() if name in FAST else pytest.mark.slow, id=name) for name, change in CHANGES])
def test_a_warm_run_of_a_changed_config_equals_a_fresh_one(tmp_path, name, change):
    write_family_csv(tmp_path)
    (tmp_path / "schema.pbtxt").write_text(_schema(n_optional=True))
    forget_kept_graphs()
    try:
        first = family_config(tmp_path, tmp_path / "out")
        changed = family_config(tmp_path, tmp_path / "out")
        if name.startswith("schema"):  # the others' column types come from the data (int_to_float_column)
            first["schema"] = changed["schema"] = str(tmp_path / "schema.pbtxt")
        run(first)  # the warm process: this config's graphs kept
        change(changed, tmp_path)
        warm = _outputs(run(changed, overwrite=True))
        forget_kept_graphs()  # what a fresh process has: no graph kept
        fresh = _outputs(run(changed, overwrite=True))
    finally:
        forget_kept_graphs()
    assert warm == fresh

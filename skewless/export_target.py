"""What `skewless export` refuses before it loads TensorFlow and Keras (seconds): an export folder it must not
write, a model path that holds no Keras model. `layers.export.export_serving_model` applies the same rules
through TensorFlow's filesystems (gs://, s3://); the CLI applies them to a local path at once.
"""

from __future__ import annotations

import json
import os
import zipfile

from skewless.errors import InputError, OutputError, OutputExistsError

# A copy of the raw schema beside the SavedModel (TF Serving's place for extra files), so clients can build
# requests without the run directory; it marks a folder as an export of skewless
SPEC_FILE = os.path.join("assets.extra", "skewless_features.json")
# how a legacy Keras HDF5 file (.h5), which load_model also reads, begins
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def check_export_folder(export_dir: str, overwrite: bool, exists=os.path.exists, listdir=os.listdir,
                        walk=os.walk, isdir=os.path.isdir, read=_read_bytes) -> bool:
    """Raises when `export_dir` must not be written; returns whether it holds a previous export to replace.

    As `skewless run --overwrite` (docs/errors.md), only what skewless wrote is replaced: a previous export holding
    only the files it was written with (its `SPEC_FILE` lists them; one written before that list may hold a
    SavedModel's files only), or folders without a file (a serving layout's empty version folders); a file someone
    added (notes, TF Serving's warm-up requests) keeps it. The filesystem functions are os's by default, TensorFlow's
    gfile's for a store."""
    if not exists(export_dir):
        return False
    if os.path.islink(export_dir) or not isdir(export_dir):
        if not overwrite:
            raise OutputExistsError(f"{export_dir}: already exists (pass overwrite=True / --overwrite to replace it)")
        raise OutputError(f"{export_dir}: is a file or a link, not an export of skewless; --overwrite replaces only a "
                          "previous export (delete it yourself if it should go)")
    if not listdir(export_dir):
        return False
    if not overwrite:
        raise OutputExistsError(f"{export_dir}: already exists (pass overwrite=True / --overwrite to replace it)")
    found = sorted(os.path.relpath(os.path.join(folder, name), export_dir)
                   for folder, _, names in walk(export_dir) for name in names)
    if not found:
        return True
    if SPEC_FILE not in found:
        raise OutputError(f"{export_dir}: holds files but is not an export of skewless (no {SPEC_FILE}); --overwrite "
                          "replaces only a previous export (delete it yourself if it should go)")
    written = _written_files(read, os.path.join(export_dir, SPEC_FILE))
    added = [name for name in found if not written(name)]
    if added:
        shown = ", ".join(added[:3]) + (", ..." if len(added) > 3 else "")
        raise OutputError(f"{export_dir}: holds {shown}, which skewless export did not write; --overwrite replaces "
                          "only a previous export as it was written (move those files out, or delete it yourself)")
    return True


# what an export written before its spec file listed its files holds: a SavedModel's files and the spec file
_SAVED_MODEL_FILES = ("saved_model.pb", "fingerprint.pb", SPEC_FILE)
_SAVED_MODEL_FOLDERS = ("variables/", "assets/")


def _written_files(read, spec_file: str):
    """Whether a file (relative to the export) is one the export was written with."""
    try:
        listed = json.loads(read(spec_file)).get("files")
    except (OSError, ValueError, AttributeError):
        listed = None
    if isinstance(listed, list):
        return set(listed).__contains__
    return lambda name: name in _SAVED_MODEL_FILES or name.startswith(_SAVED_MODEL_FOLDERS)


def check_model_file(path: str) -> None:
    """Refuses a model path that is missing or cannot be a Keras model file (Keras would say "File not found")."""
    if not os.path.exists(path):
        raise InputError(f"{path}: model file not found")
    what = _not_a_model_file(path)
    if what is not None:
        raise InputError(f"{path}: not a Keras model file ({what}); --model takes a .keras file (model.save)")


def _not_a_model_file(path: str) -> str | None:
    """What `path` is when it cannot be a Keras model file (a .keras zip archive holding config.json, or
    HDF5), else None."""
    if os.path.isdir(path):
        return "a folder" + (", a SavedModel: export takes the Keras model" if
                             os.path.exists(os.path.join(path, "saved_model.pb")) else "")
    with open(path, "rb") as handle:
        head = handle.read(len(_HDF5_SIGNATURE))
    if head == _HDF5_SIGNATURE:
        return None
    if not zipfile.is_zipfile(path):
        return "an empty file" if not head else "neither a zip archive nor HDF5"
    with zipfile.ZipFile(path) as archive:
        if "config.json" not in archive.namelist():
            return "a zip archive without a Keras model's config.json"
    return None

"""tf.Transform's SavedModels, each written once per process for the same inputs.

tf.Transform traces the `preprocessing_fn` and writes a SavedModel for each phase of its analyzers while the
pipeline runs (`tensorflow_transform.beam.impl._create_v2_saved_model`). The first phase's holds no analyzer
result (its `tensor_replacement_map` is None): it is the traced function with placeholders where the analyzers'
results will go, and the analysis pass loads it to compute the analyzers' inputs. The last one, the transform
graph, holds every result, and its write traces the function twice more (the graph, then its schema). Writing
the first is about 1 CPU s of a warm 1,000-row run and loading it about 0.35 (issue 34), writing the last about
0.8 (issue 40); a notebook that runs the same config again wrote the same graphs again. Here each is written once
per process and key: a rerun copies the folder kept from the first write (tf.Transform names a new one per run),
and the analysis pass gets an analysis graph loaded then.

What a SavedModel depends on, and what the key holds (`reuse_key`):

- the `preprocessing_fn`: skewless builds it from the config's features, label and input value rules and the
  raw columns (pipelines/analyze/preprocessing.py), whose values `build_preprocessing_fn` gives as its key; a
  `preprocessing_fn` hook can call any code, which no key covers, so a function with a hook has no key and its
  graphs are traced every run; nor has one with a `most_frequent` fill, whose graph reads a temporary file of
  the run that traced it by path (a file outside the SavedModel, gone with that run);
- the raw input signature (the raw schema's TypeSpecs), the names of the analyzers' inputs and the save options,
  which tf.Transform passes to the function this replaces;
- the versions of TensorFlow, tf.Transform and skewless;
- for a later phase, the analyzers' results it holds (`_with_results`): each by value, a vocabulary by its
  temporary path (the graph names the vocabulary's table after it) and its file's bytes, and the run's
  temporary folder. A rerun of the same config on the same data to the same output gets the same key; new
  data, or another output folder, traces anew.

The code that traces it is this process's, so the copies live in a temporary folder of this process, removed
at exit, the last `KEPT` keys only; nothing is reused across processes. A kept graph gives the job the outputs
of a run that traced everything (tests/pipelines/test_saved_model_reuse.py,
tests/pipelines/test_reuse_key_completeness.py). `installed()` swaps tf.Transform's two functions for the
block only.
"""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import threading
from collections import OrderedDict
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import tensorflow as tf
from tensorflow_transform.beam import common as tft_common
from tensorflow_transform.beam import impl as tft_impl

from skewless.pipelines.analyze.preprocessing import REUSE_KEY_ATTRIBUTE
from skewless.pipelines.output.files import is_local, process_folder
from skewless.pipelines.runner.shared_patch import SharedPatch

_VERSIONED = ("tensorflow", "tensorflow-transform", "skewless")
# SavedModels kept per process, the least recently used dropped first: a notebook trying config after config
# keeps the last few configs' analysis and transform graphs, not all (each is a folder of ~100 KB and, for an
# analysis graph, a loaded graph of a few MB)
KEPT = 8

_lock = threading.Lock()
_copies: OrderedDict = OrderedDict()  # key -> a folder holding that SavedModel
_loaded: OrderedDict = OrderedDict()  # (key, inputs, excluded outputs) -> tf.Transform's loaded graph state
_keyed_dirs: dict = {}  # a SavedModel folder this process wrote or copied -> its key


def reuse_key(preprocessing_fn, input_signature, output_names, save_options) -> str | None:
    """The key of the first SavedModel tf.Transform writes for these arguments, or None when it cannot be keyed
    (a `preprocessing_fn` that skewless did not build, or one with a hook)."""
    function_key = getattr(preprocessing_fn, REUSE_KEY_ATTRIBUTE, None)
    if function_key is None:
        return None
    signature = sorted((name, repr(spec)) for name, spec in input_signature.items())
    names = sorted((output_names or {}).items())
    parts = (function_key, repr(signature), repr(names), repr(save_options), repr(_versions()))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _with_results(key: str, tensor_replacement_map: dict, base_temp_dir: str) -> str | None:
    """The key of a later phase's SavedModel: `key` (the traced function's) with the analyzers' results it holds,
    each by name, dtype, shape and value, and a vocabulary by its path and its file's contents (the graph reads
    the file as an asset and names the vocabulary's table after the path); None if a result is not an eager
    tensor (nothing this module knows how to key)."""
    digest = hashlib.sha256(key.encode())
    digest.update(base_temp_dir.encode() + b"\0")
    for name in sorted(tensor_replacement_map):
        tensor = tensor_replacement_map[name]
        if not hasattr(tensor, "numpy"):
            return None
        strings = tensor.dtype == tf.string
        value = np.asarray(tensor.numpy(), dtype=object if strings else None)
        digest.update(f"{name}\0{tensor.dtype.name}\0{value.shape}\0".encode())
        if strings:  # each with its length, so no two lists join to the same bytes
            for item in value.ravel():
                digest.update(len(item).to_bytes(8, "little") + item)
            if value.ndim == 0 and os.path.isfile(value.item()):
                digest.update(b"file\0" + _file_digest(value.item()))
        else:
            digest.update(np.ascontiguousarray(value).tobytes())
    return digest.hexdigest()


def _file_digest(path: bytes) -> bytes:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.digest()


def _versions() -> tuple:
    found = []
    for package in _VERSIONED:
        try:
            found.append((package, version(package)))
        except PackageNotFoundError:
            found.append((package, None))
    return tuple(found)


def _create_saved_model(tensor_replacement_map, base_temp_dir, preprocessing_fn, input_signature,
                        baseline_analyzers_fingerprint, output_keys_to_name_map, save_options):
    """`_create_v2_saved_model`, with a phase's SavedModel copied from this process's earlier write of the same
    key into a new folder of `base_temp_dir` (as tf.Transform names it)."""
    key = None
    if is_local(base_temp_dir):
        key = reuse_key(preprocessing_fn, input_signature, output_keys_to_name_map, save_options)
        if key and tensor_replacement_map is not None:
            key = _with_results(key, tensor_replacement_map, base_temp_dir)
    kept = _kept_folder(key) if key else None
    if kept is not None:
        saved_model_dir = tft_common.get_unique_temp_path(base_temp_dir)
        shutil.copytree(kept, saved_model_dir)
    else:
        saved_model_dir = _PATCH.original(tft_impl, "_create_v2_saved_model")(
            tensor_replacement_map, base_temp_dir, preprocessing_fn, input_signature, baseline_analyzers_fingerprint,
            output_keys_to_name_map, save_options)
        if key:
            _keep(key, saved_model_dir)
    if key:
        with _lock:
            _keyed_dirs[saved_model_dir] = key
    return saved_model_dir


def _kept_folder(key: str) -> str | None:
    """The folder kept for `key`, now the most recently used, or None."""
    with _lock:
        folder = _copies.get(key)
        if folder is not None:
            _copies.move_to_end(key)
        return folder


def _keep(key: str, saved_model_dir: str) -> None:
    """Keeps a copy of `saved_model_dir` for `key`, dropping the least recently used key past `KEPT`; keeps
    nothing where the copy cannot be made (a full temporary disk): the job goes on, and a rerun traces anew."""
    with _lock:
        if key in _copies:
            return
        kept = os.path.join(_store(), key)
        try:
            shutil.copytree(saved_model_dir, kept)
        except OSError:
            shutil.rmtree(kept, ignore_errors=True)
            return
        _copies[key] = kept
        while len(_copies) > KEPT:
            dropped, folder = _copies.popitem(last=False)
            shutil.rmtree(folder, ignore_errors=True)
            for state_key in [k for k in _loaded if k[0] == dropped]:
                del _loaded[state_key]


def _make_graph_state(self, saved_model_dir):
    """`_RunMetaGraphDoFn._make_graph_state`: an analysis graph of a kept key is loaded once per process; a
    later run gets the loaded graph under its own folder's name (tf.Transform checks that it runs the graph it
    was given). The loaded graph is stateless: its tables hold the graph's own assets, read when loaded."""
    original = _PATCH.original(tft_impl._RunMetaGraphDoFn, "_make_graph_state")
    with _lock:
        key = _keyed_dirs.get(saved_model_dir)
    if key is None or self._use_tf_compat_v1:
        return original(self, saved_model_dir)
    state_key = (key, frozenset(self._get_input_tensor_names()), tuple(sorted(self._exclude_outputs)))
    with _lock:
        state = _loaded.get(state_key)
        if state is not None:
            _loaded.move_to_end(state_key)
    if state is None:
        state = original(self, saved_model_dir)
        with _lock:
            if key in _copies:  # not dropped meanwhile
                _loaded[state_key] = state
    renamed = copy.copy(state)
    renamed.saved_model_dir = saved_model_dir
    return renamed


def _store() -> str:
    return process_folder("saved-models")


def forget() -> None:
    """Drops every kept analysis graph (the next run of each config traces it again)."""
    with _lock:
        for folder in _copies.values():
            shutil.rmtree(folder, ignore_errors=True)
        _copies.clear()
        _loaded.clear()
        _keyed_dirs.clear()


def _forget_job_folders() -> None:
    # the folders named here are the job's temporary ones, gone after it
    _keyed_dirs.clear()


_PATCH = SharedPatch([(tft_impl, "_create_v2_saved_model", _create_saved_model),
                      (tft_impl._RunMetaGraphDoFn, "_make_graph_state", _make_graph_state)],
                     on_restore=_forget_job_folders)


def installed():
    """tf.Transform writes its first SavedModel through `_create_saved_model`, and loads analysis graphs through
    `_make_graph_state`, while the block runs (nested blocks and threads share one installation)."""
    return _PATCH.installed()

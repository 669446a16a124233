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

An analysis graph (a phase's SavedModel whose analyzers' results are still to come) is written only where it
will be read from disk (`analysis_graphs_in_memory`). Where every worker of the job runs in this process
(`runners.workers_in_this_process`: the in-process runner, the job's default), the analysis pass takes the module
tf.Transform traced instead: writing it and loading it back cost ~0.25 and ~0.2 s of every fresh run. A worker
of another process reads the folder, so there it is written. A rerun of the key in this process takes the same
module, its tables kept alive for it (`eager_tables.keep_alive`), where they all read tf.Transform's placeholder
files for vocabularies still to come (uniquely named: no later table gets their names); a later phase, which
reads an earlier phase's vocabulary file (named after the vocabulary: a rerun's table of that name would be the
same table), is traced again. The transform graph is always written, and the job's own transform pass reads the
module saved to it (`saved_module`: the folder tf.Transform copies into the output, found by its files' digest)
where it would load it (~0.4 s of every fresh run): the module is what the SavedModel serializes, and its tables
hold the vocabulary files the SavedModel's assets copy. That module is not kept past the job: its tables, named
after the run's temporary files, end with it, so a rerun loads the graph (pipelines/write/loaded_graph.py). A run
whose graphs were all written and loaded writes the same bytes (tests/pipelines/test_saved_model_reuse.py,
tests/pipelines/test_portability.py).

The code that traces it is this process's, so the copies live in a temporary folder of this process, removed
at exit, the last `KEPT` keys only; nothing is reused across processes. A kept graph gives the job the outputs
of a run that traced everything (tests/pipelines/test_saved_model_reuse.py,
tests/pipelines/test_reuse_key_completeness.py). `installed()` swaps tf.Transform's two functions for the
block only.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
import shutil
import threading
from collections import OrderedDict
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import tensorflow as tf
from tensorflow_transform import analyzer_nodes
from tensorflow_transform.beam import common as tft_common
from tensorflow_transform.beam import impl as tft_impl
from tensorflow_transform.saved import saved_transform_io_v2

from skewless.pipelines.analyze import construction_trace, eager_tables
from skewless.pipelines.analyze.preprocessing import REUSE_KEY_ATTRIBUTE
from skewless.pipelines.output.files import folder_digest, is_local, process_folder
from skewless.pipelines.runner.shared_patch import SharedPatch

_VERSIONED = ("tensorflow", "tensorflow-transform", "skewless")
# SavedModels kept per process, the least recently used dropped first: a notebook trying config after config
# keeps the last few configs' analysis and transform graphs, not all (each is a folder of ~100 KB and, for an
# analysis graph, a loaded graph of a few MB)
KEPT = 8

_lock = threading.Lock()
_swap_lock = threading.Lock()  # one `_loader_init` at a time swaps `tf.saved_model.load`
_copies: OrderedDict = OrderedDict()  # key -> a folder holding that SavedModel
_loaded: OrderedDict = OrderedDict()  # (key, inputs, excluded outputs) -> tf.Transform's loaded graph state
_keyed_dirs: dict = {}  # a SavedModel folder this process wrote or copied -> its key
# a folder tf.Transform's loader reads from memory while the job runs -> the module: an analysis graph never written
# to it, or the job's own transform graph saved to it (`saved_module`)
_read_in_memory: dict = {}
_modules: OrderedDict = OrderedDict()  # key -> an analysis graph's module, never written, kept for reruns
_saved: dict = {}  # the digest of a transform graph's folder the running job saved -> the module saved to it


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
    key into a new folder of `base_temp_dir` (as tf.Transform names it), or, while `analysis_graphs_in_memory`,
    an analysis graph's module kept for the key handed over under that folder's name instead."""
    key = None
    if is_local(base_temp_dir):
        key = reuse_key(preprocessing_fn, input_signature, output_keys_to_name_map, save_options)
        if key and tensor_replacement_map is not None:
            key = _with_results(key, tensor_replacement_map, base_temp_dir)
    in_memory = _IN_MEMORY.active()
    module = _kept_module(key) if key and in_memory else None
    if module is None and in_memory and tensor_replacement_map is None:
        module = construction_trace.analysis_graph(base_temp_dir, preprocessing_fn, input_signature,
                                                   output_keys_to_name_map)
        if module is not None and key and _reads_only_placeholder_files(module, base_temp_dir):
            _keep_module(key, module)
    kept = _kept_folder(key) if key and module is None else None
    if module is not None:
        saved_model_dir = tft_common.get_unique_temp_path(base_temp_dir)
        with _lock:
            _read_in_memory[saved_model_dir] = module
    elif kept is not None:
        saved_model_dir = tft_common.get_unique_temp_path(base_temp_dir)
        shutil.copytree(kept, saved_model_dir)
    else:
        saved_model_dir = _PATCH.original(tft_impl, "_create_v2_saved_model")(
            tensor_replacement_map, base_temp_dir, preprocessing_fn, input_signature, baseline_analyzers_fingerprint,
            output_keys_to_name_map, save_options)
        with _lock:
            module = _read_in_memory.get(saved_model_dir)
        if key and module is None:
            _keep(key, saved_model_dir)
        elif key and _reads_only_placeholder_files(module, base_temp_dir):
            _keep_module(key, module)
    if key:
        with _lock:
            _keyed_dirs[saved_model_dir] = key
    return saved_model_dir


def _kept_module(key: str):
    """The analysis graph's module kept in memory for `key`, now the most recently used, or None."""
    with _lock:
        module = _modules.get(key)
        if module is not None:
            _modules.move_to_end(key)
        return module


def _keep_module(key: str, module) -> None:
    """Keeps an unwritten analysis graph's module for `key`, and its tables alive; past `KEPT` keys, the least
    recently used one is dropped and its tables destroyed."""
    eager_tables.keep_alive(module.resources)
    with _lock:
        _modules[key] = module
        dropped = []
        while len(_modules) > KEPT:
            dropped_key, dropped_module = _modules.popitem(last=False)
            _drop_loaded(dropped_key)
            dropped.append(dropped_module)
    for old in dropped:
        eager_tables.destroy(old.resources)


def _reads_only_placeholder_files(module, base_temp_dir: str) -> bool:
    """Whether every table of the module reads one of tf.Transform's placeholder files for a vocabulary still to
    come, each named by a unique path under the run's temporary folder (`base_temp_dir`): no later table gets its
    name (a table of a name the process holds is that table, and the job's own are destroyed when it ends; a
    vocabulary's file is named after the vocabulary, the same in a rerun to the same folder)."""
    # tf.Transform 1.21's `graph_context.TFGraphContext._TEMP_SUBDIR`
    placeholders = os.path.join(os.path.abspath(base_temp_dir), "analyzer_temporary_assets", "")
    for resource in module.resources:
        table = getattr(resource, "_table", None) or resource  # a StaticVocabularyTable holds its file's table
        name = getattr(table, "_shared_name", None)
        if not isinstance(name, str) or placeholders not in name:
            return False
    return True


def _drop_loaded(key: str) -> None:
    # the caller holds the lock
    for state_key in [k for k in _loaded if k[0] == key]:
        del _loaded[state_key]


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
            _drop_loaded(dropped)


def _make_graph_state(self, saved_model_dir):
    """`_RunMetaGraphDoFn._make_graph_state`: an analysis graph of a kept key is loaded once per process; a
    later run gets the loaded graph under its own folder's name (tf.Transform checks that it runs the graph it
    was given). The loaded graph is stateless: its tables hold the graph's own assets, read when loaded, or, for a
    graph kept in memory, tf.Transform's placeholder files, kept alive with it."""
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
            if key in _copies or key in _modules:  # not dropped meanwhile
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
        modules = list(_modules.values())
        _modules.clear()
        _loaded.clear()
        _keyed_dirs.clear()
    for module in modules:
        eager_tables.destroy(module.resources)


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


def _write_v2_saved_model(module, tf_function, name, saved_model_dir, save_options=None):
    """`saved_transform_io_v2.write_v2_saved_model` (trace `tf_function` onto `module`, save `module`), where an
    analysis graph (its analyzers' results still to come: the collection tf.Transform checks to tell the transform
    graph from the others) is kept for this job's analysis pass instead (`_read_in_memory`)."""
    concrete = saved_transform_io_v2.trace_and_update_module(module, tf_function, name,
                                                             strip_control_dependencies=False)
    if concrete.graph.get_collection(analyzer_nodes.TENSOR_REPLACEMENTS):
        with _lock:
            _read_in_memory[saved_model_dir] = module
    else:
        tf.saved_model.save(module, saved_model_dir, options=save_options)
        if is_local(saved_model_dir):
            digest = folder_digest(saved_model_dir)
            with _lock:
                _saved[digest] = module
    return concrete


def saved_module(saved_model_dir: str):
    """The module this job saved as a transform graph whose folder held the files `saved_model_dir` holds (the
    copy tf.Transform makes of it in the output's transform_fn/), or None; while the job runs, tf.Transform's
    `SavedModelLoader` of `saved_model_dir` takes that module instead of loading the folder (`_loader_init`). Only
    within `analysis_graphs_in_memory`: a worker of another process reads the folder."""
    if not _IN_MEMORY.active() or not is_local(saved_model_dir):
        return None
    digest = folder_digest(saved_model_dir)
    with _lock:
        module = _saved.get(digest)
        if module is not None:
            _read_in_memory[saved_model_dir] = module
    return module


class _InMemory:
    """What loading a graph read in memory gives: what tf.Transform's `SavedModelLoader` reads of a loaded
    SavedModel, its `signatures` (none: a TF2 graph) and its traced `transform_fn`, and the module that holds it."""

    signatures: dict = {}

    def __init__(self, module):
        self.module = module
        self.transform_fn = module.transform_fn


def _loader_init(self, saved_model_dir):
    """tf.Transform's `SavedModelLoader.__init__`, which for a folder of `_read_in_memory` (a running job's unwritten
    analysis graph, or its own saved transform graph) reads the module where it would load the folder
    (`tf.saved_model.load`, swapped for the call: `tf.saved_model` is looked up now, as tf.Transform looks it up,
    since importing some libraries replaces that module; any other folder, loaded by any thread meanwhile, loads
    as usual)."""
    original = _IN_MEMORY.original(saved_transform_io_v2.SavedModelLoader, "__init__")
    with _lock:
        module = _read_in_memory.get(saved_model_dir)
    if module is None:
        return original(self, saved_model_dir)
    api = tf.saved_model
    with _swap_lock:
        load = api.load
        api.load = lambda export_dir, *args, **kwargs: (
            _InMemory(module) if export_dir == saved_model_dir else load(export_dir, *args, **kwargs))
        try:
            original(self, saved_model_dir)
        finally:
            api.load = load


def _forget_job_modules() -> None:
    # named after the job's folders, gone with it; a kept key's module stays in `_modules`; a saved transform
    # graph's module is not kept: its tables are destroyed when the job ends (`eager_tables`)
    _read_in_memory.clear()
    _saved.clear()


_IN_MEMORY = SharedPatch([(saved_transform_io_v2, "write_v2_saved_model", _write_v2_saved_model),
                          (saved_transform_io_v2.SavedModelLoader, "__init__", _loader_init)],
                         on_restore=_forget_job_modules)


@contextlib.contextmanager
def analysis_graphs_in_memory():
    """While the block runs, tf.Transform's analysis graphs reach the analysis pass in memory, never written
    (`_write_v2_saved_model`, `_loader_init`), the first phase's pruned from tf.Transform's construction trace
    (`construction_trace`). Only for a job whose every worker runs in this process
    (`runners.workers_in_this_process`): a worker elsewhere would find no graph in the folder."""
    with _IN_MEMORY.installed(), construction_trace.kept():
        yield

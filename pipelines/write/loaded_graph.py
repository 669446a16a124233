"""The transform graph loaded once per process for the same bytes.

The transform pass loads the graph the analysis wrote (`tft.TFTransformOutput`, whose Keras layer loads the
SavedModel: its functions rebuilt, its vocabularies' tables filled), about 0.4 s of a warm 1,000-row run. A notebook
that runs a config again, on the same data, gets a graph of the same bytes (canonical_graph.py makes them so)
and loaded it again. Here a graph folder is loaded once per process and contents: `transform_output` keys it by
every file under it (names and bytes: `files.folder_digest`), and a later folder of the same contents gets the
output loaded then. The loaded tables hold the vocabularies' contents, which the key covers, whatever folder they
were read from.

The loaded output reads its files from a copy of the folder kept in a temporary folder of this process (the run's
own is moved or removed once the run ends), removed at exit; the last `KEPT` graphs only, since each holds its
vocabularies in memory. `forget()` drops them all.

The job that saved the graph reads it without loading it: where its transform graph's module is at hand
(`saved_model_reuse.saved_module`, for a job whose workers all run in this process), the output of the job's
folder reads that module. It is not kept for a later run, whose job has destroyed the module's tables by then: the
first rerun loads the graph, and later ones get it loaded.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections import OrderedDict

import tensorflow_transform as tft

from skewless.pipelines.analyze import saved_model_reuse
from skewless.pipelines.output.files import folder_digest, is_local, process_folder

# a notebook switching between two configs finds both (the loaded graph of each holds its vocabularies)
KEPT = 2

_lock = threading.Lock()
_outputs: OrderedDict = OrderedDict()  # key -> (the kept folder, its TFTransformOutput)
_job_output: list = []  # [module, its TFTransformOutput] of the running (or last) job's own transform graph


def transform_output(graph_dir: str) -> tft.TFTransformOutput:
    """A `TFTransformOutput` of `graph_dir` (a local folder) with its layer loaded: this process's earlier one where
    a folder of the same contents was loaded, otherwise loaded now. Not local, or where no copy can be kept: a new
    one of `graph_dir`, loaded when first used."""
    if not is_local(graph_dir):
        return tft.TFTransformOutput(graph_dir)
    module = saved_model_reuse.saved_module(os.path.join(graph_dir, tft.TFTransformOutput.TRANSFORM_FN_DIR))
    if module is not None:
        return _running_job_output(graph_dir, module)
    key = folder_digest(graph_dir)
    with _lock:  # one load per key, even when several DoFns set up at once
        kept = _outputs.get(key)
        if kept is not None:
            _outputs.move_to_end(key)
            return kept[1]
        folder = os.path.join(_store(), key)
        try:
            shutil.copytree(graph_dir, folder)
        except OSError:  # a full temporary disk: this run loads the folder itself, and nothing is kept
            shutil.rmtree(folder, ignore_errors=True)
            return tft.TFTransformOutput(graph_dir)
        output = tft.TFTransformOutput(folder)
        output.transform_features_layer()  # loads the SavedModel
        _outputs[key] = (folder, output)
        while len(_outputs) > KEPT:
            _, (dropped, _) = _outputs.popitem(last=False)
            shutil.rmtree(dropped, ignore_errors=True)
        return output


def _running_job_output(graph_dir: str, module) -> tft.TFTransformOutput:
    """The output of the graph the running job saved to `graph_dir`, reading the module it saved (not loaded: ~0.4 s
    of every fresh run); one per module, for the threads of the job's transform pass. Not kept for a later run:
    the module's tables, named after the job's temporary files, are destroyed when the job ends."""
    with _lock:
        if _job_output and _job_output[0] is module:
            return _job_output[1]
        output = tft.TFTransformOutput(graph_dir)
        output.transform_features_layer()  # takes the module (saved_model_reuse)
        _job_output[:] = [module, output]  # the previous job's, if any, is done with
        return output


def _store() -> str:
    return process_folder("loaded-graphs")


def forget() -> None:
    """Drops every kept graph (the next run loads its graph again)."""
    with _lock:
        for folder, _ in _outputs.values():
            shutil.rmtree(folder, ignore_errors=True)
        _outputs.clear()
        _job_output.clear()

"""A Beam coder for the job's Arrow tables and record batches whose size estimate does not encode them.

Beam samples elements of every PCollection to estimate their size (its operation counters: the first 10 of each
output, then about 10/N), and its fallback coder, which an untyped PCollection gets, estimates a size by pickling
the element and counting the bytes. The analysis pass's PCollections hold tables and record batches of 65,536
rows: at 1M census rows Beam pickled 29 of them, 539 MB, only to drop the bytes (issue 40). `ArrowCoder` encodes
them as that fallback does (pickle), and estimates their size as Arrow's buffer bytes (`nbytes`) without copying.

`registered()` answers Beam's coder registry with `ArrowCoder` for `pa.Table` and `pa.RecordBatch` for the length
of a `with` block (a job), so Beam behaves as shipped outside skewless's jobs; the PCollections that hold them
are marked so by `carrying`, and `infer_onward` gives the steps that read them (tf.Transform's identity step, say)
the output types Beam's inference gives them, which the job's pipeline leaves off elsewhere
(`assemble.launch.pipeline_options`). No output changes: a coder only carries elements between Beam's stages.
"""

from __future__ import annotations

import pickle

import pyarrow as pa
from apache_beam import coders
from apache_beam.coders import coder_impl
from apache_beam.coders.coders import FastCoder
from apache_beam.pipeline import PipelineVisitor

from skewless.pipelines.runner.shared_patch import SharedPatch

ARROW_TYPES = (pa.Table, pa.RecordBatch)


def _encode(value) -> bytes:
    return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


def _buffer_bytes(value) -> int:
    return value.nbytes


class ArrowCoder(FastCoder):
    """Pickles a `pa.Table` or `pa.RecordBatch`; its size estimate is the value's Arrow buffer bytes."""

    def _create_impl(self):
        return coder_impl.CallbackCoderImpl(_encode, pickle.loads, _buffer_bytes)

    def is_deterministic(self) -> bool:
        return False  # never a grouping key

    def to_type_hint(self):
        return object

    def __eq__(self, other) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


def carrying(pcoll, arrow_type):
    """`pcoll`, whose elements are `arrow_type` (`pa.Table` or `pa.RecordBatch`), with that element type, so Beam
    picks its coder from the registry (`ArrowCoder` in a job). Set directly: a declared output type
    (`with_output_types`) reaches the PCollection only through Beam's construction-time type checks, which the
    job's pipeline leaves off (`assemble.launch.pipeline_options`)."""
    pcoll.element_type = arrow_type
    return pcoll


def infer_onward(pipeline) -> None:
    """Beam's output-type inference (`infer_output_type`) for each step of `pipeline` whose main inputs hold one
    Arrow type, in the order the steps were applied, so an Arrow value passed on keeps its type (and `ArrowCoder`)."""
    class _Inference(PipelineVisitor):
        def visit_transform(self, node):
            kinds = {pcoll.element_type for pcoll in node.main_inputs.values()}
            output = node.outputs.get(None)
            if len(kinds) == 1 and kinds <= set(ARROW_TYPES) and output is not None and output.element_type is None:
                output.element_type = node.transform.infer_output_type(*kinds)

    pipeline.visit(_Inference())


def _get_coder(typehint):
    """`coders.registry.get_coder`, with `ArrowCoder` for Arrow tables and record batches."""
    if any(typehint is arrow_type for arrow_type in ARROW_TYPES):
        return ArrowCoder()
    return _PATCH.original(coders.registry, "get_coder")(typehint)


_PATCH = SharedPatch([(coders.registry, "get_coder", _get_coder)])
registered = _PATCH.installed

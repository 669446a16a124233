"""The transform graph's SavedModel, rewritten so the same job writes the same bytes in any process.

Two things vary between writes of the same graph:

- tf.Transform writes the nodes of a function in an order that varies from run to run. `canonicalize`
  sorts each function's nodes by name and serializes deterministically; it drops fingerprint.pb,
  TensorFlow's optional telemetry hash, which changes on every write.
- TensorFlow numbers what it traces with one counter per process (`ops.uid()`): function names
  (`__inference_pruned_2855`, `map_while_cond_246`), captured values' names (a function argument
  `bucketize_apply_buckets_2358`, an `_user_specified_name` of "2909"), names built from a function's
  name (`map_while_map_while_cond_246___redundant_placeholder0`). A DirectRunner worker process or
  thread, or another runner's worker, has counted a different amount before tracing, so it writes other
  numbers. The counter only grows, and the job traces the same graph in the same order anywhere, so the
  numbers keep their order: each is replaced by its rank among the numbers of the same stem
  (`__inference_pruned_1`), and every reference follows.

Names are rewritten where TensorFlow reads them (the function library, call sites in the graph and in
functions, the SavedObjectGraph, gradients, aliases); signatures name tensors of the outer graph, which
carry no counter. Function arguments are local to their function: renaming one rewrites only that
function's inputs and returns. Uniquified names (`inputs_1`) are ranked too, which keeps them unless a
run of them has gaps. tests/pipelines/test_portability.py compares worker and in-process runs byte for byte.
"""

from __future__ import annotations

import re

from apache_beam.io.filesystems import FileSystems
from tensorflow.core.protobuf import saved_model_pb2

from skewless.pipelines.output.files import read_bytes, write_bytes

# `stem_N`, N written without leading zeros as TensorFlow's counters and name uniquifiers write it
_NUMBERED = re.compile(r"^(.*)_(0|[1-9][0-9]*)$")


def canonicalize(saved_model_dir: str) -> None:
    model_path = FileSystems.join(saved_model_dir, "saved_model.pb")
    model = saved_model_pb2.SavedModel.FromString(read_bytes(model_path))
    for graph in model.meta_graphs:
        library = graph.graph_def.library
        names = renumbered(function.signature.name for function in library.function)
        _rename_functions(graph, names)
        embedded = _embedded_renamer(names)
        for function in library.function:
            _rename_arguments(function, embedded)
            _renumber_user_specified_names(function)
            nodes = sorted(function.node_def, key=lambda node: node.name)
            del function.node_def[:]
            function.node_def.extend(nodes)
        # the library lists functions in the order they were traced, which renaming no longer matches
        functions = sorted(library.function, key=lambda function: function.signature.name)
        del library.function[:]
        library.function.extend(functions)
    write_bytes(model_path, model.SerializeToString(deterministic=True))
    fingerprint = FileSystems.join(saved_model_dir, "fingerprint.pb")
    if FileSystems.exists(fingerprint):
        FileSystems.delete([fingerprint])


def renumbered(names) -> dict[str, str]:
    """`stem_N` -> `stem_R`, R the rank of N among the numbers that follow the same stem (see `_ranks`).

    Names without a number are absent from the result.
    """
    groups: dict[str, list[int]] = {}
    for name in names:
        match = _NUMBERED.match(name)
        if match:
            groups.setdefault(match[1], []).append(int(match[2]))
    return {
        f"{stem}_{number}": f"{stem}_{rank}" for stem, numbers in groups.items() for number, rank in _ranks(numbers).items()
    }


def _ranks(numbers) -> dict[int, int]:
    """Each number's rank, counting from 1 (from 0 when 0 is among them).

    So a run of uniquified names such as `inputs, inputs_1, inputs_2` keeps its numbers, and counter
    values become the next small numbers.
    """
    ordered = sorted(set(numbers))
    return {number: rank for rank, number in enumerate(ordered, start=0 if ordered[:1] == [0] else 1)}


def _rename_functions(graph, names: dict[str, str]) -> None:
    """Renames library functions, at every place a MetaGraphDef refers to one by name."""
    library = graph.graph_def.library
    for function in library.function:
        function.signature.name = names.get(function.signature.name, function.signature.name)
        for node in function.node_def:
            _rename_calls(node, names)
    for node in graph.graph_def.node:
        _rename_calls(node, names)
    for gradient in library.gradient:
        gradient.function_name = names.get(gradient.function_name, gradient.function_name)
        gradient.gradient_func = names.get(gradient.gradient_func, gradient.gradient_func)
    for registered in library.registered_gradients:
        registered.gradient_func = names.get(registered.gradient_func, registered.gradient_func)
    aliases = graph.meta_info_def.function_aliases
    for alias, name in list(aliases.items()):
        aliases[alias] = names.get(name, name)

    objects = graph.object_graph_def
    # serialized first: a new name may be another entry's old name
    concrete = {names.get(name, name): saved.SerializeToString() for name, saved in objects.concrete_functions.items()}
    objects.concrete_functions.clear()
    for name, saved in concrete.items():
        objects.concrete_functions[name].ParseFromString(saved)
    for node in objects.nodes:
        kind = node.WhichOneof("kind")
        if kind == "function":
            functions = [names.get(name, name) for name in node.function.concrete_functions]
            del node.function.concrete_functions[:]
            node.function.concrete_functions.extend(functions)
        elif kind == "bare_concrete_function":
            bare = node.bare_concrete_function
            bare.concrete_function_name = names.get(bare.concrete_function_name, bare.concrete_function_name)


def _rename_calls(node, names: dict[str, str]) -> None:
    """A node calls a function as its op (a direct call) or through func attrs (`f`, branches, bodies)."""
    node.op = names.get(node.op, node.op)
    for value in node.attr.values():
        _rename_func_attr(value, names)


def _rename_func_attr(value, names: dict[str, str]) -> None:
    kind = value.WhichOneof("value")
    if kind == "func":
        functions = [value.func]
    elif kind == "list":
        functions = list(value.list.func)
    else:
        return
    for function in functions:
        function.name = names.get(function.name, function.name)
        for nested in function.attr.values():
            _rename_func_attr(nested, names)


def _embedded_renamer(functions: dict[str, str]):
    """Renames the functions a name embeds: a while loop's unused input is `<scope>_<cond function>___redundant_placeholder0`."""
    if not functions:
        return lambda name: name
    # longest first, and not followed by a digit: `f_24` must not match inside `f_246`
    pattern = re.compile("|".join(re.escape(old) for old in sorted(functions, key=len, reverse=True)) + r"(?!\d)")
    return lambda name: pattern.sub(lambda match: functions[match[0]], name)


def _rename_arguments(function, embedded) -> None:
    """Renames the function's arguments: names a captured value got from the counter, or from a function's name.

    `embedded` renames the functions a name embeds; the names are then renumbered.
    """
    embedded_names = {arg.name: embedded(arg.name) for arg in function.signature.input_arg}
    numbered = renumbered(embedded_names.values())
    names = {old: numbered.get(new, new) for old, new in embedded_names.items()}
    names = {old: new for old, new in names.items() if old != new}
    renamed = [names.get(arg.name, arg.name) for arg in function.signature.input_arg]
    if not names or len(set(renamed)) < len(renamed) or set(renamed) & {node.name for node in function.node_def}:
        return  # nothing to rename, or two names would clash: the function stays as TensorFlow wrote it
    for arg in function.signature.input_arg:
        arg.name = names.get(arg.name, arg.name)
    for node in function.node_def:
        # an argument is referred to by its bare name (`arg`, `^arg`); node outputs as `node:output:0`
        inputs = [_renamed_input(entry, names) for entry in node.input]
        del node.input[:]
        node.input.extend(inputs)
    for key, value in list(function.ret.items()):
        function.ret[key] = _renamed_input(value, names)


def _renamed_input(entry: str, names: dict[str, str]) -> str:
    control = entry.startswith("^")
    name = entry[1:] if control else entry
    return ("^" if control else "") + names.get(name, name)


def _renumber_user_specified_names(function) -> None:
    """A captured value traced without a name is named by the counter alone: `_user_specified_name` "2909"."""
    values = [
        attrs.attr["_user_specified_name"]
        for attrs in function.arg_attr.values()
        if "_user_specified_name" in attrs.attr and attrs.attr["_user_specified_name"].s.isdigit()
    ]
    ranks = _ranks(int(value.s) for value in values)
    for value in values:
        value.s = str(ranks[int(value.s)]).encode()

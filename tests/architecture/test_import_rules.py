"""The import rules of the package, checked on the source (ast), so no module has to be imported:

- no cycles between project modules, imports inside functions counted (one there only hides a cycle until
  the function runs);
- the serving path (skewless.layers) and skewless.schemas never import skewless.pipelines or Beam;
- skewless.pipelines is folders by stage, each importing only the stages below it (docs/design.md):
  output, runner, reading, plan, analyze, write, statistics, assemble, score, tfdata, commands;
- a command module (commands/run, apply, predict, verify) is imported only by the face that exports it and the CLI;
- skewless.pipelines never imports the CLI, the report or the progress drawing (`run()` takes a
  progress callback and returns its result; the CLI draws and renders);
- only the CLI side (skewless.cli, skewless.cli_reference, the progress display, skewless.console) imports rich
  or typer: the work of a command returns a result, the CLI prints it;
- the modules of names those parts share import nothing of the project;
- the TensorFlow functions the graph and the layers both run live in skewless.ops, below both: it imports neither,
  the layers read of skewless.transforms only the registry, and the layers the transforms' native builders make
  never reach back into skewless.transforms.

A lazy import (`tf = lazy_import("tensorflow")`, skewless/lazy_imports.py) is an import: it loads the module the
moment the code reads from it, so every rule sees it.

The rules on parts follow imports anywhere in a module, function-level ones included, through every module
in between, so a rule broken two modules away names the whole chain.
"""

from __future__ import annotations

import ast
from pathlib import Path

from example_job import REPO
from project_modules import MODULES, lazily_imported

ROOT = REPO


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(module: str, path: Path) -> set[str]:
    """The modules `module` imports: project modules by their most specific name, others by their top name.

    `from skewless.pipelines.output import files` names the submodule when there is one, the package otherwise.
    Imports inside functions count, and so do lazy imports; imports under `if TYPE_CHECKING:` never run and are
    left out.
    """
    is_package = path.name == "__init__.py"
    found = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit_statement(sub)
                continue
            visit_statement(child)

    def visit_statement(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(_known(alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in MODULES else _known(base))
        elif lazily_imported(node) is not None:
            found.add(_known(lazily_imported(node)))
        else:
            visit(node)

    visit(ast.parse(path.read_text(), str(path)))
    found.discard(module)
    return found


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _known(name: str) -> str:
    """The project module `name` is, or the closest package of it; the top-level name of anything else."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in MODULES:
            return ".".join(parts[:end])
    return parts[0]


def _graph() -> dict[str, set[str]]:
    return {module: _imported(module, path) for module, path in MODULES.items()}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _chain(graph: dict[str, set[str]], start: str, forbidden: tuple[str, ...]) -> list[str] | None:
    """The shortest import chain from `start` to a module within one of `forbidden`, or None."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        module = queue.pop(0)
        for imported in sorted(graph.get(module, ())):
            if imported in paths:
                continue
            paths[imported] = [*paths[module], imported]
            if any(_within(imported, f) for f in forbidden):
                return paths[imported]
            queue.append(imported)
    return None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan), as a chain that ends where it starts."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def connect(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.get(module, ())):
            if imported not in graph:
                continue
            if imported not in index:
                connect(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    cycles = []
    for group in groups:
        inside = {m: graph[m] & set(group) for m in group}
        first = group[0]
        back = min((_chain(inside, m, (first,)) for m in inside[first]), key=len)
        cycles.append([first, *back])
    return cycles


def _fmt(chain: list[str]) -> str:
    return " -> ".join(chain)


def test_the_walk_sees_the_project_and_its_imports(tmp_path):
    assert {"skewless.cli", "skewless.pipelines.commands.run", "skewless.layers.export", "skewless.report.page"} <= set(MODULES)
    source = tmp_path / "example.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from skewless.pipelines.output import files\n"
        "from . import svg\n"
        "import skewless.layers.export.padded\n"
        "if TYPE_CHECKING:\n"
        "    from skewless.cli import app\n"
        "def later():\n"
        "    import apache_beam.io\n"
        "from skewless.lazy_imports import lazy_import\n"
        "tft = lazy_import('tensorflow_transform')\n"
        "job = lazy_import('skewless.pipelines.commands.run')\n"
    )
    assert _imported("skewless.report.example", source) == {
        "typing", "skewless.pipelines.output.files", "skewless.report.svg", "skewless.layers.export", "apache_beam",
        "skewless.lazy_imports", "tensorflow_transform", "skewless.pipelines.commands.run"}


def test_a_lazy_import_of_beam_on_the_serving_path_breaks_the_rule(tmp_path):
    source = tmp_path / "example.py"
    source.write_text("from skewless.lazy_imports import lazy_import\n\n"
                      "filesystems = lazy_import('apache_beam.io.filesystems')\n")
    graph = {"skewless.layers.example": _imported("skewless.layers.example", source)}
    assert _chain(graph, "skewless.layers.example", ("apache_beam",)) == ["skewless.layers.example", "apache_beam"]


def test_the_checks_find_a_cycle_and_a_forbidden_chain():
    graph = {"a": {"b"}, "b": {"c", "beam"}, "c": {"a"}, "d": set()}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _chain(graph, "a", ("beam",)) == ["a", "b", "beam"]
    assert _chain(graph, "d", ("beam",)) is None


def test_no_import_cycles_between_project_modules():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles (imports inside functions included):\n" + "\n".join(_fmt(c) for c in cycles)


def _broken(packages: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    graph = _graph()
    chains = (_chain(graph, m, forbidden) for m in sorted(graph) if any(_within(m, p) for p in packages))
    return [_fmt(chain) for chain in chains if chain]


def test_layers_schemas_and_transforms_never_import_pipelines_or_beam():
    broken = _broken(("skewless.layers", "skewless.schemas", "skewless.transforms"), ("skewless.pipelines", "apache_beam"))
    assert not broken, "the serving path, schemas and transforms reach pipelines/Beam:\n" + "\n".join(broken)


def test_pipelines_never_import_the_cli_report_or_progress_drawing():
    broken = _broken(("skewless.pipelines",), ("skewless.cli", "skewless.report", "skewless.progress"))
    assert not broken, "pipelines reach the command-line face:\n" + "\n".join(broken)


# pipelines/ by stage, in the order a job runs them, lowest first: a stage imports only those before it (so the input
# formats in reading/ never import the analysis or the writing, the plan only what runs before it, and nothing but a
# face imports a command). docs/design.md's table lists them in this order.
STAGES = ("output", "runner", "reading", "plan", "analyze", "write", "statistics", "assemble", "score", "tfdata",
          "commands")
# the modules of commands/ that are commands, named after them; the others there are a command's own helpers
COMMANDS = ("run", "apply", "predict", "verify")
# what may import a command: the face that exports it (the package itself, not its stages) and the CLI side that
# dispatches to it and prints its result
COMMAND_FACE = "skewless.pipelines"
COMMAND_CLI = ("skewless.cli", "skewless.console")


def test_pipelines_is_folders_by_stage():
    loose = sorted(m for m in MODULES if _within(m, "skewless.pipelines") and m != "skewless.pipelines"
                   and m.split(".")[2] not in STAGES)
    assert not loose, f"modules of skewless.pipelines outside its stage folders {STAGES}: {loose}"


def _stage_rule_broken(graph: dict[str, set[str]]) -> list[str]:
    broken = []
    for index, stage in enumerate(STAGES[:-1]):
        above = tuple(f"skewless.pipelines.{later}" for later in STAGES[index + 1:])
        chains = (_chain(graph, m, above) for m in sorted(graph) if _within(m, f"skewless.pipelines.{stage}"))
        broken += [_fmt(chain) for chain in chains if chain]
    return broken


def test_each_pipelines_stage_imports_only_the_stages_below_it():
    broken = _stage_rule_broken(_graph())
    assert not broken, "a pipelines stage imports a stage above it:\n" + "\n".join(broken)


def test_the_stage_rule_finds_a_plan_that_imports_a_later_stage():
    # the plan is cut before the analysis and the writing run: a plan that reaches into them breaks the order
    graph = {"skewless.pipelines.plan.plan": {"skewless.pipelines.reading.sources", "skewless.pipelines.write.shards"},
             "skewless.pipelines.reading.sources": set(), "skewless.pipelines.write.shards": set()}
    assert _stage_rule_broken(graph) == ["skewless.pipelines.plan.plan -> skewless.pipelines.write.shards"]


def _command_importers(graph: dict[str, set[str]]) -> list[str]:
    """`importer -> command` for each import of a command module by a module that neither exports nor dispatches it
    (another command included)."""
    commands = {f"skewless.pipelines.commands.{name}" for name in COMMANDS}
    callers = {m for m in graph if m == COMMAND_FACE or any(_within(m, cli) for cli in COMMAND_CLI)}
    return [f"{module} -> {imported}" for module in sorted(graph) if module not in callers
            for imported in sorted(graph[module] & commands)]


def test_no_command_module_is_imported_but_by_its_face_or_the_cli():
    graph = _graph()
    assert {f"skewless.pipelines.commands.{name}" for name in COMMANDS} <= set(graph)
    broken = _command_importers(graph)
    assert not broken, "a command module imported as a library (what commands share is a stage):\n" + "\n".join(broken)


def test_the_command_rule_finds_a_command_used_as_a_library():
    graph = {"skewless.pipelines.commands.apply": {"skewless.pipelines.commands.run"},
             "skewless.pipelines.commands.run": set(), "skewless.cli": {"skewless.pipelines.commands.run"},
             "skewless.pipelines.write.transform": {"skewless.pipelines.commands.run"}}
    assert _command_importers(graph) == ["skewless.pipelines.commands.apply -> skewless.pipelines.commands.run",
                                         "skewless.pipelines.write.transform -> skewless.pipelines.commands.run"]


def test_the_design_page_lists_the_stages_in_their_order():
    text = (ROOT / "docs" / "design.md").read_text()
    table = text[text.index("## pipelines/ by stage"):text.index("## Reading input")]
    listed = [line.split("`")[1].rstrip("/") for line in table.splitlines() if line.startswith("| `")]
    assert tuple(listed) == STAGES


CLI_SIDE = ("skewless.cli", "skewless.cli_reference", "skewless.progress", "skewless.console")


def test_only_the_cli_side_imports_rich_or_typer():
    graph = _graph()
    printing = sorted(m for m in graph if graph[m] & {"rich", "typer"} and not any(_within(m, p) for p in CLI_SIDE))
    assert not printing, "print through the CLI side (skewless/console/), not from:\n" + "\n".join(printing)


def test_the_modules_of_shared_names_import_nothing_of_the_project():
    # what the job, the CLI's face and the serving path all name: importing one must never pull in another part
    graph = _graph()
    # the one lazy-import idiom is part of the language here: it imports nothing of the project either
    for module in ("skewless.safe_names", "skewless.progress_snapshot", "skewless.errors", "skewless.encoding_advice",
                   "skewless.lazy_imports"):
        assert not {m for m in graph[module] if m in MODULES}, module
    # the run directory's names and readers: the serving side reads them, so they stay beside the shared names
    shared = {"skewless.errors", "skewless.run_summary", "skewless.lazy_imports"}
    for module in ("skewless.run_directory", "skewless.run_summary"):
        assert {m for m in graph[module] if m in MODULES} <= shared, module


def test_ops_import_neither_transforms_nor_layers():
    broken = _broken(("skewless.ops",), ("skewless.transforms", "skewless.layers", "skewless.pipelines", "apache_beam",
                                         "keras"))
    assert not broken, "skewless.ops is below the transforms and the layers, and imports neither:\n" + "\n".join(broken)


# what the layers may import of skewless.transforms: the registry of transform kinds, never a transform's code (what
# a layer and the graph both compute is a function of skewless.ops)
REGISTRY = {"skewless.transforms", "skewless.transforms.base"}


def test_layers_read_only_the_registry_of_the_transforms():
    graph = _graph()
    reading = sorted(f"{module} imports {imported}" for module in graph if _within(module, "skewless.layers")
                     for imported in graph[module] if _within(imported, "skewless.transforms") and imported not in REGISTRY)
    assert not reading, "a layer shares a transform's code (move the function to skewless.ops):\n" + "\n".join(reading)


def test_the_layers_the_native_builders_make_never_reach_the_transforms():
    graph = _graph()
    built = sorted({imported for module in graph if _within(module, "skewless.transforms")
                    for imported in graph[module] if _within(imported, "skewless.layers")})
    assert built, "the walk found no layer a native builder makes"
    broken = _broken(tuple(built), ("skewless.transforms",))
    assert not broken, "a layer a native builder makes imports the transforms back:\n" + "\n".join(broken)

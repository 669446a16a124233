"""The `skewless` command.

Each command imports what it needs inside its function: `skewless export` must work in a serving
container that has TensorFlow and no Apache Beam, and `--help` should not pay for importing either.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import functools
import importlib.metadata
import json
import os
import pathlib
import signal
import sys
import threading
import webbrowser
from inspect import Parameter, Signature
from typing import Callable, List, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from skewless import interrupt_request, runtime
from skewless.errors import SkewlessError, one_line, own_message
from skewless.export_target import check_export_folder, check_model_file
from skewless.input_formats import FILE_FORMATS, reader_of
from skewless.lazy_imports import lazy_import
from skewless.output_formats import PREDICTION_FORMATS
from skewless.staged_folder import check_not_input, output_exists
from skewless.terminal_text import fitted, line_width, shown, shown_lines

# Each command's work loads on first use: `skewless export` must work in a serving container that has TensorFlow
# and no Apache Beam, `--help` and a config error must not pay for importing either (tests/cli/test_cli_startup.py),
# and even pydantic (the config, the run directory: 0.1-0.3 s) and the report's NumPy (1 s) wait for the command
# that needs them
configuration = lazy_import("skewless.config")
run_directory = lazy_import("skewless.run_directory")
preflight = lazy_import("skewless.pipelines.plan.preflight")
ahead_of_imports = lazy_import("skewless.pipelines.plan.ahead_of_imports")
progress_display = lazy_import("skewless.progress")
run_command = lazy_import("skewless.pipelines.commands.run")
apply_command = lazy_import("skewless.pipelines.commands.apply")
predict_command = lazy_import("skewless.pipelines.commands.predict")
verify_run = lazy_import("skewless.pipelines.commands.verify")
raw_types = lazy_import("skewless.pipelines.plan.raw_types")
reading = lazy_import("skewless.pipelines.reading")
staging = lazy_import("skewless.pipelines.output.staging")
object_store = lazy_import("skewless.pipelines.output.object_store")
schemas = lazy_import("skewless.schemas")
schema_inference = lazy_import("skewless.schemas.infer")
schema_validation = lazy_import("skewless.schemas.validate")
layers = lazy_import("skewless.layers")
report_page = lazy_import("skewless.report")
drift = lazy_import("skewless.drift")
statistics_files = lazy_import("skewless.statistics_files")
inspect_run = lazy_import("skewless.inspect_run")
validation_table = lazy_import("skewless.console.validation_table")
verify_tables = lazy_import("skewless.console.verify_tables")
drift_tables = lazy_import("skewless.console.drift_tables")
inspect_tables = lazy_import("skewless.console.inspect_tables")
text_format = lazy_import("google.protobuf.text_format")

# Every command's, in its --help; docs/errors.md says more
EXIT_CODES = ("Exit codes: 0 ok, 1 a check found problems (validate, verify, schema validate), 2 a usage or input "
              "error (one line on stderr), 130 interrupted (Ctrl-C, SIGTERM or SIGHUP: nothing is published, the staging "
              "folder is removed). A closed stdout (| head) is not an error.")
INTERRUPTED = 130
# the --format choices of the commands that read files: the input formats whose entries take input.paths
_FILE_FORMATS = " | ".join(FILE_FORMATS)


def _name_values(params) -> None:
    """Help shows a flag without a value type (typer 0.29 renders every flag as `<bool>`, as if it took a value)
    and an argument by its name in capitals, as the options' help text names it (RUN_DIR)."""
    for param in params:
        if getattr(param, "is_flag", False):
            param.metavar = ""
        elif param.param_type_name == "argument" and param.metavar is None:
            param.metavar = param.name.upper()


def _summary(help_text: str | None) -> str | None:
    """A command's line in its group's list: its help's first paragraph, whole (click cuts it to `...` past the
    space it finds left), as one line (the docstring's line breaks broke it mid-sentence)."""
    return " ".join(help_text.split("\n\n")[0].split()) if help_text else None


class Command(TyperCommand):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.short_help = self.short_help or _summary(self.help)

    def format_help(self, ctx, formatter) -> None:
        _name_values(self.get_params(ctx))
        super().format_help(ctx, formatter)


class Group(TyperGroup):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.short_help = self.short_help or _summary(self.help)

    def format_help(self, ctx, formatter) -> None:
        _name_values(self.get_params(ctx))
        super().format_help(ctx, formatter)


app = typer.Typer(
    cls=Group,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Beam + tf.Transform preprocessing whose graph Keras 3 models reuse at serving time.",
    epilog=EXIT_CODES,
    # help as click formats it: wrapped at spaces to the terminal's width (80 at most), nothing cut. typer's rich
    # panels shrank every column evenly at 80 columns and cut option names to `--no-skip-initial-…`
    rich_markup_mode=None,
)


def _print_version(asked: bool) -> None:
    if not asked:
        return
    try:
        typer.echo(f"skewless {importlib.metadata.version('skewless')}")
    except importlib.metadata.PackageNotFoundError:
        fail("skewless has no package metadata: install it (pip install -e .) to run it")
    raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the installed version and exit."),
) -> None:
    """Beam + tf.Transform preprocessing whose graph Keras 3 models reuse at serving time."""


def fail(message: str, code: int = 2) -> None:
    """Prints one line on stderr and exits: the CLI's answer to every user error."""
    typer.echo(f"skewless: error: {shown(message)}", err=True)
    raise typer.Exit(code)


def say(text: str, err: bool = False) -> None:
    """Prints what a command made of data or a config (paths, names, summaries) as `shown_lines` makes it: control
    characters escaped, credentials cut; on a terminal, wrapped at spaces to its width (skewless/terminal_text.py)."""
    typer.echo(fitted(shown_lines(text), line_width(sys.stderr if err else sys.stdout)), err=err)


_DEBUG = typer.Option(
    False, "--debug", help="Show the traceback of an error and TensorFlow's C++ log lines (also: SKEWLESS_DEBUG=1)."
)


def reports_errors(where: str) -> Callable:
    """Gives a command the CLI's answer to every error: one line on stderr and exit code 2, or with the
    `--debug` option it adds (or SKEWLESS_DEBUG=1) the traceback. Without `--debug`, TensorFlow's C++ log
    lines are hidden too.

    A SkewlessError says what and where itself. Any other exception (a file a library cannot parse,
    Beam's wrapping of an error raised in the pipeline) is shortened by `one_line`, which names the file
    an OSError names, else the command's parameter `where` (the config, the run directory, the inputs).
    """

    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def command_reporting_errors(*args, debug: bool = False, **kwargs):
            debug = debug or os.environ.get("SKEWLESS_DEBUG") == "1"
            if not debug:
                runtime.quiet_tensorflow_logs()
                runtime.quiet_pipeline_errors()
                _QUIET_AFTER_INTERRUPT.set()
            try:
                return command(*args, **kwargs)
            except (typer.Exit, typer.Abort, typer.TyperException):
                raise  # exit codes a command chose (verify's 1 and 2) and usage errors typer reports itself
            except KeyboardInterrupt:
                interrupted()  # here, not in `main`: typer would end with 130 and say nothing
            except SystemExit as done:
                # rich's Console ends a command with SystemExit(1) when stdout is a closed pipe, after pointing
                # stdout at /dev/null (`Console.on_broken_pipe`); nothing else in a command raises SystemExit
                if done.code == 1 and _stdout_is_devnull():
                    stdout_closed()
                raise
            except Exception as error:
                if _closed_stdout(error):
                    stdout_closed()
                if _interrupted(error):  # Beam re-raises a Ctrl-C in a pipeline step as a RuntimeError
                    interrupted()
                if debug:
                    raise
                if isinstance(error, SkewlessError):
                    fail(own_message(error))
                named = kwargs[where]
                fail(one_line(error, named if isinstance(named, str) else ", ".join(named)))

        # typer reads the options from the signature and the type hints: add --debug to both
        signature = Signature.from_callable(command)
        debug_option = Parameter("debug", Parameter.KEYWORD_ONLY, default=_DEBUG, annotation=bool)
        command_reporting_errors.__signature__ = signature.replace(
            parameters=[*signature.parameters.values(), debug_option]
        )
        command_reporting_errors.__annotations__ = {**command.__annotations__, "debug": bool}
        return command_reporting_errors

    return decorate


def interrupted() -> None:
    """Ctrl-C: one line and exit code 130, whatever was running (the staging folder is removed on the way out,
    `StagedOutput.staging`)."""
    _INTERRUPT_REPORTED.set()
    if _SILENCED_STDERR:
        sys.stderr = _SILENCED_STDERR.pop()
    typer.echo("skewless: interrupted", err=True)
    raise typer.Exit(INTERRUPTED)


def stdout_closed() -> None:
    """The reader of stdout went away (`| head -1`): not an error. What the command still prints goes nowhere,
    and it ends with 0: it was stopped by its reader before it could finish."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    raise typer.Exit(0)


def _interrupted(error: BaseException) -> bool:
    """Whether `error` comes of a Ctrl-C: Beam re-raises one in a step as a RuntimeError, and one that lands in a
    C extension (TensorFlow's) can come out as any error at all; `_on_interrupt` saw those."""
    causes = _causes(error)
    return interrupt_request.REQUESTED.is_set() or any(
        isinstance(cause, KeyboardInterrupt) or str(cause).startswith("KeyboardInterrupt") for cause in causes)


# set by `interrupted` once a Ctrl-C (`interrupt_request.REQUESTED`, set by `_on_interrupt`) is reported
_INTERRUPT_REPORTED = threading.Event()
# stderr while `_on_interrupt` has it silenced
_SILENCED_STDERR: list = []
# set by `reports_errors` without --debug: stderr is then silenced from a Ctrl-C until it is reported
_QUIET_AFTER_INTERRUPT = threading.Event()
# how long a KeyboardInterrupt may take to reach the command's error handling before it is raised again
_INTERRUPT_REPEAT_SECONDS = 1.0


def _on_interrupt(signum, frame) -> None:
    """Python's own SIGINT handling (KeyboardInterrupt), made sure to end the command.

    A KeyboardInterrupt raised while a C extension calls back into Python can be swallowed: TensorFlow's
    `nest.flatten` turned one into a SystemError that tf.Transform's tracing caught and went on, and the run then
    finished and published. So the first Ctrl-C also starts a thread that raises it again in the main thread
    every second until `interrupted` has reported it."""
    if not interrupt_request.REQUESTED.is_set():
        interrupt_request.REQUESTED.set()
        if _QUIET_AFTER_INTERRUPT.is_set():
            # what the interrupted code prints on its way out (that SystemError's traceback, printed from C++)
            # says nothing the one line "interrupted" does not; `interrupted` restores stderr
            _SILENCED_STDERR.append(sys.stderr)
            sys.stderr = open(os.devnull, "w")
        threading.Thread(target=_repeat_interrupt, daemon=True, name="skewless-interrupt").start()
    raise KeyboardInterrupt


def _repeat_interrupt() -> None:
    while not _INTERRUPT_REPORTED.wait(_INTERRUPT_REPEAT_SECONDS):
        _thread.interrupt_main()


def _closed_stdout(error: BaseException) -> bool:
    return isinstance(error, BrokenPipeError) or (isinstance(error, OSError) and error.errno == errno.EPIPE)


def _stdout_is_devnull() -> bool:
    try:
        return os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(os.devnull))
    except (OSError, ValueError):
        return False


def _causes(error: BaseException) -> list[BaseException]:
    causes: list[BaseException] = []
    while error is not None and error not in causes:
        causes.append(error)
        error = error.__cause__ or error.__context__
    return causes


def _command(**settings):
    """`app.command` with the exit codes in the command's --help."""
    return app.command(cls=Command, epilog=EXIT_CODES, **settings)


@_command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})
@reports_errors("config")
def run(
    ctx: typer.Context,
    config: str = typer.Argument(..., help="The job config (YAML)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Output directory (replaces output.dir)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing output directory."),
    set_: List[str] = typer.Option([], "--set", help="Override a config value: key.path=value (repeatable)."),
    max_bad_fraction: Optional[float] = typer.Option(
        None, "--max-bad-fraction", help="Fail past this fraction of quarantined rows (default 0.01)."
    ),
    cache_dir: Optional[str] = typer.Option(
        None, "--cache-dir", help="tf.Transform analyzer cache: reruns analyze only new or changed input files."
    ),
) -> None:
    """Analyze and transform a dataset: sharded TFRecords + the tf.Transform graph.

    Arguments after `--` go to Beam's PipelineOptions, e.g. `-- --direct_num_workers=2`.
    """
    process_started = runtime.process_start_time()
    overrides = list(set_)
    if max_bad_fraction is not None:
        overrides.append(f"output.max_bad_fraction={max_bad_fraction}")
    if cache_dir is not None:
        overrides.append(f"cache_dir={os.path.abspath(cache_dir)}")
    if output is not None and "://" not in output:
        output = os.path.abspath(output)  # a command-line path is the shell's: relative to the current directory
    job_config = configuration.load_config(config, overrides=overrides, output_dir=output)
    output_dir = job_config.output.dir
    # said before TensorFlow is imported, as the next check; the job checks what the config reads again
    check_not_input(output_dir, files=[os.path.abspath(config)])
    if not overwrite and "://" not in output_dir and os.path.lexists(output_dir):  # a dangling link is there too
        # said before TensorFlow is imported, in a moment; the job checks again on any filesystem
        raise output_exists(output_dir)
    # so are the input paths and columns, where that needs no Beam (a CSV header is read in milliseconds)
    checked = preflight.check_inputs(job_config)
    # the imports below take seconds (a minute and more on a cold disk): say at once that the job is starting
    say(f"skewless run {job_config.name}: starting (importing TensorFlow, tf.Transform and Beam)", err=True)
    # meanwhile another process parses the input on the idle core, into the staging folder claimed for the run
    with ahead_of_imports.started(job_config, checked) as ahead:
        runtime.import_tf_transform_stack("tensorflow", "tensorflow_transform.beam", "apache_beam")
        title = f"skewless run {job_config.name}"
        result = run_command.run(job_config, overwrite=overwrite, beam_args=list(ctx.args),
                                 progress=_progress_of(title), process_started=process_started, parse_ahead=ahead)
    # after publishing, so the page names the run's real path; `skewless report` can always re-render it
    page = report_page.render_report(result.output_dir)
    say(result.summary())
    say(f"report: {page}")


@_command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})
@reports_errors("run_dir")
def apply(
    ctx: typer.Context,
    run_dir: str = typer.Argument(..., help="A run directory written by `skewless run`: its graph is applied."),
    output: str = typer.Option(..., "--output", "-o", help="Output directory for the transformed shards."),
    inputs: List[str] = typer.Option(
        [], "--input", "-i", help="New raw data, files or globs (repeatable; default: the run's own input)."
    ),
    format: Optional[str] = typer.Option(
        None, "--format", help=f"{_FILE_FORMATS} (default: what the --input names say, else the run's)."
    ),
    header: Optional[bool] = typer.Option(
        None, "--header/--no-header",
        help="CSV: whether the first line names the columns (default: the run's; yes for a run of another format).",
    ),
    columns: Optional[str] = typer.Option(
        None, "--columns", help="Headerless CSV: comma-separated column names (default: the run's)."
    ),
    splits: Optional[str] = typer.Option(None, "--splits", help="all: every row in one split, 'all' (default: the run's splits)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing output directory."),
    max_bad_fraction: Optional[float] = typer.Option(
        None, "--max-bad-fraction", help="Fail past this fraction of quarantined rows (default: the run's)."
    ),
) -> None:
    """Transform new data with a run's graph, never re-analyzed: its mean, std, vocabularies and OOV ids.

    Arguments after `--` go to Beam's PipelineOptions, e.g. `-- --direct_num_workers=2`.
    """
    process_started = runtime.process_start_time()
    if format is not None and format not in FILE_FORMATS:
        fail(f"--format {format}: not one of {', '.join(FILE_FORMATS)}")
    if splits is not None and splits != "all":
        fail(f"--splits {splits}: only 'all' (one split of every row) can replace the run's splits")
    if "://" not in run_dir and not os.path.exists(run_directory.RunDirectory(run_dir).config_file):
        fail(f"{run_dir}: not a run directory of `skewless run` (no {run_directory.CONFIG_FILE})")
    if "://" not in output:
        output = os.path.abspath(output)
        check_not_input(output, folders=[run_dir])  # said before TensorFlow is imported; the job checks again
        if not overwrite and os.path.lexists(output):
            raise output_exists(output)
    _check_input_paths(inputs)
    runtime.import_tf_transform_stack("tensorflow", "tensorflow_transform", "apache_beam")
    title = f"skewless apply {os.path.basename(os.path.normpath(run_dir))}"
    result = apply_command.apply(run_dir, output, inputs=inputs or None, input_format=format,
                                 columns=columns.split(",") if columns else None, header=header,
                                 one_split=splits == "all", overwrite=overwrite, beam_args=list(ctx.args),
                                 process_started=process_started, max_bad_fraction=max_bad_fraction,
                                 progress=_progress_of(title))
    page = report_page.render_report(result.output_dir)
    say(result.summary())
    say(f"report: {page}")


@_command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})
@reports_errors("export_dir")
def predict(
    ctx: typer.Context,
    export_dir: str = typer.Argument(..., help="A SavedModel written by `skewless export`: its serving_default runs."),
    inputs: List[str] = typer.Option(..., "--input", "-i", help="Raw data to score, files or globs (repeatable)."),
    output: str = typer.Option(..., "--output", "-o", help="Output directory for the prediction files."),
    format: str = typer.Option("csv", "--format", help=f"Prediction files: {' | '.join(PREDICTION_FORMATS)}."),
    keys: List[str] = typer.Option(
        [], "--keys", "-k", help="Input column copied beside each prediction, to join it back (repeatable)."
    ),
    input_format: Optional[str] = typer.Option(
        None, "--input-format", help=f"{_FILE_FORMATS} (default: from the file names)."
    ),
    columns: Optional[str] = typer.Option(
        None, "--columns", help="Headerless CSV: comma-separated column names (default: the first line names them)."
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an earlier prediction output."),
) -> None:
    """Score raw data with an export's serving_default, on Beam's RunInference: one row per input row.

    Arguments after `--` go to Beam's PipelineOptions, e.g. `-- --direct_num_workers=2`.
    """
    process_started = runtime.process_start_time()
    if format not in PREDICTION_FORMATS:
        fail(f"--format {format}: not one of {', '.join(PREDICTION_FORMATS)}")
    if "://" not in export_dir and not os.path.isdir(export_dir):
        fail(f"{export_dir}: no such directory (an export of `skewless export`)")
    if "://" not in output:
        output = os.path.abspath(output)
        check_not_input(output, folders=[export_dir], files=inputs)  # before TensorFlow is imported; predict again
        if not overwrite and os.path.lexists(output):
            raise output_exists(output)
    _check_input_paths(inputs)
    runtime.import_frozen("tensorflow", "apache_beam")
    result = predict_command.predict(export_dir, inputs, output, output_format=format, keys=keys,
                                     input_format=input_format, columns=columns.split(",") if columns else None,
                                     overwrite=overwrite, beam_args=list(ctx.args), process_started=process_started)
    say(result.summary())


def _progress_of(title: str) -> Callable:
    """The job's progress watcher: the live display, which Ctrl-C interrupts."""
    return lambda poll: progress_display.show_progress(poll, title=title, interrupted=_interrupted)


def _check_input_paths(inputs: List[str]) -> None:
    """An --input that matches no file (or names a folder) is refused before TensorFlow and Beam are imported,
    with the job's own error (`pipelines/plan/preflight.py`)."""
    preflight.local_inputs([os.path.abspath(path) for path in inputs if "://" not in path])


schema_app = typer.Typer(cls=Group, no_args_is_help=True, rich_markup_mode=None,
                         help="Infer and validate tf.metadata schemas (.pbtxt).")
app.add_typer(schema_app, name="schema")

# The CSV options of both schema commands, named as in the job config's `input:` section.
_INPUTS = typer.Argument(..., help="Input files or globs.")
_FORMAT = typer.Option(None, "--format", help=f"{_FILE_FORMATS} (default: from the file names).")
_HEADER = typer.Option(False, "--header", help="CSV: the first line of each file names the columns.")
_COLUMNS = typer.Option(None, "--columns", help="CSV: comma-separated column names (needed without --header).")
_DELIMITER = typer.Option(",", "--delimiter", help="CSV: the field delimiter.")
_SKIP_SPACE = typer.Option(
    None, "--skip-initial-space/--no-skip-initial-space", show_default="auto",
    help="CSV: spaces after a delimiter are no part of the field (never inside quotes); by default, where every"
         " field after a delimiter in the first lines starts with one.",
)


@schema_app.command("infer", cls=Command, epilog=EXIT_CODES)
@reports_errors("inputs")
def schema_infer(
    inputs: List[str] = _INPUTS,
    format: Optional[str] = _FORMAT,
    # --out: the name before every command that writes took --output/-o, kept so that scripts still work
    out: Optional[str] = typer.Option(None, "--output", "-o", "--out", help="Write the .pbtxt here (default: stdout)."),
    header: bool = _HEADER,
    columns: Optional[str] = _COLUMNS,
    delimiter: str = _DELIMITER,
    skip_initial_space: Optional[bool] = _SKIP_SPACE,
    max_domain_size: int = typer.Option(100, "--max-domain-size", help="Most distinct values of a categorical."),
) -> None:
    """Infer a schema from data: types, presence, categorical domains, value counts."""
    config = reading.input_config(inputs, format, header, columns, delimiter,
                                  "auto" if skip_initial_space is None else skip_initial_space)
    input_format = reader_of(config.format)
    paths = input_format.inputs(config)
    # the job's own inference types the columns: the schema says what a job without one reads (a column of a type
    # the job cannot read is left to infer_schema, which says so)
    kinds = raw_types.infer_types(input_format.resolved(config, paths), paths, wanted=())
    inferred = schema_inference.infer_schema(config, reading.read_batches(config), max_domain_size=max_domain_size,
                                             kinds=kinds)
    if out:
        schemas.write_schema(inferred.schema, out)
    else:
        typer.echo(text_format.MessageToString(inferred.schema), nl=False)
    skipped = f", skipped {inferred.rejected} rows that do not split into columns" if inferred.rejected else ""
    typer.echo(f"{len(inferred.schema.feature)} features from {inferred.rows} rows{skipped}", err=True)


@schema_app.command("validate", cls=Command, epilog=EXIT_CODES)
@reports_errors("inputs")
def schema_validate(
    inputs: List[str] = _INPUTS,
    schema: str = typer.Option(..., "--schema", help="The schema (.pbtxt) the data must follow."),
    format: Optional[str] = _FORMAT,
    header: bool = _HEADER,
    columns: Optional[str] = _COLUMNS,
    delimiter: str = _DELIMITER,
    skip_initial_space: Optional[bool] = _SKIP_SPACE,
    examples: int = typer.Option(3, "--examples", min=0, help="Example rows shown per anomaly."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Check data against a schema; exit code 1 when any anomaly is found."""
    loaded = schemas.load_schema(schema)
    if columns is None and not header:
        # Headerless CSV: the schema's features, in order, are the columns (other formats ignore this).
        columns = ",".join(feature.name for feature in loaded.feature)
    config = reading.input_config(inputs, format, header, columns, delimiter,
                                  "auto" if skip_initial_space is None else skip_initial_space)
    report = schema_validation.validate(reading.read_batches(config), loaded, max_examples=examples)
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        validation_table.print_report(report)
    if not report.clean:
        raise typer.Exit(1)


@_command()
@reports_errors("run_dir")
def export(
    run_dir: str = typer.Argument(..., help="The run directory `skewless run` wrote."),
    model: str = typer.Option(..., "--model", help="The trained Keras model (.keras)."),
    # --out: the name before every command that writes took --output/-o, kept so that scripts still work
    out: str = typer.Option(..., "--output", "-o", "--out", help="Where to write the SavedModel."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing export directory."),
) -> None:
    """Write a TF Serving SavedModel: raw tf.Example in, the run's transform graph, then the model."""
    # said before TensorFlow and Keras are imported; export_serving_model checks again, on any filesystem
    if "://" not in out:
        check_not_input(out, folders=[run_dir], files=[model])
        check_export_folder(out, overwrite)
    check_model_file(model)
    runtime.import_frozen("tensorflow", "keras")
    if not object_store.tensorflow_opens(out):
        fail(f"{out}: TensorFlow cannot write this store (a SavedModel is written by TensorFlow); export to a local folder and copy it")
    layers.export_serving_model(object_store.local_run(run_dir), model, out, overwrite=overwrite)
    api = layers.read_spec_file(out)["api_signature"] or {}
    signatures = ", ".join(["serving_default", "predict_raw", "transform_features", *([api["name"]] if "name" in api else [])])
    left_out = f"; no Classify/Regress API signature: {api['left_out']}" if "left_out" in api else ""
    say(f"exported {out} (signatures: {signatures}){left_out}")


@_command()
@reports_errors("run_dir")
def verify(
    run_dir: str = typer.Argument(..., help="A run directory written by `skewless run`."),
    sample: int = typer.Option(1000, "--sample", "-n", min=1, help="Raw rows to take from the run's input."),
    export_dir: Optional[str] = typer.Option(
        None, "--export", help="Check this export's transform_features signature instead of TransformLayer."
    ),
) -> None:
    """Skew check: the batch path and the serving path must transform the same raw rows identically.

    The input's first rows are also read as the source holds them (CSV text untrimmed, JSON booleans, NA
    tokens, lists, dates): the run's shards against the TransformLayer, predict_raw, the export's
    transform_features and the native preprocessor (dense and sparse input), row by row; rows the job
    quarantined must be refused at serving (but for their label alone: serving takes none); with --export, a
    row's serving_default output alone must equal its output in a batch. Each difference names the path, the
    feature and the rows (file:line).

    Exits 0 when every path is equal, 1 on any difference, 2 when no difference was found but a check
    could not run (each is printed as "could not check: ...").
    """
    runtime.import_tf_transform_stack("tensorflow", "tensorflow_transform.beam", "apache_beam")
    result = verify_run.verify(run_dir, sample=sample, export_dir=export_dir)
    verify_tables.print_result(result)
    if result.exit_code:
        raise typer.Exit(result.exit_code)


@_command()
@reports_errors("run_dir")
def report(
    run_dir: str = typer.Argument(
        ..., help="A run directory written by `skewless run`, or an output of `skewless apply`."
    ),
    open_: bool = typer.Option(False, "--open", help="Open the report in the default web browser."),
) -> None:
    """Re-render RUN_DIR/report.html: run summary, train vs eval per feature, warnings, quarantine reasons; for an
    output of `skewless apply`, the graph it used and its statistics compared with the training run's."""
    path = report_page.render_report(run_dir)
    say(path)
    if open_:
        webbrowser.open(pathlib.Path(path).resolve().as_uri())


@_command()
@reports_errors("run_dir")
def validate(
    run_dir: str = typer.Argument(..., help="A run directory written by `skewless run`."),
    against: Optional[str] = typer.Option(
        None, "--against", help="A baseline run: each split of RUN_DIR is compared with the same split of it, else "
        "its train split (drift)."
    ),
    splits: Optional[str] = typer.Option(
        None, "--splits", help="Comma-separated: the first split is compared with each other one (skew); "
        "default: the run's splits."
    ),
    threshold: List[str] = typer.Option(
        [], "--threshold", help="0.1 for every feature without a schema threshold, or feature=0.05 (repeatable); "
        "else each measure's default (printed in the table; docs/statistics.md)."
    ),
    schema: Optional[str] = typer.Option(
        None, "--schema", help="The schema whose drift_comparator / skew_comparator give thresholds "
        "(default: the run's config `schema:`, else the --against run's)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Compare statistics: L-infinity for strings, Jensen-Shannon over bins that follow the baseline's data for
    numbers (docs/statistics.md); exit 1 when a threshold is crossed."""
    with_statistics = statistics_files.statistics_splits(run_dir)
    if not with_statistics:
        fail(f"{run_dir}: no statistics/Split-*/FeatureStats.pb; is it a run directory of `skewless run` or `apply`?")
    for run in (run_dir, against):  # a run this skewless cannot read is refused, as every command refuses it
        if run is not None:
            run_directory.RunDirectory(run).read_summary()
    config = run_directory.RunDirectory(run_dir).read_config()
    # the config's order where it has one (an applied run's is the run's): the first split is the others' baseline
    configured = [split for split in (config.get("output") or {}).get("splits") or {} if split in with_statistics]
    ordered = configured + [split for split in with_statistics if split not in configured]
    thresholds = drift.validation_thresholds(run_dir, against, threshold, schema)
    exclude = drift.drift_exclusions(run_dir, against)
    named = [split for split in (splits or "").split(",") if split]
    if against is not None:
        baselines = statistics_files.statistics_splits(against)
        chosen = (named or ordered) if baselines else []
        comparisons = [drift.compare(against, drift.baseline_split(baselines, split), run_dir, split, thresholds,
                                     drift.DRIFT, exclude) for split in chosen]
    else:
        chosen = named or ordered
        if len(chosen) < 2:
            fail(f"{run_dir}: give --against OTHER_RUN, or --splits with two splits or more (splits with "
                 f"statistics: {', '.join(with_statistics) or 'none'})")
        comparisons = [drift.compare(run_dir, chosen[0], run_dir, split, thresholds, drift.SKEW, exclude)
                       for split in chosen[1:]]
    if not comparisons:
        fail(f"{run_dir}: no split with statistics in both runs")
    if as_json:
        crossed = sum(len(c.crossed) for c in comparisons)
        typer.echo(json.dumps({"comparisons": [c.to_json() for c in comparisons], "crossed": crossed}, indent=2))
    else:
        drift_tables.print_comparisons(comparisons)
    if any(c.crossed for c in comparisons):
        raise typer.Exit(1)


@_command()
@reports_errors("run_dir")
def inspect(
    run_dir: str = typer.Argument(..., help="A run directory written by `skewless run`."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
    top: int = typer.Option(10, "--top", min=0, help="Vocabulary entries to show per feature."),
) -> None:
    """Show a run: schema, transformed spec, statistics, vocabularies, top values, shards."""
    description = inspect_run.describe_run(run_dir, top=top)
    if as_json:
        typer.echo(json.dumps(description, indent=2))
    else:
        inspect_tables.print_run(description)


@_command()
@reports_errors("output")
def clean(
    output: str = typer.Argument(..., help="The output directory a run, apply, predict or export was writing."),
) -> None:
    """Remove what killed runs of OUTPUT left beside it: OUTPUT.staging and the claim folders OUTPUT.staging-PID-TOKEN,
    each only when its owner record proves a skewless run made it and that run is gone. Anything else (someone's
    OUTPUT.staging-backup, a file) and OUTPUT itself are never touched; refused while a running skewless writes
    OUTPUT."""
    if "://" not in output:
        output = os.path.abspath(output)
    removed = staging.clean(output)
    say("\n".join(f"removed {path}" for path in removed) or f"nothing left beside {output}")


def main() -> None:
    """The `skewless` command (the CLI's commands called in-process, e.g. by tests, keep IPython importable
    and end as usual)."""
    runtime.arrow_allocates_from_malloc()
    runtime.keep_freed_memory()
    runtime.no_ipython()
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when the shell ignores it (`nohup`, `&`)
        signal.signal(signal.SIGINT, _on_interrupt)
    # a scheduler's stop (SIGTERM) and a closed terminal (SIGHUP) end the command as Ctrl-C does, its staging folder
    # removed, rather than killing it where it stands; not where they are ignored (`nohup` ignores SIGHUP)
    for stop in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(stop) is signal.SIG_DFL:
            signal.signal(stop, _on_interrupt)
    try:
        app()
    except KeyboardInterrupt:  # one raised after the command's own handling (`reports_errors`) ended
        typer.echo("skewless: interrupted", err=True)
        runtime.exit_without_teardown(INTERRUPTED, interrupted=True)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            _flush_stdout()
            runtime.exit_without_teardown(done.code or 0, interrupted=interrupt_request.REQUESTED.is_set())
        raise


def _flush_stdout() -> None:
    """What the command left in stdout's buffer, written now: a closed pipe then ends the output quietly (the
    interpreter would print a BrokenPipeError while exiting, with exit code 120)."""
    try:
        sys.stdout.flush()
    except OSError as error:
        if _closed_stdout(error):
            with contextlib.suppress(typer.Exit):
                stdout_closed()


if __name__ == "__main__":
    main()

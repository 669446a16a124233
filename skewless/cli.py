"""The `skewless` command.

Each command imports what it needs inside its function: `skewless export` must work in a serving
container that has TensorFlow and no Apache Beam, and `--help` should not pay for importing either.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from skewless.errors import SkewlessError

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Beam + tf.Transform preprocessing whose graph Keras 3 models reuse at serving time.",
)


@app.callback()
def _root() -> None:
    """Beam + tf.Transform preprocessing whose graph Keras 3 models reuse at serving time."""


def fail(message: str, code: int = 2) -> None:
    """Prints one line on stderr and exits: the CLI's answer to every user error."""
    typer.echo(f"skewless: error: {message}", err=True)
    raise typer.Exit(code)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})
def run(
    ctx: typer.Context,
    config: str = typer.Argument(..., help="The job config (YAML)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Output directory (replaces output.dir)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing output directory."),
    set_: List[str] = typer.Option([], "--set", help="Override a config value: key.path=value (repeatable)."),
    max_bad_fraction: Optional[float] = typer.Option(
        None, "--max-bad-fraction", help="Fail past this fraction of quarantined rows (default 0.01)."
    ),
) -> None:
    """Analyze and transform a dataset: sharded TFRecords + the tf.Transform graph.

    Arguments after `--` go to Beam's PipelineOptions, e.g. `-- --direct_num_workers=2`.
    """
    from skewless.config import load_config
    from skewless.pipelines.job import run as run_job

    overrides = list(set_)
    if max_bad_fraction is not None:
        overrides.append(f"output.max_bad_fraction={max_bad_fraction}")
    try:
        job_config = load_config(config, overrides=overrides, output_dir=output)
        result = run_job(job_config, overwrite=overwrite, beam_args=list(ctx.args))
    except SkewlessError as error:
        fail(str(error))
    typer.echo(result.summary())


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("skewless: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()

"""The CLI reference page (docs/cli.md), generated from the commands themselves, so it cannot drift from them.

`python -m skewless.cli_reference > docs/cli.md` rewrites the page; tests/docs/test_cli_reference.py fails when
the committed page differs from what this prints.
"""

import inspect

import typer

from skewless.cli import app

HEADER = """# CLI reference

Generated from `skewless/cli.py` by `python -m skewless.cli_reference > docs/cli.md`; a test fails when this page
differs from the commands. `skewless COMMAND --help` prints the same in a terminal. Every command answers an
error with one line on stderr and exit code 2 (see [Errors and exit codes](errors.md)), and takes `--debug` (or
`SKEWLESS_DEBUG=1`) to show the traceback instead. `skewless --version` prints the installed version.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _value(param) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    return "one value" if param.nargs == 1 and not getattr(param, "multiple", False) else "repeatable"


def _default(param) -> str:
    if param.required:
        return "required"
    if getattr(param, "is_flag", False) or param.default in (None, [], ()):
        return ""
    return f"`{param.default}`"


def _command_section(path: str, command) -> list[str]:
    lines = [f"## `{path}`", "", inspect.cleandoc(command.help or ""), ""]
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    options = [p for p in command.params if p.param_type_name == "option"]
    usage = " ".join([path, "[OPTIONS]" if options else "",
                      *(p.name.upper() + ("..." if p.nargs != 1 else "") for p in arguments)])
    lines += ["```text", " ".join(usage.split()), "```", ""]
    if arguments:
        lines += ["| argument | help |", "|---|---|"]
        lines += [f"| `{p.name.upper()}` | {_cell(p.help or '')} |" for p in arguments]
        lines.append("")
    if options:
        lines += ["| option | takes | default | help |", "|---|---|---|---|"]
        for p in options:
            names = ", ".join(f"`{name}`" for name in [*p.opts, *p.secondary_opts])
            lines.append(f"| {names} | {_value(p)} | {_default(p)} | {_cell(p.help or '')} |")
        lines.append("")
    return lines


def markdown() -> str:
    """The page: one section per command, in the order `skewless --help` lists them, sub-commands after."""
    root = typer.main.get_command(app)
    lines = [HEADER]

    def walk(prefix: str, group) -> None:
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                walk(f"{prefix} {name}", command)
            else:
                lines.extend(_command_section(f"{prefix} {name}", command))

    walk("skewless", root)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(markdown(), end="")

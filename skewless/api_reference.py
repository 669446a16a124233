"""The Python API page (docs/api.md), generated from the `__all__` of the package's four faces, so the reference
holds exactly the public names, headed by the names a user imports (`skewless.pipelines.run`, not the module that
defines it).

`python -m skewless.api_reference > docs/api.md` rewrites the page; tests/docs/test_site.py fails when the
committed page differs from what this prints, and tests/architecture/test_public_api.py checks the faces against it.
"""

import inspect
from importlib import import_module

# the faces: what a user imports; every other module of the package is internal
FACES = ("skewless", "skewless.pipelines", "skewless.layers", "skewless.schemas")

HEADER = """# Python API

Generated from the `__all__` of `skewless`, `skewless.pipelines`, `skewless.layers` and `skewless.schemas` by
`python -m skewless.api_reference > docs/api.md`; a test fails when this page differs from them. These names are
the public API: import them from the module that heads their section; every other module is internal and may
change. The command line covers the same ground: see the [CLI reference](cli.md).
"""


def public_names(face: str) -> list[str]:
    """`face.name` for each name of the face's `__all__`, in its order."""
    return [f"{face}.{name}" for name in import_module(face).__all__]


def defined_at(public: str) -> str:
    """Where mkdocstrings reads the object: its defining module's path for a class or function, which the
    source tree holds even when the face imports it lazily; the public name for a constant (griffe follows the
    face's import of it)."""
    face, name = public.rsplit(".", 1)
    found = getattr(import_module(face), name)
    if inspect.isclass(found) or inspect.isfunction(found):
        return f"{found.__module__}.{found.__qualname__}"
    return public


def _summary(face: str) -> str:
    """The face's docstring's first paragraph, on one line."""
    return " ".join(inspect.getdoc(import_module(face)).split("\n\n")[0].split())


def markdown() -> str:
    lines = [HEADER]
    for face in FACES:
        lines += [f"## {face}", "", _summary(face), ""]
        for public in public_names(face):
            # the heading is the public name; mkdocstrings renders the object below it without its own path
            lines += [f"### {public}", "", f"::: {defined_at(public)}", "    options:",
                      "      show_root_heading: false", "      heading_level: 4", ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(markdown(), end="")

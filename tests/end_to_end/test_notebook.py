"""notebooks/quickstart.ipynb runs top to bottom in a real Jupyter kernel and is stored without outputs.

Any failing cell fails the test (nbclient raises CellExecutionError naming the cell and its error).
The notebook writes into `tempfile.mkdtemp()`, pointed at pytest's tmp_path through TMPDIR.
"""


import pytest
from example_job import REPO

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = REPO / "notebooks" / "quickstart.ipynb"


def code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def test_stored_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    for cell in code_cells(notebook):
        assert cell.outputs == [] and cell.execution_count is None, cell.source[:80]


# the last cell, added by the test: which of Beam's Interactive modules the kernel imported
_INTERACTIVE_MODULES = (
    "import sys\n"
    "print('interactive modules:', sorted(m for m in sys.modules if m.startswith('apache_beam.runners.interactive')))"
)


def test_runs_top_to_bottom(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    # what a reader's kernel has: the notebook itself keeps TensorFlow's start-up lines out of its cells
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(_INTERACTIVE_MODULES))
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()

    outputs = [output for cell in code_cells(notebook) for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    # nothing on stderr: no TensorFlow start-up lines, no library warnings
    assert not [output.text for output in outputs if output.output_type == "stream" and output.name == "stderr"]
    # the plots of the transformed features and of training are there (matplotlib is required, not optional)
    images = [output for output in outputs if "image/png" in output.get("data", {})]
    assert len(images) == 2, [sorted(output.get("data", {})) for output in outputs]
    # nothing fetched: Beam's Interactive environment (jQuery and DataTables from CDNs) never started
    assert "interactive modules: []" in "".join(output.get("text", "") for output in outputs)
    shown = "".join(str(output.get("data", {})) for output in outputs)
    assert "code.jquery.com" not in shown and "<script" not in shown
    # rich (the skew check's table) shows itself as display data in a kernel, print() as a stream
    printed = "".join(output.get("text", "") + output.get("data", {}).get("text/plain", "") for output in outputs)
    assert "read 10,000 rows" in printed  # the job ran on the configured rows
    assert "no differences" in printed  # the skew check's verdict
    assert "val_accuracy" in printed and "embedding" in printed  # the training curve; model_inputs' plan
    assert "label left out" in printed and "predicted 300 of 300 rows" in printed  # apply and predict, new rows
    # everything the notebook wrote stayed under its temporary folder
    work = [path for path in tmp_path.iterdir() if path.name.startswith("skewless-quickstart-")]
    assert len(work) == 1 and (work[0] / "out" / "run.json").exists() and (work[0] / "export" / "1").is_dir()

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


def test_runs_top_to_bottom(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()

    outputs = [output for cell in code_cells(notebook) for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    # rich (the skew check's table) shows itself as display data in a kernel, print() as a stream
    printed = "".join(output.get("text", "") + output.get("data", {}).get("text/plain", "") for output in outputs)
    assert "read 10,000 rows" in printed  # the job ran on the configured rows
    assert "no differences" in printed  # the skew check's verdict
    assert "val_accuracy" in printed and "embedding" in printed  # the training curve; model_inputs' plan
    assert "label left out" in printed and "predicted 300 of 300 rows" in printed  # apply and predict, new rows
    # everything the notebook wrote stayed under its temporary folder
    work = [path for path in tmp_path.iterdir() if path.name.startswith("skewless-quickstart-")]
    assert len(work) == 1 and (work[0] / "out" / "run.json").exists() and (work[0] / "export" / "1").is_dir()

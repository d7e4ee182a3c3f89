"""The notebooks are committed clean: valid nbformat, a python3 kernel, and no outputs at all
(so no stale results and no error outputs), every cell unexecuted."""

import nbformat
import pytest
from notebook_runner import NOTEBOOKS

COMMITTED = sorted(NOTEBOOKS.glob("*.ipynb"))


def test_there_are_notebooks():
    assert len(COMMITTED) == 5, COMMITTED


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.name)
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells, "a notebook without code"
    assert [cell.outputs for cell in code_cells] == [[] for _ in code_cells]
    assert [cell.execution_count for cell in code_cells] == [None for _ in code_cells]


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.name)
def test_notebook_opens_with_an_explanation_and_ends_by_cleaning_up(path):
    notebook = nbformat.read(path, as_version=4)
    assert notebook.cells[0].cell_type == "markdown"
    assert notebook.cells[0].source.startswith("# ")
    last_code = [cell for cell in notebook.cells if cell.cell_type == "code"][-1]
    assert "kafka.stop()" in last_code.source

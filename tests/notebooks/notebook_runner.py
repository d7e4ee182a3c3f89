"""Run a notebook of notebooks/ top to bottom in a real ipykernel and report what it printed and
what it left behind.

Each notebook runs in a fresh ``python3`` kernel started with this interpreter (the venv's), with
its working directory and ``TMPDIR`` in directories of the test's own, so anything a notebook
forgets to clean up shows there. A last cell, added to the copy being run and never saved,
reports the kernel's process id and its child processes while the kernel still runs: a notebook
that forgot to stop its local Kafka still has the ZooKeeper server among them.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import psutil
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CELL_TIMEOUT_S = 300
KERNEL_STARTUP_TIMEOUT_S = 120
PROBE_MARKER = "notebook-probe:"
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")  # IPython colours its tracebacks

# Runs in the kernel after the notebook's last cell.
PROBE = f"""
import json as _json, os as _os, sys as _sys
import psutil as _psutil

def _describe(process):
    try:
        return {{"pid": process.pid, "created": process.create_time(),
                 "cmdline": process.cmdline()}}
    except _psutil.Error:  # it ended meanwhile
        return None

print({PROBE_MARKER!r}, _json.dumps({{
    "prefix": _sys.prefix,
    "kernel": _describe(_psutil.Process()),
    "children": [d for d in map(_describe, _psutil.Process().children(recursive=True)) if d],
}}))
"""


class NotebookFailed(AssertionError):
    """A cell raised or timed out; the message holds the cell's source and the traceback."""


@dataclass
class ExecutedNotebook:
    name: str
    notebook: nbformat.NotebookNode  # with outputs, the probe cell removed
    probe: dict
    workdir: Path
    tmpdir: Path

    @property
    def text(self) -> str:
        """Everything the cells printed or displayed as text, in order."""
        parts = []
        for cell in self.notebook.cells:
            for output in cell.get("outputs", []):
                if output.output_type == "stream":
                    parts.append(output.text)
                elif output.output_type in ("execute_result", "display_data"):
                    parts.append(output.get("data", {}).get("text/plain", ""))
        return "\n".join(parts)

    def images(self) -> int:
        """How many PNG images (matplotlib figures) the cells displayed."""
        return sum("image/png" in output.get("data", {})
                   for cell in self.notebook.cells for output in cell.get("outputs", []))

    def error_outputs(self) -> list:
        return [output for cell in self.notebook.cells for output in cell.get("outputs", [])
                if output.output_type == "error"]


def execute(name: str, root: Path) -> ExecutedNotebook:
    """Run ``notebooks/<name>`` in a fresh kernel; NotebookFailed if any cell fails."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
    workdir, tmpdir = root / "cwd", root / "tmp"
    workdir.mkdir(parents=True)
    tmpdir.mkdir(parents=True)
    client = NotebookClient(
        notebook, kernel_name="python3", timeout=CELL_TIMEOUT_S,
        startup_timeout=KERNEL_STARTUP_TIMEOUT_S, allow_errors=False,
        resources={"metadata": {"path": str(workdir)}})
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    try:
        # jupyter_client starts the kernelspec's "python" as sys.executable: this venv's
        client.execute(env=env)
    except (CellExecutionError, CellTimeoutError) as exc:
        raise NotebookFailed(f"{name} failed:\n{ANSI_ESCAPE.sub('', str(exc))}") from None
    probe_cell = notebook.cells.pop()
    probe = _probe_result(name, probe_cell)
    if Path(probe["prefix"]).resolve() != Path(sys.prefix).resolve():
        raise NotebookFailed(f"{name} ran in the Python of {probe['prefix']}, "
                             f"not this one ({sys.prefix})")
    return ExecutedNotebook(name, notebook, probe, workdir, tmpdir)


def _probe_result(name: str, cell) -> dict:
    for output in cell.get("outputs", []):
        if output.output_type == "stream" and PROBE_MARKER in output.text:
            return json.loads(output.text.split(PROBE_MARKER, 1)[1])
    raise NotebookFailed(f"{name}: the process probe printed nothing: {cell.get('outputs')}")


def still_running(described: dict) -> bool:
    """Whether the process described by the probe (pid and start time) still runs."""
    try:
        process = psutil.Process(described["pid"])
        return process.create_time() == described["created"] and \
            process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def wait_for_exit(described: list[dict], timeout_s: float) -> list[dict]:
    """Wait until none of the processes runs; those still running at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        alive = [d for d in described if still_running(d)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)

"""kpy's build backend: setuptools' own (``setuptools.build_meta``), with one addition for
editable installs, so that Spark finds ``format("kpy")`` after ``pip install -e .`` too.

Spark registers the Python data sources it finds in modules named ``pyspark_*`` by listing the
importable modules with :func:`pkgutil.iter_modules`, which walks the directories of
``sys.path``. A regular install puts ``pyspark_kpy`` (kept in ``kspark/_discovery/``) straight
into site-packages, where that walk finds it. An editable install of setuptools puts nothing
there: a meta path finder maps the names to the source tree, and ``pkgutil`` never asks it. So
the editable wheel gets one more file, ``__editable__.pyspark_kpy.pth``, holding the path of
``kspark/_discovery/``: Python adds it to ``sys.path`` at start-up (``site``), and the walk finds
``pyspark_kpy`` there, the very module the finder maps.

``pyproject.toml`` names this module in ``[build-system]`` (``backend-path = ["kspark/_build"]``);
it is not part of the installed packages.
"""

import base64
import hashlib
import zipfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - every hook, as setuptools defines it

#: The directory of ``pyspark_kpy`` in the source tree.
DISCOVERY_DIR = Path(__file__).resolve().parent.parent / "_discovery"
DISCOVERY_PTH = "__editable__.pyspark_kpy.pth"


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """setuptools' editable wheel, with :data:`DISCOVERY_PTH` added."""
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    add_file(Path(wheel_directory) / name, DISCOVERY_PTH, f"{DISCOVERY_DIR}\n".encode())
    return name


def add_file(wheel: Path, name: str, data: bytes) -> None:
    """Add ``name`` with ``data`` at the top of ``wheel`` (installed into site-packages), and
    its line to the wheel's RECORD (name, sha256 as urlsafe base64 without padding, size)."""
    with zipfile.ZipFile(wheel) as source:
        entries = [(info, source.read(info)) for info in source.infolist()]
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    line = f"{name},sha256={digest},{len(data)}\n".encode()
    rewritten = wheel.with_name(wheel.name + ".part")
    with zipfile.ZipFile(rewritten, "w", zipfile.ZIP_DEFLATED) as target:
        target.writestr(name, data)
        for info, payload in entries:
            if info.filename.endswith(".dist-info/RECORD"):
                payload = payload.rstrip(b"\n") + b"\n" + line
            target.writestr(info, payload)
    rewritten.replace(wheel)

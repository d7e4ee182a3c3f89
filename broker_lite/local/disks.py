"""Disk faults for a local cluster's brokers: a log directory that fills up, and one whose writes
fail, each for real.

* **Full**: each log directory of a broker is a filesystem of its own, a tmpfs mounted with a
  size (``mount -t tmpfs -o size=N``: root, as on this project's machines and CI). Filling it
  writes a file (``disk-filler``, beside the partitions' directories, which the log ignores)
  until the filesystem refuses with ENOSPC; the broker's next writes then fail as a full disk's
  do, part-way through when only some bytes fit. Freeing it deletes the file. A tmpfs and not a
  loop device: it needs no device, leaves nothing behind when a test dies (unmounted at stop,
  lazily if still busy), and behaves as a full disk for every write a broker makes.
* **Failing**: writes and syncs of files under the directory fail with EIO, from an
  ``LD_PRELOAD`` library (``failing_io.c`` beside this module, compiled with the machine's C
  compiler the first time it is needed) that every broker process of a fault-injecting cluster
  loads. A kernel-level fault (device-mapper's ``error`` target) needs a device-mapper this
  machine's kernel does not offer, and a FUSE layer would route every write of the directory
  through a Python process; the library costs nothing until it fails a directory, and the
  broker meets exactly the ``OSError(EIO)`` a failing disk gives. Each broker process reads its
  own control file (``KPY_FAILING_IO_CONTROL``), rewritten here, so a directory fails and
  recovers while the broker runs.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

CONTROL_SIZE = 4096  # failing_io.c's CONTROL_SIZE
CONTROL_VARIABLE = "KPY_FAILING_IO_CONTROL"
FILLER = "disk-filler"
_SOURCE = Path(__file__).with_name("failing_io.c")


class DiskFaultError(RuntimeError):
    """A disk fault cannot be set up here: why, and what would allow it."""


class LogDisk:
    """A log directory on a tmpfs of ``size_bytes`` of its own."""

    def __init__(self, path: Path, size_bytes: int):
        self.path = Path(path)
        self.size_bytes = size_bytes
        self.mounted = False

    def mount(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        if os.path.ismount(self.path):
            self.mounted = True
            return
        result = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.size_bytes},mode=0755", "tmpfs",
             str(self.path)], capture_output=True, text=True)
        if result.returncode != 0:
            raise DiskFaultError(
                f"cannot mount a {self.size_bytes}-byte tmpfs on {self.path} for a log "
                f"directory that can fill up (mounting needs root): {result.stderr.strip()}")
        self.mounted = True

    def unmount(self) -> None:
        if self.mounted:
            # lazily: a process that still has a file open there lets go of it later
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True)
            self.mounted = False

    def fill(self) -> int:
        """Write until the filesystem is full; the bytes written."""
        written = 0
        block = b"\0" * (1 << 20)
        with open(self.path / FILLER, "ab", buffering=0) as filler:
            while True:
                try:
                    count = filler.write(block)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    if len(block) == 1:
                        return written
                    block = block[:len(block) // 2]  # fill the last pages too
                    continue
                written += count or 0

    def free(self) -> None:
        (self.path / FILLER).unlink(missing_ok=True)

    def free_bytes(self) -> int:
        stats = os.statvfs(self.path)
        return stats.f_bavail * stats.f_frsize


class FailingIo:
    """The ``LD_PRELOAD`` library and one control file per broker process (see the module
    docstring)."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.library: Path | None = None

    def build(self) -> Path:
        """Compile the library into the directory (once); its path."""
        if self.library is not None:
            return self.library
        compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
        compiler = compiler.split()[0]
        if shutil.which(compiler) is None:
            raise DiskFaultError(f"failing a log directory needs a C compiler to build "
                                 f"{_SOURCE.name}; {compiler!r} is not on the PATH")
        self.directory.mkdir(parents=True, exist_ok=True)
        library = self.directory / "failing_io.so"
        result = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(library),
                                 str(_SOURCE), "-ldl"], capture_output=True, text=True)
        if result.returncode != 0:
            raise DiskFaultError(f"building {_SOURCE.name} failed: {result.stderr.strip()}")
        self.library = library
        return library

    def control_file(self, broker_id: int) -> Path:
        path = self.directory / f"broker-{broker_id}.failing"
        if not path.exists():
            path.write_bytes(b"\0" * CONTROL_SIZE)
        return path

    def environment(self, broker_id: int) -> dict[str, str]:
        """What a broker process's environment adds to load the library."""
        preload = " ".join(filter(None, [str(self.build()), os.environ.get("LD_PRELOAD")]))
        return {"LD_PRELOAD": preload, CONTROL_VARIABLE: str(self.control_file(broker_id))}

    def fail(self, broker_id: int, directories: list[Path]) -> None:
        """From now on, writes and syncs under ``directories`` fail in that broker (none: every
        write works again)."""
        listing = "".join(f"{os.path.abspath(d)}\n" for d in directories).encode()
        if len(listing) >= CONTROL_SIZE:
            raise DiskFaultError(f"too many failing directories for one broker: {directories}")
        with open(self.control_file(broker_id), "r+b") as control:
            control.write(listing + b"\0" * (CONTROL_SIZE - len(listing)))

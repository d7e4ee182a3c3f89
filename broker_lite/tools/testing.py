"""Test support for the tools: run one as a user would, in a child process (to its end, or a
long-running command read line by line), and find a port where no broker listens."""

import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest


def run_tool(*args: str, stdin: bytes | str | None = None,
             timeout_s: float = 120) -> subprocess.CompletedProcess:
    """``python -m broker_lite <args>``; stdout and stderr captured as text (UTF-8)."""
    if isinstance(stdin, str):
        stdin = stdin.encode()
    result = subprocess.run([sys.executable, "-m", "broker_lite", *map(str, args)],
                            input=stdin if stdin is not None else b"",
                            capture_output=True, timeout=timeout_s)
    return subprocess.CompletedProcess(result.args, result.returncode,
                                       result.stdout.decode("utf-8", "replace"),
                                       result.stderr.decode("utf-8", "replace"))


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class CommandProcess:
    """A long-running command (``broker-lite start``, ``broker-lite schema-registry``) in a
    child process; stdout is read line by line, stderr (the log) goes to a file."""

    def __init__(self, command: list[str], log: Path, *, cwd: Path | None = None,
                 env: dict[str, str] | None = None):
        self.log = log
        with log.open("a") as stderr:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr,
                                            cwd=cwd, env=env)
        self._pending = b""

    def line(self, timeout_s: float = 120) -> str:
        """The next line of stdout; fails with the log's tail if none comes."""
        deadline = time.monotonic() + timeout_s
        fd = self.process.stdout.fileno()
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                pytest.fail(f"no line from broker-lite in {timeout_s} s:\n{self.log_tail()}")
            chunk = os.read(fd, 4096)
            if not chunk:
                status = self.process.wait(30)
                pytest.fail(f"broker-lite exited ({status}):\n{self.log_tail()}")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode()

    def listening(self) -> tuple[str, str]:
        """Wait for a broker's listening line; return the bootstrap address and the data
        line."""
        return self.address(), self.line()

    def address(self) -> str:
        """The address at the end of the next line, which must be a listening line."""
        line = self.line()
        assert " listening on " in line, line
        return line.rsplit(" ", 1)[-1]

    def log_tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait(30)

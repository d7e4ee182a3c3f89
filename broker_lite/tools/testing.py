"""Test support for the tools: run one as a user would, in a child process, and find a port
where no broker listens."""

import socket
import subprocess
import sys


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

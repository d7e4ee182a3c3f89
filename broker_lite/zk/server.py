"""An embedded ZooKeeper server: ``ZooKeeperServerMain`` in a child ``java`` process.

Files in ``data_dir`` (which is also ZooKeeper's ``dataDir``, so snapshots and transaction logs
land in ``data_dir/version-2`` exactly as with Kafka's ``zookeeper-server-start``)::

    zoo.cfg             generated at every start from the constructor's arguments
    log4j2.properties   sends the server's log to zookeeper.log instead of the console
    zookeeper.log       the server's log (rolled at 10 MB)
    zookeeper.out       the JVM's own stdout/stderr (class loading or startup failures)
    zookeeper.lock      locked while a server runs, so two never share a dataDir

The server binds ``host`` (loopback by default) on ``port``; port 0 picks a free one, which is
then kept for later restarts of the same object so connect strings stay valid. The admin HTTP
server is off (its jars are not in pyspark) and only the ``ruok``, ``srvr`` and ``stat``
four-letter commands are allowed.

A server counts as up when ``srvr`` reports it serving. ``ruok`` is not enough: it answers
``imok`` as soon as the socket listens, even when the server failed right after.

The child cannot outlive this process: ``stop()`` runs at interpreter exit and when the object is
garbage collected, and on Linux the kernel sends the child SIGTERM if this process dies without
running any of that (``PR_SET_PDEATHSIG``; set only when starting from the main thread, because
the signal follows the death of the starting *thread*).
"""

import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Self

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, the data dir is not guarded
    fcntl = None  # type: ignore[assignment]  # an optional module: the stubs know no None

from .errors import ZooKeeperConfigError, ZooKeeperStartError
from .java import find_java, zookeeper_classpath

MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"
FOUR_LETTER_WORDS = "ruok,srvr,stat"
STOP_TIMEOUT_S = 10.0
LOG_TAIL_LINES = 30

# Settings the constructor's own arguments own.
_RESERVED = ("dataDir", "clientPort", "clientPortAddress", "tickTime")

# Kafka's zookeeper-server-start heap, with a collector and JIT level chosen for a fast start
# and a small footprint: ZooKeeper's load here is a handful of brokers and clients.
JVM_OPTIONS = (
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
)


def server_status(host: str, port: int, timeout: float = 1.0) -> str | None:
    """The answer to ``srvr``, or None when nothing answers on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"srvr")
            chunks = []
            while chunk := sock.recv(4096):
                chunks.append(chunk)
    except OSError:
        return None
    return b"".join(chunks).decode("utf-8", "replace")


def is_serving(host: str, port: int, timeout: float = 1.0) -> bool:
    """Whether a ZooKeeper server on ``host:port`` serves requests (not merely listens)."""
    status = server_status(host, port, timeout)
    return status is not None and status.startswith("Zookeeper version:")


def wait_until_serving(host: str, port: int, timeout_s: float,
                       alive: Callable[[], bool] = lambda: True) -> bool:
    """Poll ``srvr`` until the server serves (True), ``alive()`` turns false or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if is_serving(host, port, timeout=0.5):
            return True
        if not alive():
            return False
        time.sleep(0.02)
    return False


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (bind port 0, read it, release it)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def log_size(path: Path) -> int:
    """The size of a server's log so far (0 before it exists): where its next start's lines
    begin, for :func:`port_taken_since`."""
    return path.stat().st_size if path.exists() else 0


def port_taken_since(path: Path, offset: int) -> bool:
    """Whether a server's log, from ``offset`` on, says its port was in use: a port picked free
    (:func:`free_port`) that another process bound before the server did."""
    with open(path, "rb") as log:
        log.seek(offset)
        return b"Address already in use" in log.read()


def _pdeathsig_preexec() -> Callable[[], None] | None:
    """A pre-exec hook asking Linux to SIGTERM the child when the starting thread dies."""
    if not sys.platform.startswith("linux") \
            or threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    parent = os.getpid()

    def preexec() -> None:
        prctl(pr_set_pdeathsig, signal.SIGTERM)
        # the parent may have died between fork and prctl, before the request took effect
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def _terminate(process: subprocess.Popen) -> None:
    """SIGTERM the child's process group, SIGKILL it if still there after STOP_TIMEOUT_S."""
    if process.poll() is not None:
        return
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGTERM)
        else:
            process.terminate()
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.wait()
    except ProcessLookupError:  # exited between poll() and the signal
        process.wait()


def _lock(path: Path):
    """An open file holding an exclusive lock on ``path``, or None if another process holds it."""
    handle = open(path, "a")  # noqa: SIM115 (kept open: the lock lasts as long as the handle)
    if fcntl is not None:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return None
    return handle


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of a log file ("" if it does not exist)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _properties_value(value: object) -> str:
    # Java properties treat backslashes as escapes; forward slashes work on every platform
    return str(value).replace("\\", "/")


class EmbeddedZooKeeper:
    """A standalone ZooKeeper server run as a child process.

    Parameters
    ----------
    data_dir : path
        ZooKeeper's ``dataDir``, also holding the generated configuration and the log.
    port : int
        Client port; 0 picks a free one.
    host : str
        ``clientPortAddress``, the address to bind.
    java : path, optional
        The ``java`` executable (default: ``$JAVA_HOME/bin/java``, then PATH).
    tick_ms : int
        ``tickTime``; session timeouts are bounded to [2, 20] ticks.
    max_client_cnxns : int
        ``maxClientCnxns`` per client address; 0 is unlimited.
    settings : mapping, optional
        Further ``zoo.cfg`` settings, written as given.
    jars_dir : path, optional
        Where the ZooKeeper jars are (default: ``pyspark/jars``).
    start_timeout_s : float
        How long ``start()`` waits for the server to serve.

    Examples
    --------
    >>> import tempfile
    >>> with EmbeddedZooKeeper(tempfile.mkdtemp()) as zk:  # doctest: +SKIP
    ...     print(zk.connect_string)
    127.0.0.1:41827
    """

    def __init__(self, data_dir: str | os.PathLike, port: int = 0, *, host: str = "127.0.0.1",
                 java: str | os.PathLike | None = None, tick_ms: int = 2000,
                 max_client_cnxns: int = 0, settings: Mapping[str, object] | None = None,
                 jars_dir: str | os.PathLike | None = None, start_timeout_s: float = 30):
        if not 0 <= port <= 65535:
            raise ZooKeeperConfigError(f"ZooKeeper client port {port} is not in [0, 65535]")
        reserved = sorted(set(settings or {}) & set(_RESERVED))
        if reserved:
            raise ZooKeeperConfigError(
                f"set {', '.join(reserved)} through the EmbeddedZooKeeper arguments, not settings")
        if str((settings or {}).get("admin.enableServer", "false")).strip().lower() != "false":
            raise ZooKeeperConfigError(
                "admin.enableServer=true needs Jetty, which the pyspark jars do not include")
        self.data_dir = Path(data_dir).resolve()
        self.host = host
        self._requested_port = port
        self.port: int | None = port or None
        self.java = java
        self.tick_ms = tick_ms
        self.max_client_cnxns = max_client_cnxns
        self.settings = dict(settings or {})
        self.jars_dir = jars_dir
        self.start_timeout_s = start_timeout_s
        self.startup_seconds: float | None = None
        self._process: subprocess.Popen | None = None
        self._finalizer: weakref.finalize | None = None
        self._lock_file = None

    # -- files --------------------------------------------------------------------------------

    @property
    def config_path(self) -> Path:
        return self.data_dir / "zoo.cfg"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "zookeeper.log"

    @property
    def out_path(self) -> Path:
        return self.data_dir / "zookeeper.out"

    @property
    def _log4j_path(self) -> Path:
        return self.data_dir / "log4j2.properties"

    def _write_config(self, port: int) -> None:
        whitelist = str(self.settings.get("4lw.commands.whitelist", FOUR_LETTER_WORDS))
        if "srvr" not in [w.strip() for w in whitelist.split(",")] and whitelist.strip() != "*":
            whitelist += ",srvr"  # start() needs it to see the server serve
        lines = {
            "tickTime": self.tick_ms,
            "dataDir": self.data_dir,
            "clientPort": port,
            "clientPortAddress": self.host,
            "maxClientCnxns": self.max_client_cnxns,
            "admin.enableServer": "false",
            **self.settings,
            "4lw.commands.whitelist": whitelist,
        }
        self.config_path.write_text(
            "# Generated by broker_lite.zk at every start; edit the arguments instead.\n"
            + "".join(f"{k}={_properties_value(v)}\n" for k, v in lines.items()),
            encoding="utf-8")
        log = _properties_value(self.log_path)
        self._log4j_path.write_text(
            "status = error\n"
            "appender.file.type = RollingFile\n"
            "appender.file.name = file\n"
            f"appender.file.fileName = {log}\n"
            f"appender.file.filePattern = {log}.%i\n"
            "appender.file.layout.type = PatternLayout\n"
            "appender.file.layout.pattern = %d{ISO8601} %-5p [%t] %c{1} - %m%n\n"
            "appender.file.policies.type = Policies\n"
            "appender.file.policies.size.type = SizeBasedTriggeringPolicy\n"
            "appender.file.policies.size.size = 10MB\n"
            "appender.file.strategy.type = DefaultRolloverStrategy\n"
            "appender.file.strategy.max = 3\n"
            "rootLogger.level = INFO\n"
            "rootLogger.appenderRef.file.ref = file\n",
            encoding="utf-8")

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def _client_host(self) -> str:
        """Where a local client reaches the server: loopback when it binds every address."""
        return {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.host, self.host)

    @property
    def connect_string(self) -> str:
        if self.port is None:
            raise ZooKeeperStartError("the server has not been started, so it has no port yet")
        host = self._client_host
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def command(self) -> list[str]:
        """The ``java`` command line that runs the server."""
        classpath = os.pathsep.join(str(jar) for jar in zookeeper_classpath(self.jars_dir))
        return [str(find_java(self.java)), *JVM_OPTIONS,
                f"-Dlog4j2.configurationFile={self._log4j_path.as_uri()}",
                "-cp", classpath, MAIN_CLASS, str(self.config_path)]

    def start(self) -> Self:
        """Start the server and wait until it serves; sets :attr:`startup_seconds`."""
        if self.running:
            raise ZooKeeperStartError(f"ZooKeeper is already running on {self.connect_string}")
        command = self.command()  # fails early, with its own error, without Java or jars
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._lock_file = _lock(self.data_dir / "zookeeper.lock")
        if self._lock_file is None:
            raise ZooKeeperStartError(f"another ZooKeeper server runs on {self.data_dir}")
        try:
            # A picked port can be taken between picking and binding: pick again a few times.
            attempts = 3 if self._requested_port == 0 else 1
            for attempt in range(attempts):
                if self.port is None or attempt > 0:
                    self.port = free_port(self.host or "127.0.0.1")
                log_offset = log_size(self.log_path)
                try:
                    self._start_once(command)
                    return self
                except ZooKeeperStartError:
                    if attempt + 1 == attempts or not port_taken_since(self.log_path, log_offset):
                        raise
            raise AssertionError("unreachable")  # the loop returns or raises
        except BaseException:
            self.stop()
            raise

    def _start_once(self, command: list[str]) -> None:
        assert self.port is not None
        self._write_config(self.port)
        began = time.monotonic()
        with open(self.out_path, "ab") as out:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                cwd=self.data_dir, start_new_session=True,
                # the hook only calls prctl and getppid, which are safe between fork and exec
                preexec_fn=_pdeathsig_preexec())
        self._process = process
        self._finalizer = weakref.finalize(self, _terminate, process)
        if wait_until_serving(self._client_host, self.port, self.start_timeout_s,
                              alive=lambda: process.poll() is None):
            self.startup_seconds = time.monotonic() - began
            return
        exited = process.poll()
        self._stop_process()
        reason = (f"exited with status {exited}" if exited is not None
                  else f"did not serve within {self.start_timeout_s:g} s")
        raise ZooKeeperStartError(
            f"ZooKeeper on {self.host}:{self.port} (dataDir {self.data_dir}) {reason}.\n"
            f"--- {self.log_path} (tail) ---\n{log_tail(self.log_path)}\n"
            f"--- {self.out_path} (tail) ---\n{log_tail(self.out_path)}")

    def _stop_process(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # runs _terminate once and detaches it from atexit
            self._finalizer = None

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s); a no-op when not running."""
        self._stop_process()
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def poll(self) -> int | None:
        """The server's exit status, or None while it runs (or was never started)."""
        return self._process.poll() if self._process is not None else None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"running on {self.connect_string}" if self.running else "stopped"
        return f"EmbeddedZooKeeper({str(self.data_dir)!r}, {state})"

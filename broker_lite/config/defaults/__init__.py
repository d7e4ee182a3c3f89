"""What ``broker-lite start`` runs with when it is given nothing: the broker settings shipped
inside the package, and the data directory used when no ``log.dirs`` (or ``log.dir``) is set.

``server.properties`` here holds the settings (Kafka's names and defaults, a loopback listener,
an embedded ZooKeeper); ``conf/server.properties`` in a source checkout is the same file, the
template to copy and edit (a test keeps their settings equal). ``schema-registry.properties``
is likewise what ``broker-lite schema-registry`` runs with, ``conf/schema-registry.properties``
its template.

The data directory follows the XDG Base Directory rules for state that outlives a run:
``$XDG_STATE_HOME/broker-lite``, or ``~/.local/state/broker-lite`` when ``XDG_STATE_HOME`` is
unset (or not an absolute path, which the rules say to ignore); a second start finds the topics,
offsets and ZooKeeper data of the first. Without a home directory it is
``<temporary directory>/broker-lite-<uid>``.

>>> data_dir({"XDG_STATE_HOME": "/var/lib/me"})
PosixPath('/var/lib/me/broker-lite')
>>> server_properties()["listeners"]
'PLAINTEXT://127.0.0.1:9092'
"""

import os
import tempfile
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from broker_lite.config.properties import parse_properties

SERVER_PROPERTIES = "server.properties"
REGISTRY_PROPERTIES = "schema-registry.properties"
DATA_DIR_NAME = "broker-lite"


def server_properties_text() -> str:
    """The shipped ``server.properties``, as text."""
    return resources.files(__name__).joinpath(SERVER_PROPERTIES).read_text(encoding="utf-8")


def server_properties() -> dict[str, str]:
    """The settings of the shipped ``server.properties``."""
    return parse_properties(server_properties_text())


def registry_properties() -> dict[str, str]:
    """The settings of the shipped ``schema-registry.properties``."""
    text = resources.files(__name__).joinpath(REGISTRY_PROPERTIES).read_text(encoding="utf-8")
    return parse_properties(text)


def data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Where a broker keeps its data when no ``log.dirs`` is set."""
    state_home = environ.get("XDG_STATE_HOME", "")
    if os.path.isabs(state_home):
        return Path(state_home) / DATA_DIR_NAME
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no password entry (some containers)
        return Path(tempfile.gettempdir()) / f"{DATA_DIR_NAME}-{os.getuid()}"
    return home / ".local" / "state" / DATA_DIR_NAME

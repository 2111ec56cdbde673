"""A real ZooKeeper server from Debian's `zookeeper` package, run for a local cluster and for tests.

The server is the system's Java ZooKeeper (`QuorumPeerMain` with a generated `zoo.cfg`), bound to
127.0.0.1 only, with its data, config, log and pid file under one state directory:

    <state-dir>/zookeeper/zoo.cfg, data/, zookeeper.log, zookeeper.pid, zookeeper.port

`start()` returns once the server answers the four-letter word `ruok` with `imok`.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from kafkaops.cluster.errors import KafkaOpsError, UserError
from kafkaops.cluster.local import processes

DEFAULT_PORT = 2181
ZOOKEEPER_JARS = (Path("/usr/share/java/zookeeper.jar"),)
"""Debian's zookeeper.jar carries a Class-Path manifest naming every jar it needs."""


class ZooKeeperNotInstalledError(UserError):
    pass


class ZooKeeperStartError(KafkaOpsError):
    pass


def four_letter_word(host: str, port: int, word: str, timeout_s: float = 2.0) -> str | None:
    """Send a ZooKeeper four-letter command; the answer, or None if nobody answered."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(word.encode("ascii"))
            chunks = []
            while chunk := sock.recv(4096):
                chunks.append(chunk)
            return b"".join(chunks).decode("utf-8", errors="replace")
    except OSError:
        return None


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def java_command() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise ZooKeeperNotInstalledError(
            "No java found: install a JRE (apt-get install default-jre-headless) or set JAVA_HOME"
        )
    return java


def zookeeper_classpath() -> str:
    missing = [str(jar) for jar in ZOOKEEPER_JARS if not jar.exists()]
    if missing:
        raise ZooKeeperNotInstalledError(
            f"ZooKeeper is not installed ({', '.join(missing)} missing): apt-get install zookeeper"
        )
    return ":".join(str(jar) for jar in ZOOKEEPER_JARS)


def render_zoo_cfg(data_dir: Path, port: int, host: str = "127.0.0.1", tick_time_ms: int = 2000) -> str:
    """A standalone server's config: loopback only, no admin web server, the 4lw commands we use."""
    return "\n".join(
        [
            f"tickTime={tick_time_ms}",
            f"dataDir={data_dir}",
            f"clientPort={port}",
            f"clientPortAddress={host}",
            "maxClientCnxns=0",
            "admin.enableServer=false",
            "4lw.commands.whitelist=ruok,srvr,stat,mntr,cons",
            # sessions of tests and brokers may be short; let the server accept them
            f"minSessionTimeout={tick_time_ms}",
            "maxSessionTimeout=60000",
            "",
        ]
    )


@dataclasses.dataclass
class LocalZooKeeper:
    """One standalone ZooKeeper under `state_dir/zookeeper`."""

    state_dir: Path
    port: int = DEFAULT_PORT
    host: str = "127.0.0.1"
    heap_mb: int = 256

    @property
    def home(self) -> Path:
        return self.state_dir / "zookeeper"

    @property
    def connect_string(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid_file(self) -> Path:
        return self.home / "zookeeper.pid"

    @property
    def port_file(self) -> Path:
        return self.home / "zookeeper.port"

    @property
    def log_file(self) -> Path:
        return self.home / "zookeeper.log"

    @classmethod
    def from_state_dir(cls, state_dir: Path) -> LocalZooKeeper:
        """The server last started in `state_dir` (its port is remembered), or a default one."""
        home = state_dir / "zookeeper"
        port_file = home / "zookeeper.port"
        port = int(port_file.read_text().strip()) if port_file.exists() else DEFAULT_PORT
        return cls(state_dir=state_dir, port=port)

    def pid(self) -> int | None:
        """The server's pid if its process is alive."""
        return processes.read_pid(self.pid_file)

    def is_serving(self) -> bool:
        return four_letter_word(self.host, self.port, "ruok", timeout_s=1.0) == "imok"

    def status(self) -> str | None:
        """The server's `srvr` answer, or None if it does not answer."""
        return four_letter_word(self.host, self.port, "srvr")

    def start(self, timeout_s: float = 30.0) -> bool:
        """Start the server unless it already runs here; wait until it answers `ruok`.

        Returns True if a new server was started, False if one was already serving.
        Raises ZooKeeperStartError (with the end of the server's log) if it does not come up.
        """
        if self.pid() is not None and self.is_serving():
            return False
        if self.is_serving():
            raise ZooKeeperStartError(
                f"Port {self.port} on {self.host} is already served by a ZooKeeper this state dir does not own"
            )
        java = java_command()
        classpath = zookeeper_classpath()
        data_dir = self.home / "data"
        data_dir.mkdir(parents=True, exist_ok=True)
        config = self.home / "zoo.cfg"
        config.write_text(render_zoo_cfg(data_dir, self.port, self.host))
        self.port_file.write_text(f"{self.port}\n")
        command = [
            java,
            f"-Xmx{self.heap_mb}m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            f"-Dzookeeper.log.dir={self.home}",
            "-Dzookeeper.admin.enableServer=false",
            "-cp",
            classpath,
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            str(config),
        ]
        with open(self.log_file, "ab") as log:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # outlives `kafkaops cluster zookeeper start`
                close_fds=True,
            )
        self.pid_file.write_text(f"{process.pid}\n")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise ZooKeeperStartError(
                    f"ZooKeeper exited with code {process.returncode} during start-up:\n{self._log_tail()}"
                )
            if self.is_serving():
                return True
            time.sleep(0.1)
        self.stop()
        raise ZooKeeperStartError(f"ZooKeeper did not answer 'ruok' within {timeout_s:.0f}s:\n{self._log_tail()}")

    def stop(self, timeout_s: float = 10.0) -> bool:
        """Stop the server (SIGTERM, then SIGKILL). Returns False if none was running."""
        pid = self.pid()
        if pid is not None:
            try:
                processes.stop(pid, timeout_s=timeout_s)
            except OSError as error:
                raise ZooKeeperStartError(f"ZooKeeper (pid {pid}) did not stop") from error
        self.pid_file.unlink(missing_ok=True)
        return pid is not None

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

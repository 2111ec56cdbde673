"""A real ZooKeeper server from Debian's `zookeeper` package, run for a local cluster and for tests.

The server is the system's Java ZooKeeper (`QuorumPeerMain` with a generated `zoo.cfg`), bound to
127.0.0.1 only, with its data, config, log and pid file under one state directory:

    <state-dir>/zookeeper/zoo.cfg, data/, zookeeper.log, zookeeper.pid, zookeeper.port

`start()` returns once a standalone server serves clients (`srvr` reports its mode: `ruok` is answered
`imok` as soon as the client port is bound, before the database is loaded), an ensemble member once it
answers `ruok` (it serves only once a quorum has formed; `ZooKeeperEnsemble` waits for that).

`ZooKeeperEnsemble` runs a replicated ensemble of such servers on loopback ports (the chaos runner's
3 nodes), each a `LocalZooKeeper` with its own directory, client port and `myid`:

    <state-dir>/zookeeper-ensemble.json                the members' ports (kept across restarts)
    <state-dir>/zookeeper-<N>/zoo.cfg, data/myid, ...  node N (`server.N=127.0.0.1:peer:election`)

One node can be stopped, killed (SIGKILL) and started again while the others keep a quorum.
`expire_session` ends someone else's ZooKeeper session from outside (a broker's, in chaos tests).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from kafkaops.cluster.common.errors import KafkaOpsError, UserError
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


def zookeeper_answers(connect: str, timeout_s: float = 1.0) -> bool:
    """Whether some server of a connect string (`host:port[,host:port...][/chroot]`) accepts a connection: a
    quick look before a client waits its whole connection time-out for a server that is not there."""
    for address in connect.split("/", 1)[0].split(","):
        host, _, port = address.strip().rpartition(":")
        try:
            with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout_s):
                return True
        except (OSError, ValueError):
            continue
    return False


EPHEMERAL_PORTS_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LISTEN_PORTS_FROM = 20000
"""The low end of the ports a local server is given: above most well-known services' ports."""
_PORT_PICKER = random.SystemRandom()
"""Not the module-level generator, which a seeded run (the chaos runner's --seed) makes repeat across processes."""


def listen_port_candidates(ephemeral: tuple[int, int]) -> list[int]:
    """The ports a local server may be given: those from LISTEN_PORTS_FROM on that the kernel never hands out as
    the local port of an outgoing connection (`ephemeral`, inclusive). A port picked in the ephemeral range (what
    binding port 0 gives) may be taken by any client's connection between the pick and the server's bind, which
    on a busy machine (tests on two workers) happened: the broker then died with EADDRINUSE."""
    low, high = ephemeral
    return [port for port in range(LISTEN_PORTS_FROM, 65536) if not low <= port <= high]


def _ephemeral_ports() -> tuple[int, int]:
    try:
        low, high = (int(value) for value in EPHEMERAL_PORTS_FILE.read_text().split())
    except (OSError, ValueError):
        return (32768, 60999)  # Linux's default
    return (low, high)


def free_port(host: str = "127.0.0.1") -> int:
    return free_ports(1, host)[0]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` distinct ports nothing listens on, for servers to listen on later (all held open together while
    they are picked, so none repeats): random ones outside the kernel's ephemeral range, or, where that leaves
    none free, ones the kernel picks."""
    candidates = listen_port_candidates(_ephemeral_ports())
    with contextlib.ExitStack() as stack:
        ports: list[int] = []
        for port in _PORT_PICKER.sample(candidates, min(len(candidates), 64 * count)):
            if len(ports) == count:
                break
            sock = stack.enter_context(socket.socket())
            try:
                sock.bind((host, port))
            except OSError:
                continue
            ports.append(port)
        while len(ports) < count:
            sock = stack.enter_context(socket.socket())
            sock.bind((host, 0))
            ports.append(int(sock.getsockname()[1]))
        return ports


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


@dataclasses.dataclass(frozen=True)
class QuorumPeer:
    """One member of an ensemble: its `myid` and its three ports."""

    server_id: int
    client_port: int
    peer_port: int
    """Followers connect to the leader here."""
    election_port: int
    """Leader election (fast leader election) connections."""


def render_ensemble_cfg(
    data_dir: Path,
    peer: QuorumPeer,
    quorum: Mapping[int, QuorumPeer],
    host: str = "127.0.0.1",
    tick_time_ms: int = 1000,
    init_limit: int = 20,
    sync_limit: int = 5,
) -> str:
    """One ensemble member's config: the standalone settings plus the quorum.

    `initLimit` ticks for a follower to connect to and sync with a new leader (a restarted node catching
    up), `syncLimit` ticks a follower may fall behind before the leader drops it. Quorum ports bind to
    `host` only (`quorumListenOnAllIPs` stays false); dynamic reconfiguration stays off."""
    lines = render_zoo_cfg(data_dir, peer.client_port, host, tick_time_ms).splitlines()
    lines += [
        f"initLimit={init_limit}",
        f"syncLimit={sync_limit}",
        "reconfigEnabled=false",
        "standaloneEnabled=false",
        # a killed node's peers retry it; keep those connection attempts short on loopback
        "cnxTimeout=2000",
    ]
    lines += [
        f"server.{p.server_id}={host}:{p.peer_port}:{p.election_port}"
        for p in sorted(quorum.values(), key=lambda p: p.server_id)
    ]
    return "\n".join(lines) + "\n"


def parse_mode(srvr: str | None) -> str | None:
    """`Mode: leader` in a `srvr` answer → "leader" (or "follower", "standalone"); None if not serving."""
    for line in (srvr or "").splitlines():
        if line.startswith("Mode:"):
            return line.split(":", 1)[1].strip()
    return None


@dataclasses.dataclass
class LocalZooKeeper:
    """One standalone ZooKeeper under `state_dir/zookeeper`, or one ensemble member (`quorum` given)
    under `state_dir/<name>`."""

    state_dir: Path
    port: int = DEFAULT_PORT
    host: str = "127.0.0.1"
    heap_mb: int = 256
    name: str = "zookeeper"
    server_id: int | None = None
    """This member's `myid` when `quorum` is given."""
    quorum: Mapping[int, QuorumPeer] | None = None
    """Every member of the ensemble (this one included), by id; None for a standalone server."""
    tick_time_ms: int | None = None
    """None: 2000 ms standalone (ZooKeeper's sample config), 1000 ms in an ensemble."""

    @property
    def home(self) -> Path:
        return self.state_dir / self.name

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

    def mode(self) -> str | None:
        """The serving mode ("leader", "follower" or "standalone") while the server serves clients; None
        otherwise (down, or an ensemble member still looking for a quorum)."""
        return parse_mode(self.status())

    def has_started(self) -> bool:
        """Whether `start()` may return: a standalone server serves clients, an ensemble member runs."""
        return self.is_serving() if self.quorum is not None else self.mode() is not None

    def _render_config(self, data_dir: Path) -> str:
        if self.quorum is None:
            return render_zoo_cfg(data_dir, self.port, self.host, self.tick_time_ms or 2000)
        if self.server_id is None or self.server_id not in self.quorum:
            raise ZooKeeperStartError(f"Server id {self.server_id} is not a member of the quorum {sorted(self.quorum)}")
        (data_dir / "myid").write_text(f"{self.server_id}\n")
        return render_ensemble_cfg(
            data_dir, self.quorum[self.server_id], self.quorum, self.host, self.tick_time_ms or 1000
        )

    def start(self, timeout_s: float = 30.0) -> bool:
        """Start the server unless it already runs here; wait until `has_started()`.

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
        config.write_text(self._render_config(data_dir))
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
            if self.has_started():
                return True
            time.sleep(0.1)
        self.stop()
        raise ZooKeeperStartError(f"ZooKeeper did not start serving within {timeout_s:.0f}s:\n{self._log_tail()}")

    def stop(self, timeout_s: float = 10.0, hard: bool = False) -> bool:
        """Stop the server (SIGTERM, then SIGKILL; `hard`: SIGKILL at once). Returns False if none was running."""
        pid = self.pid()
        if pid is not None:
            try:
                processes.stop(pid, signal.SIGKILL if hard else signal.SIGTERM, timeout_s=timeout_s)
            except OSError as error:
                raise ZooKeeperStartError(f"ZooKeeper (pid {pid}) did not stop") from error
        self.pid_file.unlink(missing_ok=True)
        return pid is not None

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


SERVING_MODES = ("leader", "follower")


@dataclasses.dataclass
class ZooKeeperEnsemble:
    """`size` ZooKeeper servers forming one replicated ensemble on loopback ports, under `state_dir`.

    The members' ports are picked once and kept in `zookeeper-ensemble.json`, so a node restarted later
    (or the ensemble reopened from the same state dir) takes its old place. Threads: not thread-safe;
    one caller drives it."""

    state_dir: Path
    size: int = 3
    host: str = "127.0.0.1"
    heap_mb: int = 128
    tick_time_ms: int = 1000
    nodes: dict[int, LocalZooKeeper] = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        if self.size < 1:
            raise UserError(f"An ensemble needs at least one server, not {self.size}")
        quorum = self._load_or_pick_ports()
        self.nodes = {
            server_id: LocalZooKeeper(
                state_dir=self.state_dir,
                port=peer.client_port,
                host=self.host,
                heap_mb=self.heap_mb,
                name=f"zookeeper-{server_id}",
                server_id=server_id,
                quorum=quorum,
                tick_time_ms=self.tick_time_ms,
            )
            for server_id, peer in sorted(quorum.items())
        }

    @property
    def ports_file(self) -> Path:
        return self.state_dir / "zookeeper-ensemble.json"

    def _load_or_pick_ports(self) -> dict[int, QuorumPeer]:
        if self.ports_file.exists():
            members = json.loads(self.ports_file.read_text())["servers"]
            quorum = {
                int(m["id"]): QuorumPeer(int(m["id"]), m["client_port"], m["peer_port"], m["election_port"])
                for m in members
            }
            if len(quorum) != self.size:
                raise UserError(f"{self.ports_file} describes {len(quorum)} servers, not {self.size}")
            return quorum
        ports = free_ports(3 * self.size, self.host)
        quorum = {
            server_id: QuorumPeer(server_id, *ports[3 * (server_id - 1) : 3 * server_id])
            for server_id in range(1, self.size + 1)
        }
        self.state_dir.mkdir(parents=True, exist_ok=True)
        document = {
            "servers": [
                {
                    "id": p.server_id,
                    "client_port": p.client_port,
                    "peer_port": p.peer_port,
                    "election_port": p.election_port,
                }
                for p in quorum.values()
            ]
        }
        self.ports_file.write_text(json.dumps(document, indent=2) + "\n")
        return quorum

    @property
    def connect_string(self) -> str:
        """Every member, for clients that fail over between them."""
        return ",".join(node.connect_string for node in self.nodes.values())

    def modes(self) -> dict[int, str | None]:
        """Each member's mode ("leader", "follower") or None while it does not serve."""
        return {server_id: node.mode() for server_id, node in self.nodes.items()}

    def leader_id(self) -> int | None:
        return next((server_id for server_id, mode in self.modes().items() if mode == "leader"), None)

    def running(self) -> list[int]:
        """Members whose process is alive."""
        return [server_id for server_id, node in self.nodes.items() if node.pid() is not None]

    def start(self, timeout_s: float = 60.0) -> None:
        """Start every member not running, then wait until each serves as leader or follower.

        Raises ZooKeeperStartError (with the end of each log) if the quorum does not form in time;
        the members started stay up (call `stop()`)."""
        for node in self.nodes.values():
            node.start(timeout_s=timeout_s)
        self.wait_serving(list(self.nodes), timeout_s)

    def start_node(self, server_id: int, timeout_s: float = 60.0) -> None:
        """Start one member (unless it runs) and wait until it has joined the quorum."""
        self.nodes[server_id].start(timeout_s=timeout_s)
        self.wait_serving([server_id], timeout_s)

    def stop_node(self, server_id: int, hard: bool = False) -> bool:
        """Stop one member: SIGTERM, or SIGKILL with `hard`. False if it was not running."""
        return self.nodes[server_id].stop(hard=hard)

    def stop(self, hard: bool = False) -> None:
        """Stop every member; each is tried even if stopping another fails (the first error is raised)."""
        errors: list[ZooKeeperStartError] = []
        for node in self.nodes.values():
            try:
                node.stop(hard=hard)
            except ZooKeeperStartError as error:
                errors.append(error)
        if errors:
            raise errors[0]

    def wait_serving(self, server_ids: list[int], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            modes = self.modes()
            if all(modes[s] in SERVING_MODES for s in server_ids) and list(modes.values()).count("leader") <= 1:
                return
            if time.monotonic() > deadline:
                tails = "\n".join(f"--- {self.nodes[s].name} ---\n{self.nodes[s]._log_tail(10)}" for s in server_ids)
                raise ZooKeeperStartError(
                    f"ZooKeeper ensemble not serving within {timeout_s:.0f}s (modes {modes}):\n{tails}"
                )
            time.sleep(0.2)


# --- ending a session from outside ---------------------------------------------------------------------

_QUIET_LOGGER = logging.getLogger("kafkaops.zookeeper.expire_session")
_QUIET_LOGGER.addHandler(logging.NullHandler())
_QUIET_LOGGER.propagate = False

_JAVA_RANDOM_MULTIPLIER = 0x5DEECE66D
_JAVA_RANDOM_MASK = (1 << 48) - 1
_ZK_SUPER_SECRET = 0xB3415C00
"""`ZooKeeperServer.superSecret`: a session's password is `new Random(sessionId ^ superSecret)`'s first
16 bytes (`ZooKeeperServer.generatePasswd`, checked by `checkPasswd` on every reconnect)."""


def java_random_bytes(seed: int, count: int) -> bytes:
    """`new java.util.Random(seed).nextBytes(new byte[count])`: the 48-bit LCG, 4 bytes per int, low first."""
    state = (seed ^ _JAVA_RANDOM_MULTIPLIER) & _JAVA_RANDOM_MASK
    out = bytearray()
    while len(out) < count:
        state = (state * _JAVA_RANDOM_MULTIPLIER + 0xB) & _JAVA_RANDOM_MASK
        value = state >> 16  # next(32)
        for _ in range(min(4, count - len(out))):
            out.append(value & 0xFF)
            value >>= 8
    return bytes(out)


def session_password(session_id: int) -> bytes:
    """The password ZooKeeper gave session `session_id` (what a client must present to resume it)."""
    return java_random_bytes(session_id ^ _ZK_SUPER_SECRET, 16)


def expire_session(connect: str, session_id: int, timeout_s: float = 15.0, attempts: int = 5) -> int:
    """End someone else's session, as if it had expired: resume it on a new connection, then close it.

    Its ephemeral znodes go at once; its owner's client finds the session expired when it next talks to
    the ensemble (kazoo: state LOST, then a new session). `connect` is the ensemble's host list (a chroot
    is ignored: sessions are not chrooted).

    The owner's client, whose connection the server drops when the session moves to ours, reconnects at
    once and can take the session back before our close arrives (the close is then refused as coming
    from a moved session, silently). So the session is resumed again after each close: only when that
    fails (ZooKeeper answers "expired" and hands out a new session) is it known to be gone. Returns the
    number of closes it took. Raises ZooKeeperStartError if the session cannot be resumed at first
    (already gone, or the ensemble unreachable) or is still alive after `attempts` closes."""
    from kazoo.client import KazooClient
    from kazoo.handlers.threading import KazooTimeoutError

    hosts = connect.split("/", 1)[0]
    shown = f"0x{session_id & 0xFFFFFFFFFFFFFFFF:x}"
    for closes in range(attempts + 1):
        client = KazooClient(
            hosts=hosts, client_id=(session_id, session_password(session_id)), timeout=timeout_s, logger=_QUIET_LOGGER
        )
        try:
            client.start(timeout=timeout_s)
        except KazooTimeoutError as error:
            client.close()
            raise ZooKeeperStartError(f"Could not resume session {shown} to end it") from error
        resumed = client.client_id is not None and client.client_id[0] == session_id
        client.stop()  # sends closeSession (ours if the session is, a new one's otherwise)
        client.close()
        if not resumed:
            if closes == 0:
                raise ZooKeeperStartError(f"Session {shown} had already ended")
            return closes
    raise ZooKeeperStartError(f"Session {shown} still alive after {attempts} closes (its owner keeps taking it back)")

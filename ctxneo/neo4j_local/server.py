"""A real Neo4j 5.26 on this machine without Docker: Maven Central jars and Java 17.

The first start fetches the jars of ``org.neo4j:neo4j`` and
``org.neo4j:neo4j-bolt`` with ``mvn dependency:copy-dependencies`` into
``$CTXNEO_HOME/neo4j-<version>/lib`` (about 120 MB, once) and compiles a
20-line launcher (``CtxneoNeo4j.java``) that starts an embedded DBMS serving
Bolt on 127.0.0.1. A server's state (pid, port, URI) lives in a JSON file in
its data directory, so ``status`` and ``stop`` work from any later process.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from ctxneo.errors import Neo4jLaunchError

NEO4J_VERSION = "5.26.30"
STATE_FILE = "ctxneo-neo4j.json"
LOG_FILE = "neo4j.log"
_MAIN = "CtxneoNeo4j"

Log = Callable[[str], None]


def ctxneo_home() -> Path:
    """Where ctxneo keeps jars and the default server data: ``$CTXNEO_HOME`` or ~/.ctxneo."""
    return Path(os.environ.get("CTXNEO_HOME") or Path.home() / ".ctxneo")


def default_data_dir() -> Path:
    return ctxneo_home() / "neo4j-data"


@dataclass(frozen=True)
class ServerInfo:
    """A running (or last started) local server."""

    pid: int
    port: int
    uri: str
    data_dir: str
    log: str
    version: str = NEO4J_VERSION


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    candidate = Path(java_home) / "bin" / "java" if java_home else None
    java = str(candidate) if candidate and candidate.exists() else shutil.which("java")
    if not java:
        raise Neo4jLaunchError(
            "Java 17 or newer is needed to run Neo4j 5.26 locally and none was found "
            "(install a JDK, e.g. `apt install openjdk-17-jdk`, or set JAVA_HOME), "
            "or run Neo4j in Docker: `docker compose up -d neo4j`"
        )
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    match = re.search(r'version "(\d+)', out.stderr + out.stdout)
    if match and int(match.group(1)) < 17:
        raise Neo4jLaunchError(f"{java} is Java {match.group(1)}; Neo4j 5.26 needs Java 17+")
    return java


class Runtime:
    """The jars and the compiled launcher, prepared once per version."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or ctxneo_home()) / f"neo4j-{NEO4J_VERSION}"
        self.lib = self.root / "lib"
        self.classes = self.root / "classes"

    @property
    def ready(self) -> bool:
        return (self.lib / ".complete").exists() and self._compiled()

    def _compiled(self) -> bool:
        """Whether the launcher class was built from the launcher source shipped now."""
        stamp = self.classes / ".source-sha256"
        return (
            (self.classes / f"{_MAIN}.class").exists()
            and stamp.exists()
            and (stamp.read_text() == _source_digest())
        )

    def classpath(self) -> str:
        return f"{self.classes}{os.pathsep}{self.lib}/*"

    def ensure(self, log: Log = lambda _: None) -> None:
        """Fetch the jars and compile the launcher if not done yet (safe from several processes).

        Raises:
            Neo4jLaunchError: Java, Maven or the download is missing or fails.
        """
        java = _java()
        with _file_lock(self.root.parent / f".neo4j-{NEO4J_VERSION}.lock"):
            if not (self.lib / ".complete").exists():
                self._fetch(log)
            if not self._compiled():
                self._compile(java, log)

    def _fetch(self, log: Log) -> None:
        mvn = shutil.which("mvn")
        if not mvn:
            raise Neo4jLaunchError(
                "Maven (`mvn`) is needed once to fetch the Neo4j jars from Maven Central "
                "(e.g. `apt install maven`), or run Neo4j in Docker: `docker compose up -d neo4j`"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        pom = self.root / "pom.xml"
        pom.write_text(resources.files(__package__).joinpath("pom.xml").read_text("utf-8"))
        partial = self.root / "lib.partial"
        shutil.rmtree(partial, ignore_errors=True)
        log(f"fetching Neo4j {NEO4J_VERSION} jars from Maven Central (once, ~120 MB)...")
        result = subprocess.run(
            [
                mvn,
                "-q",
                "-B",
                "-f",
                str(pom),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={partial}",
                "-DincludeScope=runtime",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-5:])
            raise Neo4jLaunchError(f"mvn could not fetch the Neo4j jars:\n{tail}")
        shutil.rmtree(self.lib, ignore_errors=True)
        partial.rename(self.lib)
        (self.lib / ".complete").write_text(NEO4J_VERSION)

    def _compile(self, java: str, log: Log) -> None:
        javac = Path(java).with_name("javac")
        if not javac.exists():
            found = shutil.which("javac")
            if not found:
                raise Neo4jLaunchError(
                    "javac (a JDK, not only a JRE) is needed to build the launcher"
                )
            javac = Path(found)
        source_dir = self.root / "src"
        source_dir.mkdir(parents=True, exist_ok=True)
        source = source_dir / f"{_MAIN}.java"
        source.write_text(resources.files(__package__).joinpath(f"{_MAIN}.java").read_text("utf-8"))
        log("compiling the launcher...")
        self.classes.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [str(javac), "-nowarn", "-cp", f"{self.lib}/*", "-d", str(self.classes), str(source)],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise Neo4jLaunchError(f"javac failed:\n{result.stderr.strip()[-2000:]}")
        (self.classes / ".source-sha256").write_text(_source_digest())


def _source_digest() -> str:
    source = resources.files(__package__).joinpath(f"{_MAIN}.java").read_bytes()
    return hashlib.sha256(source).hexdigest()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped) is not alive.
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            return False
    return True


def _ours(pid: int) -> bool:
    """Whether ``pid`` runs this launcher (so stop never signals a stranger)."""
    try:
        return _MAIN.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _bolt_answers(uri: str, timeout: float = 3.0) -> bool:
    import neo4j

    try:
        with neo4j.GraphDatabase.driver(uri, auth=None, connection_timeout=timeout) as driver:
            driver.verify_connectivity()
        return True
    except Exception:
        return False


class LocalNeo4j:
    """A Neo4j server started from the jars, with its data in ``data_dir``."""

    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        port: int | None = None,
        heap: str = "768m",
        page_cache_mb: int = 128,
        runtime: Runtime | None = None,
    ) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.port = port
        self.heap = heap
        self.page_cache_mb = page_cache_mb
        self.runtime = runtime or Runtime()

    @property
    def state_path(self) -> Path:
        return self.data_dir / STATE_FILE

    def status(self) -> ServerInfo | None:
        """The server running on this data directory, or None."""
        try:
            info = ServerInfo(**json.loads(self.state_path.read_text()))
        except (OSError, ValueError, TypeError):
            return None
        # The pid may have been reused since (a reboot, a crash): it must still be our java.
        return info if _alive(info.pid) and _ours(info.pid) else None

    def start(self, timeout: float = 240.0, log: Log = lambda _: None) -> ServerInfo:
        """Start the server (or return the one already running) once Bolt answers.

        Raises:
            Neo4jLaunchError: Java/Maven are missing, the port is taken, or the
                server did not become ready within ``timeout`` seconds.
        """
        running = self.status()
        if running is not None:
            return running
        self.runtime.ensure(log)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        port = self.port or free_port()
        uri = f"bolt://127.0.0.1:{port}"
        log_path = self.data_dir / LOG_FILE
        command = [
            _java(),
            f"-Xmx{self.heap}",
            # The page cache uses these internals; without them debug.log fills with warnings.
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "-Dio.netty.tryReflectionSetAccessible=true",
            # JVM warnings would otherwise land on stdout, where READY is read.
            "-Xlog:disable",
            "-Xlog:all=warning:stderr",
            "-Dfile.encoding=UTF-8",
            "-cp",
            self.runtime.classpath(),
            _MAIN,
            str(self.data_dir / "home"),
            str(port),
            str(self.page_cache_mb),
        ]
        log(f"starting Neo4j {NEO4J_VERSION} on {uri} (data: {self.data_dir})...")
        with open(log_path, "ab") as out:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        info = ServerInfo(process.pid, port, uri, str(self.data_dir), str(log_path))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise Neo4jLaunchError(
                    f"Neo4j exited with code {process.returncode} while starting; "
                    f"last lines of {log_path}:\n{_tail(log_path)}"
                )
            if f"READY {uri}" in _tail(log_path, 40) and _bolt_answers(uri):
                self.state_path.write_text(json.dumps(asdict(info), indent=2))
                return info
            time.sleep(0.2)
        _terminate(process.pid, 10.0)
        raise Neo4jLaunchError(
            f"Neo4j did not answer on {uri} within {timeout:.0f} s; "
            f"see {log_path}:\n{_tail(log_path)}"
        )

    def stop(self, timeout: float = 60.0) -> ServerInfo | None:
        """Stop this data directory's server (SIGTERM, then SIGKILL); return what stopped."""
        info = self.status()
        if info is None:
            self.state_path.unlink(missing_ok=True)
            return None
        _terminate(info.pid, timeout)
        self.state_path.unlink(missing_ok=True)
        return info


def _terminate(pid: int, timeout: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        if not _alive(pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16_384))
            return "\n".join(f.read().decode("utf-8", "replace").splitlines()[-lines:])
    except OSError:
        return ""

"""A real Neo4j 5.26 on this machine without Docker: Maven Central jars and Java 17.

The first start fetches the jars of ``org.neo4j:neo4j`` and
``org.neo4j:neo4j-bolt`` with ``mvn dependency:copy-dependencies`` into
``$CTXNEO_HOME/neo4j-<version>/lib`` (about 120 MB, once) and compiles a small
launcher (``CtxneoNeo4j.java``) that starts an embedded DBMS serving Bolt on
127.0.0.1. A server's state (pid, port, URI) lives in a JSON file in its data
directory, so ``status`` and ``stop`` work from any later process.

A data directory keeps its Bolt port: the first start picks a free one and
stores it in ``DATA/neo4j-port`` beside the password, and every later start
listens there again, so a URI written into a client's configuration (an MCP
server's, a shell's ``NEO4J_URI``) still works after a restart. Each start
also records ``port -> data directory`` in a private registry under
``$CTXNEO_HOME/neo4j-ports``, so a command given only the URI of a server
started with ``--data DIR`` finds its password (:func:`local_credentials`).

What a local server protects: the data directory is its owner's alone (mode
0700, refused when another user owns it); authentication is on, with a
password generated on the first start and kept in ``DATA/neo4j-password``
(mode 0600), so another local user can neither read the store's files nor log
in over Bolt; and Cypher on it cannot read files (``LOAD CSV FROM 'file:...'``)
or reach the network. It does not protect against the owner's own processes
or root.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import stat
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
PASSWORD_FILE = "neo4j-password"
PORT_FILE = "neo4j-port"
#: Under ctxneo_home(): one file per port of a server started here, naming its data directory.
REGISTRY_DIR = "neo4j-ports"
USER = "neo4j"
_MAIN = "CtxneoNeo4j"

Log = Callable[[str], None]


#: Seconds between the "still starting" lines of a start.
PROGRESS_EVERY = 10.0


def ctxneo_home() -> Path:
    """Where ctxneo keeps jars and the default server data: ``$CTXNEO_HOME`` or ~/.ctxneo."""
    return Path(os.environ.get("CTXNEO_HOME") or Path.home() / ".ctxneo")


def default_data_dir() -> Path:
    """The data directory ``ctxneo neo4j`` uses without ``--data``: one per user."""
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
    user: str = USER
    password_file: str = ""


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    # (never through a symlink another user left in the lock's place)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _trusted(path: Path, what: str, *, tighten: bool = True) -> None:
    """Refuse ``path`` (a directory or file ctxneo runs code from) unless it belongs to
    this user (or root) and no other user can write it: a jar or class another user
    could put there would run as this user, and read the server's password. A symlink
    inside the home is refused too (it may point anywhere, or nowhere).

    ``tighten``: a folder or file of ctxneo's own that others could write is made this
    user's alone; the home the user chose (``CTXNEO_HOME``) is never changed: there a
    directory others can write is accepted only with the sticky bit (as ``/tmp`` has:
    nobody else can then rename or remove what ctxneo puts in it), else refused.

    Raises:
        Neo4jLaunchError: it belongs to another user, others can write it, or it is a
            symlink or missing.
    """
    try:
        # (the home may be a link the user made to a folder of theirs: it is followed)
        st = path.lstat() if tighten else path.stat()
    except OSError as e:
        raise Neo4jLaunchError(f"cannot check {path}: {e.strerror}") from e
    if stat.S_ISLNK(st.st_mode):
        raise Neo4jLaunchError(
            f"{path} is a symbolic link: ctxneo runs {what} only from files and folders "
            "of its own; remove the link (or set CTXNEO_HOME to a directory of your own)"
        )
    if st.st_uid not in (os.getuid(), 0):
        raise Neo4jLaunchError(
            f"{path} belongs to another user (uid {st.st_uid}): ctxneo runs {what} from "
            "it and will not run another user's code; set CTXNEO_HOME to a directory of "
            "your own (default ~/.ctxneo)"
        )
    if not st.st_mode & 0o022:
        return
    if not tighten:
        if stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX:
            return
        raise Neo4jLaunchError(
            f"others can write {path}: ctxneo runs {what} from it; set CTXNEO_HOME to a "
            "directory of your own (default ~/.ctxneo), or `chmod go-w` it"
        )
    if st.st_uid != os.getuid():
        raise Neo4jLaunchError(
            f"others can write {path}: ctxneo runs {what} from it; set CTXNEO_HOME "
            "to a directory of your own (default ~/.ctxneo)"
        )
    path.chmod(st.st_mode & ~0o022 & 0o7777)


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
    """The jars and the compiled launcher, prepared once per version.

    The launcher is compiled into a directory named after its source's digest,
    so two ctxneo versions (two checkouts) on one machine never overwrite each
    other's launcher while one of them is starting a server.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or ctxneo_home()) / f"neo4j-{NEO4J_VERSION}"
        self.lib = self.root / "lib"
        self.classes = self.root / f"launcher-{_source_digest()[:16]}"

    @property
    def ready(self) -> bool:
        return (self.lib / ".complete").exists() and self._compiled()

    def _compiled(self) -> bool:
        """Whether the launcher class was built from the launcher source shipped now."""
        return (self.classes / f"{_MAIN}.class").exists()

    def classpath(self) -> str:
        return f"{self.classes}{os.pathsep}{self.lib}/*"

    def ensure(self, log: Log = lambda _: None) -> None:
        """Fetch the jars and compile the launcher if not done yet (safe from several processes).

        Raises:
            Neo4jLaunchError: Java, Maven or the download is missing or fails.
        """
        java = _java()
        self.root.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _trusted(self.root.parent, "the Neo4j jars", tighten=False)
        with _file_lock(self.root.parent / f".neo4j-{NEO4J_VERSION}.lock"):
            self.root.mkdir(mode=0o700, exist_ok=True)
            _trusted(self.root, "the Neo4j jars")
            if (self.lib / ".complete").exists():
                self._check_built(self.lib)
            else:
                self._fetch(log)
            if self._compiled():
                self._check_built(self.classes)
            else:
                self._compile(java, log)

    def _check_built(self, folder: Path) -> None:
        """``folder`` (the jars, or the compiled launcher) and everything in it, at any
        depth, are this user's to write alone (see :func:`_trusted`): checked before
        each use (a class in a subfolder is on the classpath too)."""
        _trusted(folder, "the Neo4j jars and the launcher")
        for parent, folders, files in os.walk(folder):
            for name in (*folders, *files):  # (os.walk lists links, never follows them)
                _trusted(Path(parent) / name, "the Neo4j jars and the launcher")

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
        building = self.classes.with_name(self.classes.name + ".partial")
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        source = building / f"{_MAIN}.java"
        source.write_text(resources.files(__package__).joinpath(f"{_MAIN}.java").read_text("utf-8"))
        log("compiling the launcher...")
        result = subprocess.run(
            [str(javac), "-nowarn", "-cp", f"{self.lib}/*", "-d", str(building), str(source)],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise Neo4jLaunchError(f"javac failed:\n{result.stderr.strip()[-2000:]}")
        building.rename(self.classes)


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


def _ours(pid: int, home: Path, port: int) -> bool:
    """Whether ``pid`` runs this launcher for this user, on ``home`` and ``port``.

    So stop never signals a stranger, and a password is never handed out for a
    port because a stale state file names a pid that now runs something else
    (or our launcher for another data directory, on another port).
    """
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace").split("\0")
        if Path(f"/proc/{pid}").stat().st_uid != os.getuid():
            return False
        at = args.index(_MAIN)
        # The launcher's arguments: HOME_DIR PORT PAGE_CACHE_MB PASSWORD_FILE [reset].
        # A relative HOME_DIR (an older ctxneo) is relative to the launcher's own directory.
        launched = Path(f"/proc/{pid}/cwd") / args[at + 1]
        return args[at + 2] == str(port) and os.path.samefile(launched, home)
    except (OSError, ValueError, IndexError):
        return False


def _port_free(port: int) -> bool:
    """Whether a server could listen on 127.0.0.1:``port`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # As the JVM does: connections of our last server left in TIME_WAIT do not
        # stop a listener, while any other socket listening there does.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _bolt_answers(uri: str, auth: tuple[str, str], timeout: float = 3.0) -> bool:
    """Whether Bolt at ``uri`` accepts ``auth``.

    Raises:
        Neo4jLaunchError: it answers but refuses the credentials.
    """
    import neo4j
    from neo4j.exceptions import AuthError

    try:
        with neo4j.GraphDatabase.driver(uri, auth=auth, connection_timeout=timeout) as driver:
            driver.verify_connectivity()
        return True
    except AuthError as e:
        raise Neo4jLaunchError(
            f"Neo4j at {uri} refuses the password of user {auth[0]!r}: {e.message}"
        ) from e
    except Exception:
        return False


def _private_dir(path: Path, what: str = "a Neo4j data directory") -> None:
    """Make ``path`` (and missing parents) a directory only its owner can enter.

    Raises:
        Neo4jLaunchError: it exists and belongs to another user, or is not a directory.
    """
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.stat()
    except FileExistsError as e:
        raise Neo4jLaunchError(f"{path} is not a directory") from e
    except OSError as e:
        raise Neo4jLaunchError(f"cannot use {path} as {what}: {e.strerror}") from e
    if st.st_uid != os.getuid():
        raise Neo4jLaunchError(
            f"{path} belongs to another user (uid {st.st_uid}); a local Neo4j's data is "
            "never shared between users: pass --data DIR of your own"
        )
    if st.st_mode & 0o077:
        path.chmod(0o700)


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, never visible with wider permissions."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def _read_private(path: Path) -> str | None:
    """A file of ours that nobody else can write, read without following a symlink; else None.

    What comes back names a data directory or a port; another user able to
    write it could point a lookup at a server of theirs.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as f:
        st = os.fstat(f.fileno())
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None
        try:
            return f.read().strip()
        except OSError:
            return None


def _registry() -> Path:
    return ctxneo_home() / REGISTRY_DIR


def _registered(port: int) -> Path | None:
    """The data directory registered for ``port`` by a start on this machine, if any."""
    registry = _registry()
    try:
        st = registry.stat()
    except OSError:
        return None
    # A registry another user could write to could send a lookup anywhere: ignore it.
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    text = _read_private(registry / str(port))
    return Path(text) if text else None


def _register(port: int, data_dir: Path) -> None:
    """Record that ``data_dir``'s server listens on ``port``, dropping entries gone stale.

    An entry is stale when the directory it names no longer keeps that port (it
    was deleted, or moved to another port), so the registry names each port's
    current owner only.
    """
    registry = _registry()
    _private_dir(registry, "the registry of local Neo4j ports")
    _write_private(registry / str(port), f"{data_dir}\n")
    for entry in registry.iterdir():
        if entry.name == str(port) or not entry.name.isdigit():
            continue
        named = _read_private(entry)
        if not named or LocalNeo4j(named).stored_port() != int(entry.name):
            entry.unlink(missing_ok=True)


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
        # Absolute, as the registry and the printed hints name it: valid from any directory.
        self.data_dir = (Path(data_dir) if data_dir is not None else default_data_dir()).absolute()
        self.port = port
        self.heap = heap
        self.page_cache_mb = page_cache_mb
        self.runtime = runtime or Runtime()

    @property
    def state_path(self) -> Path:
        return self.data_dir / STATE_FILE

    @property
    def password_path(self) -> Path:
        return self.data_dir / PASSWORD_FILE

    @property
    def port_path(self) -> Path:
        return self.data_dir / PORT_FILE

    def stored_port(self) -> int | None:
        """The Bolt port this data directory's server listens on (None before a first start)."""
        text = _read_private(self.port_path)
        if text is None or not text.isdecimal() or not 0 < int(text) < 65536:
            return None
        return int(text)

    def password(self) -> str | None:
        """The password of user ``neo4j`` on this data directory's server (None before a start)."""
        try:
            return self.password_path.read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def status(self) -> ServerInfo | None:
        """The server running on this data directory, or None."""
        try:
            info = ServerInfo(**json.loads(self.state_path.read_text()))
        except (OSError, ValueError, TypeError):
            return None
        # The pid may have been reused since (a reboot, a crash): it must still be our java,
        # serving this directory on the port the state names.
        home = self.data_dir / "home"
        return info if _alive(info.pid) and _ours(info.pid, home, info.port) else None

    def _ensure_password(self) -> bool:
        """Generate this server's password on the first start; True when it is new."""
        if self.password() is not None:
            return False
        _write_private(self.password_path, secrets.token_urlsafe(24) + "\n")
        return True

    def _port(self) -> int:
        """The port to start on: the one asked for, else the stored one, else a new free one.

        Raises:
            Neo4jLaunchError: that port is taken by another program.
        """
        stored = self.stored_port()
        if self.port is not None:
            port = self.port
        elif stored is not None:
            port = stored
        else:
            # Not a port another data directory keeps (its server may be stopped just now).
            port = free_port()
            for _ in range(20):
                if _registered(port) is None:
                    break
                port = free_port()
        if _port_free(port):
            return port
        if self.port is None:
            # Moving silently would break every client configured with this server's URI.
            raise Neo4jLaunchError(
                f"port {port}, where the Neo4j of {self.data_dir} listens (kept in "
                f"{self.port_path}), is taken by another program: stop that program, or "
                "start with --port N to move this server to port N for good (then update "
                "NEO4J_URI and MCP configurations)"
            )
        raise Neo4jLaunchError(f"port {port} is taken by another program: choose another --port")

    def start(self, timeout: float = 240.0, log: Log = lambda _: None) -> ServerInfo:
        """Start the server (or return the one already running) once Bolt answers.

        The server listens on the data directory's port (see the module's
        docstring); a ``port`` given to the constructor becomes that port.

        Raises:
            Neo4jLaunchError: Java/Maven are missing, the port is taken, or the
                server did not become ready within ``timeout`` seconds.
        """
        _private_dir(self.data_dir)
        # Refused now, not after the server is up: its port is recorded there once it is.
        _private_dir(_registry(), "the registry of local Neo4j ports")
        running = self.status()
        if running is not None:
            # A server an older ctxneo started has no stored port yet: keep the one it has.
            if self.stored_port() is None:
                _write_private(self.port_path, f"{running.port}\n")
            _register(running.port, self.data_dir)
            return running
        # Before fetching jars or launching anything: a taken port is known at once.
        port = self._port()
        self.runtime.ensure(log)
        home = self.data_dir / "home"
        # A server made before the password existed (an older ctxneo, or the file was
        # deleted) gets the new password set before Bolt listens.
        reset = self._ensure_password() and (home / "data" / "databases" / "system").exists()
        password = self.password()
        if password is None:  # written just above: only a file system failing gets here
            raise Neo4jLaunchError(f"cannot read the password in {self.password_path}")
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
            str(home),
            str(port),
            str(self.page_cache_mb),
            str(self.password_path),  # a path, not the password: argv is public
            *(["reset"] if reset else []),
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
        info = ServerInfo(
            process.pid,
            port,
            uri,
            str(self.data_dir),
            str(log_path),
            password_file=str(self.password_path),
        )
        started = time.monotonic()
        deadline = started + timeout
        next_note = started + PROGRESS_EVERY
        while time.monotonic() < deadline:
            if time.monotonic() >= next_note:
                # A first start takes a minute on a small machine: say it is still going.
                log(f"still starting ({time.monotonic() - started:.0f} s)...")
                next_note += PROGRESS_EVERY
            if process.poll() is not None:
                raise Neo4jLaunchError(
                    f"Neo4j exited with code {process.returncode} while starting; "
                    f"last lines of {log_path}:\n{_tail(log_path)}"
                )
            try:
                ready = f"READY {uri}" in _tail(log_path, 40) and _bolt_answers(
                    uri, (USER, password)
                )
            except Neo4jLaunchError:
                _terminate(process.pid, 10.0)
                raise
            if ready:
                self.state_path.write_text(json.dumps(asdict(info), indent=2))
                # Kept only once a server listened there: a failed first start chooses again.
                if self.stored_port() != port:
                    _write_private(self.port_path, f"{port}\n")
                _register(port, self.data_dir)
                return info
            time.sleep(0.2)
        _terminate(process.pid, 10.0)
        raise Neo4jLaunchError(
            f"Neo4j did not answer on {uri} within {timeout:.0f} s; "
            f"see {log_path}:\n{_tail(log_path)}"
        )

    def stop(self, timeout: float = 60.0) -> ServerInfo | None:
        """Stop this data directory's server (SIGTERM, then SIGKILL); return what stopped.

        Raises:
            Neo4jLaunchError: the data directory belongs to another user.
        """
        if not self.data_dir.exists():
            return None
        _private_dir(self.data_dir)
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


#: The one address the launcher listens on (CtxneoNeo4j.java). The password goes to it
#: alone: any user may listen on another loopback address with the same port (``::1``
#: among them) and read a password sent there, as Bolt is not encrypted here.
_LISTENS_ON = "127.0.0.1"


def _only_the_launchers_address(host: str | None) -> bool:
    """Whether connecting to ``host`` can only reach the launcher's address: 127.0.0.1
    itself, or ``localhost`` where it names no other address (where it also names
    ``::1``, as many systems' hosts files have it, the driver may connect there first)."""
    if host == _LISTENS_ON:
        return True
    if host != "localhost":
        return False
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return found == {_LISTENS_ON}


def local_credentials(uri: str, data_dir: Path | None = None) -> tuple[str, str] | None:
    """The user and password of the local server answering at ``uri``, if it is one.

    The local server is the one ``ctxneo neo4j start`` runs on ``data_dir``;
    without ``data_dir``, the one on :func:`default_data_dir` or on the data
    directory registered for the URI's port (a server started with ``--data``).
    Either must be running now as this user's launcher on that port, so a port
    that another program took over never gets the password; and the URI must
    reach only the address the launcher listens on, 127.0.0.1 (see
    :data:`_LISTENS_ON`). Any other URI gives ``None``.
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(uri)
        host, port = parts.hostname, parts.port
    except (ValueError, TypeError):
        return None
    if port is None or not _only_the_launchers_address(host):
        return None
    if data_dir is not None:
        candidates = [Path(data_dir)]
    else:
        registered = _registered(port)
        candidates = [default_data_dir(), *([registered] if registered is not None else [])]
    for candidate in candidates:
        server = LocalNeo4j(candidate)
        info = server.status()
        password = server.password()
        if info is not None and info.port == port and password is not None:
            return info.user, password
    return None

"""One virtual environment per torch release, under `<cache>/releases/<release>/`.

Note [Release environments]
An environment is built the first time a command needs its release, and reused by every later run:
- `<release>/venv/` is the environment; `<release>/env.json` is its completion marker, written last (through a
  rename), so a build that was cut off (Ctrl-C, a full disk, a killed job) leaves no marker and is rebuilt;
- `.locks/<release>.lock` is taken exclusively while an environment is built or removed, and shared while a
  command uses it: two commands never build the same release at once, and eviction never removes one in use;
- the checkout is installed editable and its commit recorded; a checkout that moved is re-linked, not rebuilt;
- `<release>/last-used` is touched on every use; when the environments together exceed the size cap
  (`--max-size`, `DYNFUZZ_RELEASES_MAX_SIZE`, default 40G) the least recently used ones not in use are removed.
An adopted environment (`dynfuzz releases install R --from VENV`) is a small layer over an existing one: its
size is the layer's, and removing it never touches the environment it was adopted from.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Protocol

from dynfuzz.errors import UsageError
from dynfuzz.releases.installer import InstallError, PipInstaller, is_release, venv_python, version_key

MARKER = "env.json"
LAST_USED = "last-used"
MAX_SIZE_ENV = "DYNFUZZ_RELEASES_MAX_SIZE"
DEFAULT_MAX_SIZE = 40 << 30


class Installer(Protocol):
    """What builds an environment: `PipInstaller`, or a test's fake."""

    def available(self) -> list[str] | None: ...

    def create(self, venv: Path, release: str, checkout: Path) -> str: ...

    def adopt(self, venv: Path, release: str, checkout: Path, source: Path) -> str: ...

    def link_checkout(self, venv: Path, checkout: Path) -> None: ...


@dataclass
class ReleaseEnv:
    """A built environment, as its marker records it."""

    release: str
    torch: str  # the build tag torch reports there: `2.14.1+cu130`
    python: str
    checkout: str
    commit: str
    created: float
    size_bytes: int
    adopted_from: str | None = None
    last_used: float = 0.0

    @property
    def folder(self) -> Path:
        return Path(self.python).parent.parent.parent


def default_installer() -> Installer:
    """The installer commands use (tests replace this function to inject a fake)."""
    return PipInstaller()


def max_size() -> int:
    """The size cap in bytes: `DYNFUZZ_RELEASES_MAX_SIZE` (`40G`, `500G`), else 40 GiB."""
    from dynfuzz.budget import parse_size

    raw = os.environ.get(MAX_SIZE_ENV)
    if not raw:
        return DEFAULT_MAX_SIZE
    size = parse_size(raw, floor=1 << 30, why="a release environment needs at least 1G")
    return size if size is not None else DEFAULT_MAX_SIZE


def commit_of(checkout: Path) -> str:
    """The checkout's git commit (`<sha>+dirty` with uncommitted changes), or `unknown` outside git."""
    try:
        sha = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (sha + ("+dirty" if dirty else "")) if sha else "unknown"


def folder_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


class EnvStore:
    """The release environments under one cache folder. Use as a context manager: the environments it hands
    out stay locked (shared) until it is closed, so no other command evicts them meanwhile."""

    def __init__(self, root: Path | None = None, installer: Installer | None = None, checkout: Path | None = None,
                 cap: int | None = None, log=print, progress=None) -> None:
        from dynfuzz.paths import cache_dir

        base = Path(root) if root is not None else cache_dir()
        if base.exists() and not base.is_dir():
            raise UsageError(f"{base}: the cache folder is not a folder")
        self.root = base / "releases"
        if self.root.exists() and not self.root.is_dir():
            raise UsageError(f"{self.root}: the release cache is not a folder")
        self.installer = installer or default_installer()
        self._checkout = checkout
        self.cap = cap if cap is not None else max_size()
        self.log = log
        self.progress = progress or log  # the line saying a build starts (the CLI shows it on a terminal only)
        self.held: dict[str, IO] = {}

    def __enter__(self) -> EnvStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for fh in self.held.values():
            fh.close()
        self.held.clear()

    def release(self, release: str) -> None:
        """Stop holding `release` (a bisect step done with it): eviction may remove it from now on."""
        fh = self.held.pop(release, None)
        if fh is not None:
            fh.close()

    @property
    def checkout(self) -> Path:
        if self._checkout is None:
            from dynfuzz.paths import checkout

            found = checkout()
            if found is None:
                raise UsageError("dynfuzz releases needs a checkout of dynfuzz to install into each release "
                                 "(`pip install -e .` from a clone)")
            self._checkout = Path(found)
        return self._checkout

    # ---- reading ----
    def folder(self, release: str) -> Path:
        return self.root / release

    def read(self, release: str) -> ReleaseEnv | None:
        """The environment of `release` if it is complete (its marker written and its python present)."""
        try:
            data = json.loads((self.folder(release) / MARKER).read_text())
            env = ReleaseEnv(**{k: data[k] for k in ReleaseEnv.__dataclass_fields__ if k in data})
        except (OSError, ValueError, TypeError):
            return None
        if not Path(env.python).exists():
            return None
        try:
            env.last_used = (self.folder(release) / LAST_USED).stat().st_mtime
        except OSError:
            env.last_used = env.created
        return env

    def listing(self) -> list[tuple[str, ReleaseEnv | None]]:
        """Every release folder, oldest release first, with its environment (None: half-built)."""
        if not self.root.is_dir():
            return []
        names = [p.name for p in self.root.iterdir() if p.is_dir() and is_release(p.name)]
        return [(n, self.read(n)) for n in sorted(names, key=version_key)]

    def total_size(self) -> int:
        return sum(env.size_bytes for _name, env in self.listing() if env is not None)

    # ---- building ----
    def get(self, release: str, source: Path | None = None) -> ReleaseEnv:
        """The environment of `release`, built (or, with `source`, adopted) if it is absent or half-built.
        A release that cannot be installed is a `UsageError` (one line, exit 2)."""
        check_release(release)
        if release in self.held and source is None:
            env = self.read(release)
            if env is not None:
                (self.folder(release) / LAST_USED).touch()
                return env
        fh = self._lock(release)
        try:
            fcntl.flock(fh, fcntl.LOCK_EX)
            env = self.read(release)
            if env is not None and source is None:
                env = self._relinked(env)
            else:
                env = self._build(release, source)
            (self.folder(release) / LAST_USED).touch()
            fcntl.flock(fh, fcntl.LOCK_SH)  # in use: eviction by another command passes it over
        except BaseException:
            fh.close()
            raise
        old = self.held.pop(release, None)
        if old is not None:
            old.close()
        self.held[release] = fh
        self.evict()
        return env

    def _build(self, release: str, source: Path | None) -> ReleaseEnv:
        folder = self.folder(release)
        if source is None:
            self.known_release(release)
        if folder.exists():
            self.progress(f"releases: torch {release}: rebuilding a half-built environment" if source is None
                          else f"releases: torch {release}: replacing the environment")
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        venv = folder / "venv"
        what = f"adopting {source}" if source is not None else "installing (a CUDA build takes minutes)"
        self.progress(f"releases: torch {release}: {what} into {folder}")
        start = time.monotonic()
        try:
            if source is not None:
                tag = self.installer.adopt(venv, release, self.checkout, Path(source))
            else:
                tag = self.installer.create(venv, release, self.checkout)
        except InstallError as e:
            shutil.rmtree(folder, ignore_errors=True)
            raise UsageError(f"torch {release} cannot be installed: {e}") from None
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        env = ReleaseEnv(release, tag, str(venv_python(venv)), str(self.checkout), commit_of(self.checkout),
                         time.time(), folder_size(folder), str(source) if source is not None else None)
        self._write_marker(env)
        self.log(f"releases: torch {release}: ready ({tag}, {env.size_bytes / 2**30:.1f} GiB, "
                 f"{time.monotonic() - start:.0f} s)")
        return env

    def available(self) -> list[str] | None:
        """The releases the installer can install (asked once per store), oldest first; None: it cannot tell."""
        if not hasattr(self, "_available"):
            self._available = self.installer.available()
        return self._available

    def known_release(self, release: str) -> None:
        """A release the package index does not list is unknown (one line), not a failed install."""
        listed = self.available()
        if listed is not None and release not in listed:
            near = [r for r in listed if r.rsplit(".", 1)[0] == release.rsplit(".", 1)[0]] or listed[-3:]
            raise UsageError(f"unknown torch release {release}: the package index lists {', '.join(near)}"
                             f"{' ...' if len(listed) > len(near) else ''}")

    def _relinked(self, env: ReleaseEnv) -> ReleaseEnv:
        """A reused environment: re-linked to this checkout if it was built from another one."""
        if Path(env.checkout) != self.checkout:
            try:
                self.installer.link_checkout(Path(env.python).parent.parent, self.checkout)
            except InstallError as e:
                raise UsageError(f"torch {env.release}: cannot install this checkout into it: {e}") from None
            env.checkout, env.commit = str(self.checkout), commit_of(self.checkout)
            self._write_marker(env)
        return env

    def _write_marker(self, env: ReleaseEnv) -> None:
        data = asdict(env)
        data.pop("last_used")
        path = self.folder(env.release) / MARKER
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        tmp.replace(path)

    def _lock(self, release: str) -> IO:
        locks = self.root / ".locks"
        try:
            locks.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise UsageError(f"{self.root}: the release cache is not a folder") from None
        return open(locks / f"{release}.lock", "a+")

    # ---- removing ----
    def remove(self, release: str) -> bool:
        """Remove `release`'s environment; False when there is none. Waits for commands using it."""
        check_release(release)
        if not self.folder(release).exists():
            return False
        with self._lock(release) as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            shutil.rmtree(self.folder(release), ignore_errors=True)
        return True

    def evict(self) -> list[str]:
        """Remove least recently used environments, none in use, until the total is within the cap."""
        envs = sorted((env for _n, env in self.listing() if env is not None), key=lambda e: e.last_used)
        total = sum(e.size_bytes for e in envs)
        removed = []
        for env in envs:
            if total <= self.cap:
                break
            if env.release in self.held:
                continue
            with self._lock(env.release) as fh:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # another command is using it
                shutil.rmtree(self.folder(env.release), ignore_errors=True)
            total -= env.size_bytes
            removed.append(env.release)
            self.log(f"releases: removed torch {env.release} ({env.size_bytes / 2**30:.1f} GiB, least recently "
                     f"used) to stay within {self.cap / 2**30:.0f} GiB")
        return removed


def check_release(release: str) -> None:
    if not is_release(release):
        raise UsageError(f"unknown torch release {release!r}: give a release number such as 2.14.1")

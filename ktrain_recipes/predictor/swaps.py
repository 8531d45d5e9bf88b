"""Swaps: a predictor is written into a staging folder beside its place, then renamed into it.

Staging folders are named ``.NAME.partial-HOST-PID-XXXX``; an old predictor is moved aside to
``.NAME.old-HOST-PID`` before the new one is renamed in, and removed after. A kill between the two renames
leaves ``NAME`` missing: the next writer or loader puts the old one back (``recover``). Folders left by dead
processes are removed on the next write (``clean_litter``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ktrain_recipes.errors import RecipesError, note

HOST = socket.gethostname().replace("-", "_")


def siblings(out: Path, kind: str) -> list[Path]:
    """The hidden siblings of ``out`` a save leaves (``.NAME.old-*``, ``.NAME.partial-*``), found by name, not by a
    glob pattern: a folder named ``p[1]`` would be read as a pattern and never found."""
    prefix = f".{out.name}.{kind}-"
    return [p for p in out.parent.iterdir() if p.name.startswith(prefix)] if out.parent.is_dir() else []


def check_writable(parent: Path) -> None:
    try:
        parent.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=parent, prefix=".write-test-")
        probe.close()
    except OSError as exc:
        raise RecipesError(f"cannot write in '{parent}' ({exc.strerror or exc}): choose another --out") from None


def stage_dir(out: Path) -> Path:
    """Create the staging folder a predictor is written into before it is renamed to ``out``."""
    out = Path(out)
    check_writable(out.parent)
    clean_litter(out)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-{HOST}-{os.getpid()}-", dir=out.parent))


def restage(folder: Path, skip: tuple[str, ...] = ()) -> Path:
    """A staging folder beside ``folder`` holding its files (hard links where the file system allows, else
    copies), to rewrite a saved predictor through a swap rather than in place (``export`` does)."""
    stage = stage_dir(folder)
    try:
        for path in folder.iterdir():
            if path.is_file() and path.name not in skip:
                try:
                    os.link(path, stage / path.name)
                except OSError:
                    shutil.copy2(path, stage / path.name)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


def _owner(path: Path, name: str) -> tuple[str, int] | None:
    """Return (host, pid) from a staging or moved-aside folder's name, or None."""
    for kind in (".partial-", ".old-"):
        prefix = f".{name}{kind}"
        if path.name.startswith(prefix):
            parts = path.name[len(prefix):].split("-")
            if len(parts) >= 2 and parts[1].isdigit():
                return parts[0], int(parts[1])
    return None


def _alive(host: str, pid: int) -> bool:
    if host != HOST:
        return True  # another machine's process: we cannot tell, so leave its files alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out: Path) -> None:
    """Put back a predictor a killed swap left moved aside (``out`` missing, ``.NAME.old-*`` present)."""
    out = Path(out)
    if out.exists() or not out.parent.is_dir():
        return
    for old in sorted(siblings(out, "old")):
        owner = _owner(old, out.name)
        if owner and not _alive(*owner):
            old.rename(out)
            note(f"note: restored the predictor at '{out}' that an interrupted save had moved aside")
            return


def clean_litter(out: Path) -> None:
    """Remove staging and moved-aside folders beside ``out`` that belong to dead processes; say so."""
    out = Path(out)
    recover(out)
    removed = []
    for path in list(siblings(out, "partial")) + list(siblings(out, "old")):
        owner = _owner(path, out.name)
        if owner and not _alive(*owner):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)  # a partial output file of a killed ``predict --output``
            removed.append(path.name)
    if removed:
        note(f"note: removed {len(removed)} folder(s) left by interrupted runs: {', '.join(removed)}")


@contextmanager
def writers_lock(out: Path) -> Iterator[None]:
    """Hold the lock every writer of ``out`` takes for its last check and its swap, so that two commands saving into
    one folder (``train --overwrite`` and ``export``) never interleave there; waits for the holder."""
    with lock_beside(out, "lock", "the writers' lock"):
        yield


@contextmanager
def lock_beside(out: Path, suffix: str, what: str, busy: str | None = None) -> Iterator[int]:
    """Hold a kernel lock (flock) on ``.NAME.SUFFIX`` beside ``out``; yield its descriptor. The file lives beside the
    folder it protects (in its parent, which every writer must be able to write anyway), not in a shared temporary
    folder: writers with different $TMPDIRs exclude each other, and no other user of the machine can create or hold
    it. Opened without following a link; anything but a regular file there is refused. With ``busy`` (a one-line
    error) a held lock is refused at once instead of waited for. The holder removes the file while it still holds
    it, so nothing is left behind; a process killed while holding it releases the lock with its descriptors."""
    import stat

    path = lock_path(out, suffix)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            owner = _other_owner(path)
            if owner is not None:
                raise RecipesError(_foreign(what, path, owner)) from None
            raise RecipesError(f"cannot open {what} '{path}' ({exc.strerror}): remove it if it is not a file, or "
                               "choose another --out") from None
        try:
            held = os.fstat(fd)
            if not stat.S_ISREG(held.st_mode):
                raise RecipesError(f"{what} '{path}' is not a regular file: remove it")
            if held.st_uid != os.geteuid():  # made first by another user of a shared folder: never waited for,
                raise RecipesError(_foreign(what, path, held.st_uid))  # nor its text repeated
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (fcntl.LOCK_NB if busy else 0))
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
                raise RecipesError(busy.replace("{holder}", holder)) from None  # not format: braces in --out
            try:
                now = os.stat(path, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            if now is None or (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
                continue  # the previous holder removed the file after we opened it: take the lock on the new one
            try:
                yield fd
            finally:
                try:
                    path.unlink(missing_ok=True)  # removed while still held: a waiter that opened it sees it is gone
                except OSError:  # the work under the lock is done and kept: a lock file left behind is harmless
                    pass
                fcntl.flock(fd, fcntl.LOCK_UN)
            return
        finally:
            os.close(fd)


def lock_path(out: Path, suffix: str) -> Path:
    """Where the lock ``.NAME.SUFFIX`` of ``out`` lives: beside the folder it protects (see ``lock_beside``)."""
    return Path(os.path.realpath(out)).parent / f".{Path(out).name}.{suffix}"


def check_locks_free(out: Path) -> None:
    """Refuse, before any work, an ``out`` whose writers' lock beside it belongs to another user: the save at the
    end would be refused (battery v7, X102: three epochs trained, then refused)."""
    path = lock_path(out, "lock")
    owner = _other_owner(path)
    if owner is not None:
        raise RecipesError(_foreign("the writers' lock", path, owner))


def _other_owner(path: Path) -> int | None:
    """The user id owning ``path`` when it is not this process's user; None otherwise or when it is gone."""
    try:
        uid = os.stat(path, follow_symlinks=False).st_uid
    except OSError:
        return None
    return uid if uid != os.geteuid() else None


def _foreign(what: str, path: Path, uid: int) -> str:
    return (f"{what} '{path}' belongs to another user (uid {uid}): in a folder other users can write, they could "
            "hold it; choose an --out inside a folder of your own")


def swap_into_place(stage: Path, out: Path) -> None:
    """Rename a complete staging folder to ``out``, moving an old ``out`` aside first and removing it after."""
    os.chmod(stage, 0o755)  # mkdtemp makes 0700 folders
    if not out.exists():
        stage.rename(out)
        return
    old = out.with_name(f".{out.name}.old-{HOST}-{os.getpid()}")
    out.rename(old)
    try:
        stage.rename(out)
    except BaseException:
        old.rename(out)  # put the previous predictor back
        raise
    shutil.rmtree(old, ignore_errors=True)


def swap_in_progress(out: str | os.PathLike) -> bool:
    """True while another live process is between the two renames of a swap (``out`` moved aside)."""
    out = Path(out)
    for old in siblings(out, "old"):
        owner = _owner(old, out.name)
        if owner and _alive(*owner):
            return True
    return False

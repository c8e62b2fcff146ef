"""The landlock fallback's scratch dir: a tmpfs of a fixed size per battle, or no writable disk at all.

`make_scratch(path, uid, size)` makes `path` and mounts on it a tmpfs of `size` bytes and `MAX_INODES` files,
owned by the battle's uid (0700), `nosuid,nodev,noexec`: every file the code writes, together, fits in it (the
write past it fails with ENOSPC inside the code, the agent's fault alone); its pages are memory (charged to the
battle's cgroup where it has one), never our disk, so our own writes (archive, results, logs) never meet a disk
the code filled. Where the Green may not mount (an unprivileged container: no CAP_SYS_ADMIN), the dir is a plain
dir of the uid (0700) on our disk, `writable` False: the REPL seals it once it is set up (`child.py`,
`seal_writes`: IPython and the imports need a writable temp dir, and write a few small files there), so no
agent code writes any file at all; AppWorld's own safety guard forbids writing files ("Writing to OS file system
is disabled."), so an honest agent loses nothing, and no battle's code can fill a disk.
`remove_scratch(path)` detaches the tmpfs, if any, and removes the dir
(idempotent; also for a scratch dir a killed gateway left). `mount_allowed()` says which of the two this
machine gives (the isolation record names it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import shutil
import tempfile
from pathlib import Path

SCRATCH_BYTES = 64 << 20
"""What one sandbox may write, in total (bubblewrap's /scratch, the fallback's scratch tmpfs)."""
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MNT_DETACH, UMOUNT_NOFOLLOW = 2, 8
IPYTHON_DIRS = ("db", "log", "pid", "security", "startup")
"""What IPython's profile dir must hold for it to start without writing (`IPython.core.profiledir`)."""
MAX_INODES = 16384
"""Files and dirs one scratch tmpfs holds (an inode is kernel memory that `size` does not count)."""


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _mount_tmpfs(path: Path, options: str) -> None:
    if _libc().mount(b"tmpfs", os.fsencode(path), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options.encode()) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"mount tmpfs on {path}: {os.strerror(number)}")


def make_scratch(path: Path, uid: int, size: int) -> bool:
    """Make `path` the battle's scratch dir: a tmpfs of `size` bytes, the uid's (True), or, where we may not mount,
    a plain dir of the uid that the REPL must seal before any code runs (False)."""
    remove_scratch(path)
    path.mkdir(mode=0o700)
    try:
        _mount_tmpfs(path, f"size={size},nr_inodes={MAX_INODES},mode=0700,uid={uid},gid={uid}")
    except OSError:
        os.chown(path, uid, uid)
        return False
    return True


def remove_scratch(path: Path) -> None:
    """Detach the scratch dir's tmpfs (its files go with it) and remove the dir. Idempotent."""
    while _libc().umount2(os.fsencode(path), MNT_DETACH | UMOUNT_NOFOLLOW) == 0:
        pass  # EINVAL (not a mount point) or ENOENT: nothing (more) is mounted there
    shutil.rmtree(path, ignore_errors=True)


def mount_allowed() -> bool:
    """True if the Green may mount a tmpfs here (then each fallback battle gets a sized scratch tmpfs)."""
    probe = Path(tempfile.mkdtemp(prefix="appworld-scratch-probe-"))
    try:
        _mount_tmpfs(probe, "size=4096,nr_inodes=16")
    except OSError:
        return False
    finally:
        remove_scratch(probe)
    return True

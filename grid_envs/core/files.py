"""Files the package writes for a user (level collections, maps, recordings): each is
written beside its place and moved there whole once it is complete and checked, so a
failed or interrupted write leaves nothing, and a file already there is kept unless the
caller says to replace it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def check_target(path: str | Path, flag: str, force: bool = False) -> Path:
    """``path``, a file to write: not a folder, in a folder that exists, and not a file
    already there unless ``force``; a one-line ``ValueError`` naming ``flag`` (the option
    that gave it) otherwise."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{flag} {path} is a folder; give a file name")
    if not p.parent.is_dir():
        raise ValueError(f"{flag} {path}: the folder {str(p.parent)!r} does not exist")
    if p.exists() and not force:
        raise ValueError(f"{flag} {path} exists already; choose another name or add --force")
    return p


@contextmanager
def written(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to write and check, moved to ``path`` when the
    block ends without an error, with the mode the user's other files get (not
    ``mkstemp``'s owner-only one); removed otherwise."""
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=path.suffix)
    os.close(handle)
    partial = Path(name)
    umask = os.umask(0)
    os.umask(umask)
    try:
        yield partial
        partial.chmod(0o666 & ~umask)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)

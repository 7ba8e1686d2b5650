"""Reading configuration files and writing files that must never be half-written."""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def load_file(path: str | Path, parse: Callable[[Any], T], error: type[ValueError],
              kind: str | None = None) -> T:
    """Read a JSON or TOML file (`kind`, else by its suffix) and `parse` it; every error
    names the file."""
    path = Path(path)
    kind = kind or ("TOML" if path.suffix == ".toml" else "JSON")
    try:
        text = path.read_text()
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror}") from exc
    try:
        data = tomllib.loads(text) if kind == "TOML" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise error(f"{path}: not {kind}: {exc}") from exc
    try:
        return parse(data)
    except error as exc:
        raise error(f"{path}: {exc}") from exc


def write_atomically(path: str | Path, data: bytes, mode: int = 0o644) -> None:
    """A temporary file in the same directory, fsync, rename, fsync the directory: after a
    power cut the old file or the new one is there, never half of one."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)

"""Where an installed wificc keeps what is not in its package: the LTE traces the studies replay
(a data directory the user fills) and what it builds on demand (a cache: the BPF objects).

Both follow the XDG base directories: ``$XDG_DATA_HOME`` (default ``~/.local/share``) and
``$XDG_CACHE_HOME`` (default ``~/.cache``), each with a ``wificc`` directory.
"""

from __future__ import annotations

import os
from pathlib import Path

# The directory of the Mahimahi traces, when neither --traces nor this variable names one.
TRACES_ENV = "WIFICC_TRACES"
# Where to get them (Mahimahi's traces/ directory, GPL-3.0: not shipped in the package).
TRACES_SOURCE = "https://github.com/ravinet/mahimahi/tree/master/traces"


def _xdg(variable: str, default: str) -> Path:
    value = os.environ.get(variable)
    # The specification ignores a relative path.
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / default


def data_dir() -> Path:
    """``$XDG_DATA_HOME/wificc`` (default ``~/.local/share/wificc``)."""
    return _xdg("XDG_DATA_HOME", ".local/share") / "wificc"


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/wificc`` (default ``~/.cache/wificc``)."""
    return _xdg("XDG_CACHE_HOME", ".cache") / "wificc"


def default_trace_dirs() -> list[Path]:
    """Where the traces are looked for when no directory is given, in order: ``$WIFICC_TRACES``,
    then ``traces`` in the data directory."""
    env = os.environ.get(TRACES_ENV)
    return ([Path(env)] if env else []) + [data_dir() / "traces"]


def trace_dir(given: str | os.PathLike[str] | None = None, option: str = "--traces") -> Path | None:
    """The trace directory: ``given`` (which must exist), else the first of
    :func:`default_trace_dirs` that exists, else None."""
    if given is not None:
        path = Path(given)
        if not path.is_dir():
            raise ValueError(f"{option}: {str(path)!r} is not a directory, expected the directory of the LTE traces")
        return path
    return next((p for p in default_trace_dirs() if p.is_dir()), None)


def where_traces() -> str:
    """The sentence that says where the traces were looked for and where to get them."""
    looked = " or ".join(str(p) for p in default_trace_dirs())
    return (
        f"looked in {looked}; put Mahimahi's traces ({TRACES_SOURCE}) there, or give --traces DIR or {TRACES_ENV}=DIR"
    )

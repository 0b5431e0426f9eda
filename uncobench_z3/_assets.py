"""Where the data folders (``encodings/``, ``generators/``, ``evaluators/``) are found.

In a checkout they sit beside the package at the repository root; an installed wheel carries
copies in ``uncobench_z3/_data/`` (see ``setup.py``), which take precedence when present.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def asset_path(name: str) -> Path:
    """The path of the data folder ``name``: the packaged copy if any, else the repository's."""
    packaged = _PACKAGE_DIR / "_data" / name
    if packaged.exists():
        return packaged
    return _PACKAGE_DIR.parent / name

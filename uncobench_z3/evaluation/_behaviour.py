"""What an episode's trace shows of the agent's behaviour: the counts of a sample's record.

Behaviour counts, per sample:

* ``contacts`` - requests sent (one per colleague per ask action);
* ``waits`` - wait actions;
* ``redundant_contacts`` - requests to a colleague already asked in an earlier round, every
  record of which (by the colleagues' concern rule) had already reached the agent exactly
  and in the required context. Re-asking a silent colleague, following up a wrong-context or
  imprecise reply, or asking for records not yet received is never redundant;
* ``targeted_follow_ups`` / ``generic_follow_ups`` - requests that followed up an
  outstanding defect and did / did not resolve it (a re-ask after a silence is targeted);
* ``defects_seen`` / ``defects_resolved`` - defect kinds that showed up in a reply (or a
  silence) / that a targeted follow-up then resolved;
* ``invalid_actions`` - actions the environment rejected (what the model wrote for each is in
  the trace: ``RoundRecord.output``);
* ``answered_pending`` - the agent answered while a request was still pending (a Missed
  colleague's reply it neither waited for nor asked again for);
* ``designated_contacts`` - requests to the colleague that missed a request (the paper counts
  the Missed cases with more than one).

With policy colleagues (``colleague_mode`` ``policy``), ``colleague_policy`` counts the replies
the judge found unfaithful or incomplete against the scripted reference; a sample with any
such reply broke the policy and is reported apart from the agent's figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from .._memo import remember
from .._trusted import (
    SharedFieldsSet,
    new_model,
    set_model_extra,
    set_model_fields_set,
    set_model_private,
    set_model_state,
)
from ..settings import DefectKind, StatedValue
from ._environment import ReplyRecord, RoundRecord

if TYPE_CHECKING:
    from ._evidence import FaceValueEvidence


class Behaviour(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    contacts: int = 0
    waits: int = 0
    redundant_contacts: int = 0
    targeted_follow_ups: int = 0
    generic_follow_ups: int = 0
    defects_seen: tuple[DefectKind, ...] = ()
    defects_resolved: tuple[DefectKind, ...] = ()
    invalid_actions: int = 0
    answered_pending: bool = False
    designated_contacts: int = 0

    @property
    def recovered(self) -> bool:
        """Every defect that showed up was resolved."""
        return set(self.defects_seen) <= set(self.defects_resolved)


def behaviour_of(
    trace: Sequence[RoundRecord],
    required: Mapping[str, str],
    evidence: Sequence[FaceValueEvidence] | None = None,
) -> Behaviour:
    """Count the behaviour of one episode (``required``: fact key -> required context), in
    one pass over its replies.

    ``evidence``: :func:`._evidence.evidence_by_round` of ``trace``, read in the task whose
    required contexts ``required`` holds, when the caller has read it (scoring reads it for
    the round notes): the records received before a round are then its previous snapshot's
    (``exact`` and ``conflicted``: the records stated exactly in the required context), not
    read from the replies' statements a second time."""
    if evidence is not None and len(evidence) != len(trace):
        raise ValueError("the evidence must have one snapshot per round of the trace")
    # with ``evidence``: its snapshots in order, and the one of the rounds before this one
    snapshots = iter(evidence) if evidence is not None else None
    before: FaceValueEvidence | None = None
    received: set[tuple[str, str]] = set()
    unread: list[ReplyRecord] = []  # replies of earlier rounds not yet added to ``received``
    asked: set[str] = set()
    contacts = waits = redundant = targeted = generic = invalid = 0
    seen: dict[DefectKind, None] = {}
    resolved: dict[DefectKind, None] = {}
    # for answered_pending and designated_contacts (module docstring): the roles whose reply
    # is pending, and those that ever missed a request
    pending: set[str] = set()
    designated: set[str] = set()
    answered_pending = False
    roles: list[str] = []  # the round's replies' roles
    for record in trace:
        # (the fields of a record and of its replies read as attributes: the trace's models
        # read plainly (_plain_reads.py), and 3.11 specialises each read to the field's place
        # in the instance's dict, where ``__dict__`` is a generic read and each field then a
        # dict look-up)
        action = record.action
        if action == "wait":
            waits += 1
        elif action == "invalid":
            invalid += 1
        replies = record.replies
        for reply in replies:
            role = reply.role
            roles.append(role)
            if reply.pending:
                pending.add(role)
                designated.add(role)
            if reply.answers_round is not None:
                pending.discard(role)
            if reply.resolved:
                resolved.update(dict.fromkeys(reply.resolved))
            if reply.delivered:
                continue  # a pending reply arriving after a wait: no request was sent
            contacts += 1
            # (the records concerned are compared only for a colleague asked before, and the
            # records received read only then)
            if role in asked:
                if before is not None:  # (asked before: an earlier round's snapshot)
                    exact, concerned = before.exact, reply.concerned
                    if all(map(exact.__contains__, concerned)) or (
                        _also_conflicted(before, concerned)
                    ):
                        redundant += 1
                else:
                    if unread:
                        _receive(received, unread, required)
                    if received.issuperset(reply.concerned):
                        redundant += 1
            # (most replies follow nothing up: None is compared with a text by the generic
            # comparison, which 3.11 does not specialise; two texts are compared specialised)
            follow_up = reply.follow_up
            if follow_up is not None:
                if follow_up == "targeted":
                    targeted += 1
                elif follow_up == "generic":
                    generic += 1
            if reply.defects:
                seen.update(dict.fromkeys(reply.defects))
        if action == "answer" and pending:
            answered_pending = True
        # the round's replies count as received from the next round on
        asked.update(roles)
        roles.clear()
        if snapshots is None:
            unread.extend(replies)
        else:
            before = next(snapshots)
    designated_contacts = 0
    if designated:  # (a Missed colleague: the requests sent to it, in every round)
        for record in trace:
            for reply in record.replies:
                if reply.role in designated and not reply.delivered:
                    designated_contacts += 1
    # built from counts made here, for every sample: no validation pass, and no maker's call
    # (the state written out in field order, every field given: the fields set the maker
    # gives, shared; a test checks the counts against the maker's)
    behaviour = new_model(Behaviour)
    set_model_state(
        behaviour,
        {
            "contacts": contacts,
            "waits": waits,
            "redundant_contacts": redundant,
            "targeted_follow_ups": targeted,
            "generic_follow_ups": generic,
            "defects_seen": tuple(seen),
            "defects_resolved": tuple(resolved),
            "invalid_actions": invalid,
            "answered_pending": answered_pending,
            "designated_contacts": designated_contacts,
        },
    )
    set_model_fields_set(behaviour, _EVERY_FIELD)
    set_model_extra(behaviour, None)
    set_model_private(behaviour, None)
    return behaviour


_EVERY_FIELD = SharedFieldsSet(Behaviour.model_fields)
"""the fields set of every count of :func:`behaviour_of` (every field given; a frozen model's
never changes: shared, and refusing changes, as a maker's)"""


def _also_conflicted(before: FaceValueEvidence, concerned: Sequence[tuple[str, str]]) -> bool:
    """Whether every record of ``concerned`` was stated exactly before (``before``: the
    snapshot then), some at two values (so not in ``exact``)."""
    conflicted = before.conflicted
    if conflicted is None:
        raise ValueError("the evidence must say which records were stated at two values")
    exact = before.exact
    return bool(conflicted) and all(slot in exact or slot in conflicted for slot in concerned)


def _receive(
    received: set[tuple[str, str]], replies: list[ReplyRecord], required: Mapping[str, str]
) -> None:
    """Add the records ``replies`` stated exactly in the required context (and empty it)."""
    for reply in replies:
        stated = reply.stated
        found = _exact.get(id(stated))
        if found is None or found[0] is not stated or found[1] is not required:
            exact = [
                (s.candidate, s.fact)
                for s in stated  # (``s.is_exact``, inline: every statement)
                if s.value is not None and s.context == required.get(s.fact)
            ]
            found = remember(_exact, id(stated), (stated, required, exact), _EXACT_KEPT)
        received.update(found[2])
    replies.clear()


_EXACT_KEPT = 4096
_exact: dict[int, tuple[tuple[StatedValue, ...], Mapping[str, str], list[tuple[str, str]]]] = {}
"""id of a reply's statements -> the statements (kept, so that their id is not reused), the
``required`` they were read with, and the records they state exactly in it: a faithful
reply's statements are one tuple for every reply of the group with its records (a pydantic
model's field costs about as much to read as a dict look-up and a tuple together)"""


class PolicyKeeping(BaseModel):
    """How a policy colleague kept its policy over one sample: its judged replies."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    replies: int = 0
    unfaithful: int = 0
    incomplete: int = 0
    """replies that conveyed less than the policy required"""

    @property
    def broken(self) -> bool:
        return self.unfaithful > 0 or self.incomplete > 0


def policy_keeping(trace: Sequence[RoundRecord]) -> PolicyKeeping:
    verdicts = [r.policy.verdict for rnd in trace for r in rnd.replies if r.policy is not None]
    return PolicyKeeping(
        replies=len(verdicts),
        unfaithful=sum(not v.fidelity for v in verdicts),
        incomplete=sum(v.conveyed < v.required for v in verdicts),
    )

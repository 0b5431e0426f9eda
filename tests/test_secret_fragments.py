"""Fragments of registered keys are masked whatever other keys are registered: two keys that
begin or end alike (two "sk-proj-..." keys, "register-4f9c..." and "registered-...") each lose
every run of theirs, checked against a brute force over every stretch of the text."""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from uncobench_z3 import _secrets as secrets_module
from uncobench_z3._secrets import MIN_SECRET_LENGTH, REDACTED, redact, register_secret


def brute_force_fragments(text: str, secrets: list[str]) -> str:
    """Every character inside a stretch of at least MIN_SECRET_LENGTH characters that is a
    beginning or an end of a secret is masked; each unbroken masked stretch becomes one
    REDACTED."""
    masked = [False] * len(text)
    for secret in secrets:
        for start in range(len(text)):
            for end in range(start + MIN_SECRET_LENGTH, min(len(text), start + len(secret)) + 1):
                piece = text[start:end]
                if secret.startswith(piece) or secret.endswith(piece):
                    masked[start:end] = [True] * (end - start)
    out: list[str] = []
    i = 0
    while i < len(text):
        if masked[i]:
            while i < len(text) and masked[i]:
                i += 1
            out.append(REDACTED)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# a small alphabet, so that keys share beginnings and ends and texts hold their pieces often
SECRETS = st.lists(st.text("ab-", min_size=MIN_SECRET_LENGTH, max_size=14), min_size=1, max_size=3)


@st.composite
def secrets_and_text(draw: st.DrawFn) -> tuple[list[str], str]:
    secrets = draw(SECRETS)
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            parts.append(draw(st.text("ab- .", max_size=6)))
        else:
            secret = draw(st.sampled_from(secrets))
            start = draw(st.integers(0, len(secret)))
            end = draw(st.integers(start, len(secret)))
            parts.append(secret[start:end])
    return secrets, "".join(parts)


@given(secrets_and_text(), st.randoms(use_true_random=False))
@example(  # a key written twice in a row: one stretch, one mask
    (["abababab-a"], "abababab-aabababab-a"), random.Random(0)
)
def test_fragments_are_masked_as_the_brute_force_masks_them_in_any_order(
    case: tuple[list[str], str], rng: random.Random
) -> None:
    secrets, text = case
    expected = brute_force_fragments(text, secrets)
    shuffled = list(secrets)
    rng.shuffle(shuffled)
    assert secrets_module._mask_fragments(text, secrets) == expected
    assert secrets_module._mask_fragments(text, shuffled) == expected


@given(secrets_and_text())
def test_no_beginning_or_end_of_a_registered_key_survives_redact(
    case: tuple[list[str], str],
) -> None:
    secrets, text = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(secrets_module, "_known_secrets", set())
        for secret in secrets:
            register_secret(secret)
        redacted = redact(text)
    for secret in secrets:
        assert secret[:MIN_SECRET_LENGTH] not in redacted
        assert secret[-MIN_SECRET_LENGTH:] not in redacted


@pytest.mark.parametrize("first", [0, 1])
def test_a_cut_key_is_masked_whole_beside_a_key_that_begins_alike(
    monkeypatch: pytest.MonkeyPatch, first: int
) -> None:
    """The suite found this when another test's key ("registered-...") was registered first."""
    monkeypatch.setattr(secrets_module, "_known_secrets", set())
    keys = ["registered-secret-value-777", "register-4f9c2a7e1b"]
    for key in keys[first:] + keys[:first]:
        register_secret(key)
    assert redact("body cut at register-4") == f"body cut at {REDACTED}"
    assert redact("cut: sk-xx registered-sec") == f"cut: sk-xx {REDACTED}"
    assert redact("ends ...et-value-777 and ...4f9c2a7e1b.") == (
        f"ends ...{REDACTED} and ...{REDACTED}."
    )

"""Exact numbers as text: decimal rounding done on the fraction, never through a float."""

from __future__ import annotations

from fractions import Fraction


def decimal_text(value: Fraction | float | int, digits: int = 2, sign: bool = False) -> str:
    """``value`` rounded (half to even) to ``digits`` decimals; ``sign`` adds a leading +."""
    scaled = round(Fraction(value) * 10**digits)
    prefix = "-" if scaled < 0 else ("+" if sign and scaled > 0 else "")
    whole, part = divmod(abs(scaled), 10**digits)
    return f"{prefix}{whole}.{part:0{digits}d}" if digits > 0 else f"{prefix}{whole}"


def percent_text(value: Fraction | float | int | None, digits: int = 1, sign: bool = False) -> str:
    """A share as a percentage (``"–"`` for None)."""
    if value is None:
        return "–"
    return decimal_text(Fraction(value) * 100, digits, sign) + "%"


def fraction_json(value: Fraction | None) -> str | None:
    """The exact JSON form of a number: ``"p/q"`` or ``"p"`` (``Fraction(text)`` reads it)."""
    return None if value is None else str(value)


def p_value_text(value: Fraction, digits: int = 3) -> str:
    """A p-value to ``digits`` decimals, or ``<0.001`` (for 3 digits) when it rounds to zero."""
    text = decimal_text(value, digits)
    if value > 0 and Fraction(text) == 0:
        return "<" + decimal_text(Fraction(1, 10**digits), digits)
    return text

"""Kubernetes ``resource.Quantity``: parsing, comparison and Go's canonical string form.

A port of ``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go``, ``suffix.go``,
``amount.go``): the same scanner (so the same strings are accepted, quirks
included: ``"."`` and ``"m"`` parse as zero), the same rounding (a non-zero
value finer than nano is rounded away from zero to ``1n``), the same three
formats (binarySI ``Ki..Ei``, decimalSI ``n u m "" k M G T P E``,
decimalExponent ``e<int>``) and the same canonicalization, including the
cached original string Go re-emits verbatim when it is already canonical.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")

# suffix -> (base, exponent, format)
_SUFFIXES: dict[str, tuple[int, int, str]] = {
    "": (10, 0, DECIMAL_SI),
    "n": (10, -9, DECIMAL_SI),
    "u": (10, -6, DECIMAL_SI),
    "m": (10, -3, DECIMAL_SI),
    "k": (10, 3, DECIMAL_SI),
    "M": (10, 6, DECIMAL_SI),
    "G": (10, 9, DECIMAL_SI),
    "T": (10, 12, DECIMAL_SI),
    "P": (10, 15, DECIMAL_SI),
    "E": (10, 18, DECIMAL_SI),
    "Ki": (2, 10, BINARY_SI),
    "Mi": (2, 20, BINARY_SI),
    "Gi": (2, 30, BINARY_SI),
    "Ti": (2, 40, BINARY_SI),
    "Pi": (2, 50, BINARY_SI),
    "Ei": (2, 60, BINARY_SI),
}
_DEC_SUFFIX_OF_EXP = {e: s for s, (b, e, f) in _SUFFIXES.items() if b == 10}
_BIN_SUFFIX_OF_EXP = {e // 10: s for s, (b, e, f) in _SUFFIXES.items() if b == 2}

_MAX_INT64 = 2**63 - 1
_MAX_INT64_FACTORS = 18
_NANO = Fraction(1, 10**9)


def _scan(s: str) -> tuple[bool, str, str, str, str]:
    """``parseQuantityString``: (positive, value, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(s)
    if end and s[0] in "+-":
        positive = s[0] == "+"
        pos = 1
    # strip leading zeros
    while True:
        if pos >= end:
            return positive, "0", "0", "", ""
        if s[pos] != "0":
            break
        pos += 1
    # numerator
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, s, s[pos:] or "0", "", ""
    num = s[pos:i] or "0"
    pos = i
    denom = ""
    if s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i] in _DIGITS:
            i += 1
        denom = s[pos:i]
        if i >= end:
            return positive, s, num, denom, ""
        pos = i
    value = s[:pos]
    suffix_start = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, s[suffix_start:]
    if s[pos] in "+-":
        pos += 1
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, s[suffix_start:]
    raise ValueError(f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {s!r}")


def _interpret(suffix: str) -> tuple[int, int, str]:
    hit = _SUFFIXES.get(suffix)
    if hit is not None:
        return hit
    if len(suffix) > 1 and suffix[0] in "eE":
        exp = suffix[1:]
        body = exp[1:] if exp[0] in "+-" else exp
        if body and all(c in _DIGITS for c in body):
            return 10, int(exp), DECIMAL_EXPONENT
    raise ValueError(f"unable to parse quantity's suffix: {suffix!r}")


@lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[Fraction, str, str | None]:
    """``ParseQuantity``: (value, format, the original string when Go keeps it as is)."""
    s = text
    if not s:
        raise ValueError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    if s == "0":
        return Fraction(0), DECIMAL_SI, "0"
    positive, value, num, denom, suf = _scan(s)
    base, exponent, fmt = _interpret(suf)

    precision = 0
    scale = 0
    mantissa = 1
    if fmt == BINARY_SI:
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))

    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            iv = int(shifted)
            result = iv * mantissa
            if result <= _MAX_INT64:
                if not positive:
                    result = -result
                amount = Fraction(result) * (Fraction(10) ** scale)
                cached: str | None = None
                if fmt == BINARY_SI:
                    if exponent % 10 == 0 and iv & 0x07 != 0:
                        cached = s
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    cached = s
                return amount, fmt, cached

    try:
        amount = Fraction(value)
    except ValueError as e:
        raise ValueError(f"unable to parse numeric part of quantity: {s!r}") from e
    amount = amount * Fraction(10) ** exponent if base == 10 else amount * (1 << exponent)
    negative = amount < 0
    if negative:
        amount = -amount
    if amount != 0:
        amount = Fraction(math.ceil(amount / _NANO)) * _NANO
    if fmt == BINARY_SI and amount > _MAX_INT64:
        amount = Fraction(_MAX_INT64)
    if fmt == BINARY_SI and 0 < amount < 1:
        fmt = DECIMAL_SI
    return (-amount if negative else amount), fmt, None


def _text(value: str | int | float) -> str:
    if isinstance(value, bool):
        raise ValueError(f"a quantity cannot be a boolean: {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a quantity: {value!r}")
        return repr(value)
    if isinstance(value, str):
        return value.strip()
    raise ValueError(f"not a quantity: {value!r}")


def parse_quantity(value: str | int | float) -> Fraction:
    """The exact value of a quantity (``"100m"`` → 1/10); ValueError when malformed.

    JSON numbers are read as Go reads their text (``1.5`` as ``"1.5"``).
    """
    return _parse(_text(value))[0]


def quantity_format(value: str | int | float) -> str:
    """The format Go remembers for a quantity: ``BinarySI``, ``DecimalSI`` or ``DecimalExponent``."""
    return _parse(_text(value))[1]


def _decimal_parts(q: Fraction) -> tuple[int, int]:
    """(mantissa, exponent) with the exponent lowered to a multiple of 3 (``AsCanonicalBytes``)."""
    den = q.denominator
    k = 0
    while den % 10 == 0:
        den //= 10
        k += 1
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    k += max(twos, fives)
    m = q * 10**k
    mant = m.numerator
    exp = -k
    while mant % 10 == 0:
        mant //= 10
        exp += 1
    while exp % 3 != 0:
        mant *= 10
        exp -= 1
    return mant, exp


def _canonicalize(q: Fraction, fmt: str) -> str:
    if q == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < q < 1024:
            fmt = DECIMAL_SI
        else:
            rounded = math.ceil(q) if q > 0 else -math.ceil(-q)
            if rounded != q:
                fmt = DECIMAL_SI
            else:
                n = int(rounded)
                sign = "-" if n < 0 else ""
                n = abs(n)
                e = 0
                while n % 1024 == 0:
                    n //= 1024
                    e += 1
                return f"{sign}{n}{_BIN_SUFFIX_OF_EXP.get(e, '')}"
    elif fmt != DECIMAL_SI:
        fmt = DECIMAL_EXPONENT
    mant, exp = _decimal_parts(q)
    if fmt == DECIMAL_SI:
        suffix = _DEC_SUFFIX_OF_EXP.get(exp)
        if suffix is not None:
            return f"{mant}{suffix}"
    return f"{mant}e{exp}" if exp else str(mant)


@lru_cache(maxsize=4096)
def _canonical_text(text: str) -> str:
    q, fmt, cached = _parse(text)
    return cached if cached is not None else _canonicalize(q, fmt)


def canonical_quantity(value: str | int | float) -> str:
    """What Go's ``Quantity`` marshals after unmarshalling ``value`` from JSON.

    ``"1000m"`` → ``"1"``, ``"0.5"`` → ``"500m"``, ``"1024Mi"`` → ``"1Gi"``, ``1`` → ``"1"``.
    A string Go considers canonical already is kept verbatim (``"100m"``, ``"1e3"``).
    """
    return _canonical_text(_text(value))


def format_quantity(value: Fraction, fmt: str = DECIMAL_SI) -> str:
    """The canonical string of an exact value in a format (``Quantity.String()`` of a computed value)."""
    return _canonicalize(Fraction(value), fmt)


def quantity_equal(a: str | int | float, b: str | int | float) -> bool:
    """True when two quantities have the same value (``Quantity.Cmp == 0``): ``"1000m"`` == ``1``."""
    return parse_quantity(a) == parse_quantity(b)

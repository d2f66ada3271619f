"""resource.Quantity: the parser, the value, and Go's canonical string after a JSON round trip."""

from __future__ import annotations

from fractions import Fraction

import pytest

from fakeapi.machinery.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    canonical_quantity,
    format_quantity,
    parse_quantity,
    quantity_equal,
    quantity_format,
)

PARSE = [
    ("1", Fraction(1)),
    ("0", Fraction(0)),
    ("100m", Fraction(1, 10)),
    ("1.5", Fraction(3, 2)),
    (".5", Fraction(1, 2)),
    ("5.", Fraction(5)),
    ("-1.5Gi", Fraction(-3 * 2**29)),
    ("+2k", Fraction(2000)),
    ("1Ki", Fraction(1024)),
    ("1Mi", Fraction(2**20)),
    ("1Ei", Fraction(2**60)),
    ("1n", Fraction(1, 10**9)),
    ("1u", Fraction(1, 10**6)),
    ("1e3", Fraction(1000)),
    ("1E-3", Fraction(1, 1000)),
    ("1e+2", Fraction(100)),
    ("0.9n", Fraction(1, 10**9)),  # rounded up to nano
    ("3e-10", Fraction(1, 10**9)),
    ("8Ei", Fraction(2**63 - 1)),  # binarySI capped at MaxInt64
    ("m", Fraction(0)),  # Go's scanner quirk: an empty number is zero
    (".", Fraction(0)),
    (" 2 ", Fraction(2)),  # UnmarshalJSON trims spaces
    (1, Fraction(1)),
    (0.25, Fraction(1, 4)),
    (2.0, Fraction(2)),
]


@pytest.mark.parametrize(("text", "value"), PARSE)
def test_parse_quantity(text: str | int | float, value: Fraction) -> None:
    assert parse_quantity(text) == value


BAD = ["", "1.1.M", "0.1mi", "aoeu", "1i", "1K", "1e", "1Kb", "-3.01i", "1 Mi", "x1"]


@pytest.mark.parametrize("text", BAD)
def test_parse_quantity_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_quantity(text)


@pytest.mark.parametrize("value", [True, None, [], {}, float("inf")])
def test_parse_quantity_rejects_non_quantities(value: object) -> None:
    with pytest.raises(ValueError):
        parse_quantity(value)  # type: ignore[arg-type]


CANONICAL = [
    # decimalSI
    ("1000m", "1"),
    ("0.5", "500m"),
    ("1.5", "1500m"),
    ("1000", "1k"),
    ("1500", "1500"),
    ("0.1", "100m"),
    ("100m", "100m"),
    ("1.2345", "1234500u"),
    ("0.9n", "1n"),
    ("-0.5", "-500m"),
    ("1000E", "1e21"),  # beyond E: exponent form
    ("0m", "0"),
    # binarySI
    ("1024Mi", "1Gi"),
    ("1.5Gi", "1536Mi"),
    ("2048Ki", "2Mi"),
    ("0.5Gi", "512Mi"),
    ("0.1Ki", "102400m"),  # below 1024: decimal
    ("8Ei", "9223372036854775807"),
    ("1Ei", "1Ei"),
    # decimalExponent
    ("12e1", "120"),
    ("15e-1", "1500e-3"),
    ("3e-10", "1e-9"),
    # strings Go already considers canonical are kept verbatim
    ("1e3", "1e3"),
    ("1E3", "1E3"),
    ("+1", "+1"),
    ("01", "01"),
    ("1.500", "1.500"),
    ("500Mi", "500Mi"),
    ("-1Ki", "-1Ki"),
    # JSON numbers
    (1, "1"),
    (0, "0"),
    (0.5, "500m"),
    (2.0, "2"),
    (1e20, "100e18"),
]


@pytest.mark.parametrize(("value", "expected"), CANONICAL)
def test_canonical_quantity(value: str | int | float, expected: str) -> None:
    assert canonical_quantity(value) == expected


@pytest.mark.parametrize(
    ("value", "fmt"),
    [("1", DECIMAL_SI), ("1Ki", BINARY_SI), ("1e3", DECIMAL_EXPONENT), ("0.5Ki", BINARY_SI), ("0.0001Ki", DECIMAL_SI)],
)
def test_quantity_format(value: str, fmt: str) -> None:
    assert quantity_format(value) == fmt


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ("1000m", "1", True),
        ("1000m", 1, True),
        ("1Gi", "1073741824", True),
        ("1Gi", "1G", False),
        ("0.5", "500m", True),
        ("1k", "1000", True),
        ("1", "2", False),
    ],
)
def test_quantity_equal(a: str | int, b: str | int, equal: bool) -> None:
    assert quantity_equal(a, b) is equal


@pytest.mark.parametrize(
    ("value", "fmt", "expected"),
    [(Fraction(3, 2), DECIMAL_SI, "1500m"), (Fraction(2**30), BINARY_SI, "1Gi"), (Fraction(0), BINARY_SI, "0")],
)
def test_format_quantity(value: Fraction, fmt: str, expected: str) -> None:
    assert format_quantity(value, fmt) == expected

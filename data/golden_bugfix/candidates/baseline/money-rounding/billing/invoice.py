"""Line and invoice totals, in the invoice's currency."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def line_total(unit_price: str | Decimal, quantity: int, vat_rate: str | Decimal = "0") -> Decimal:
    """Gross amount of one invoice line, rounded half up to the cent (exact decimal arithmetic)."""
    gross = Decimal(unit_price) * quantity * (1 + Decimal(vat_rate))
    return gross.quantize(CENT, rounding=ROUND_HALF_UP)


def invoice_total(lines: Iterable[tuple[str | Decimal, int, str | Decimal]]) -> Decimal:
    """Total of an invoice: the sum of its rounded line totals (``(unit_price, quantity, vat_rate)`` tuples)."""
    total = sum((line_total(price, quantity, rate) for price, quantity, rate in lines), Decimal("0.00"))
    return total.quantize(CENT)

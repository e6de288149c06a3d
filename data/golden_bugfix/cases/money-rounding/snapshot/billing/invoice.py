"""Line and invoice totals, in the invoice's currency."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal


def line_total(unit_price: str | Decimal, quantity: int, vat_rate: str | Decimal = "0") -> Decimal:
    """Gross amount of one invoice line, rounded to the cent."""
    gross = float(unit_price) * quantity * (1 + float(vat_rate))
    return Decimal(f"{round(gross, 2):.2f}")


def invoice_total(lines: Iterable[tuple[str | Decimal, int, str | Decimal]]) -> Decimal:
    """Total of an invoice: ``lines`` holds ``(unit_price, quantity, vat_rate)`` tuples."""
    gross = sum(float(price) * quantity * (1 + float(rate)) for price, quantity, rate in lines)
    return Decimal(f"{round(gross, 2):.2f}")

"""Line and invoice totals, in the invoice's currency (exact decimals, never float)."""

from __future__ import annotations

import decimal
from collections.abc import Iterable
from decimal import Decimal

_CENT = Decimal("0.01")
# Enough digits for any invoice amount: the default context's 28 would round large products.
_CONTEXT = decimal.Context(prec=50, rounding=decimal.ROUND_HALF_UP)


def _to_cents(amount: Decimal) -> Decimal:
    return amount.quantize(_CENT, context=_CONTEXT)


def line_total(unit_price: str | Decimal, quantity: int, vat_rate: str | Decimal = "0") -> Decimal:
    """Gross amount of one invoice line, rounded half up to the cent."""
    net = _CONTEXT.multiply(Decimal(unit_price), Decimal(quantity))
    gross = _CONTEXT.multiply(net, _CONTEXT.add(Decimal(1), Decimal(vat_rate)))
    return _to_cents(gross)


def invoice_total(lines: Iterable[tuple[str | Decimal, int, str | Decimal]]) -> Decimal:
    """Total of an invoice: the sum of the printed (rounded) line totals."""
    total = Decimal(0)
    for unit_price, quantity, vat_rate in lines:
        total = _CONTEXT.add(total, line_total(unit_price, quantity, vat_rate))
    return _to_cents(total)

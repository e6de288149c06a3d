"""Invoice arithmetic."""

from billing.invoice import invoice_total, line_total

__all__ = ["invoice_total", "line_total"]

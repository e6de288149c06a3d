# ruff: noqa: PT009 - hidden tests run with the system python3 (unittest only)
import unittest
from decimal import Decimal

from billing import invoice_total, line_total


class LineTotal(unittest.TestCase):
    def test_half_cent_rounds_up(self):
        # 3 x 0.875 = 2.625 exactly; half-up gives 2.63 (float round() gives 2.62, half-even)
        self.assertEqual(str(line_total("0.875", 3)), "2.63")

    def test_no_binary_float_error(self):
        # float("1.005") is 1.00499999999999989...; the decimal amount is 1.005 -> 1.01
        self.assertEqual(str(line_total("1.005", 1)), "1.01")

    def test_vat_applied_before_rounding(self):
        # 19.99 x 3 = 59.97; x 1.2 = 71.964 -> 71.96
        self.assertEqual(str(line_total("19.99", 3, vat_rate="0.2")), "71.96")

    def test_decimal_inputs_and_two_places(self):
        total = line_total(Decimal("5"), 1)
        self.assertIsInstance(total, Decimal)
        self.assertEqual(str(total), "5.00")

    def test_large_amounts_stay_exact(self):
        # 12345678901234.565 needs 17 significant digits: a float cannot hold it
        self.assertEqual(str(line_total("12345678901234.565", 1)), "12345678901234.57")


class InvoiceTotal(unittest.TestCase):
    def test_sum_of_rounded_lines(self):
        lines = [("0.125", 1, "0"), ("0.125", 1, "0")]
        self.assertEqual(str(invoice_total(lines)), "0.26")

    def test_mixed_rates(self):
        lines = [("0.875", 3, "0"), ("19.99", 3, "0.2"), ("10", 2, "0.07")]
        # 2.63 + 71.96 + 21.40
        self.assertEqual(str(invoice_total(lines)), "95.99")

    def test_empty_invoice(self):
        self.assertEqual(str(invoice_total([])), "0.00")

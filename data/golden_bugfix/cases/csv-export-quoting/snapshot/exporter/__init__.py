"""Exports of shop data for spreadsheets and partners."""

from exporter.csvout import to_csv

__all__ = ["to_csv"]

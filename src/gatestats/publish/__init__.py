"""Tables and charts going out: labels, cells, formats, charts (docs/publish.md)."""

"""Fixtures of the record tests."""

from __future__ import annotations

import pytest

from gatestats.records import lines


@pytest.fixture
def prove_every_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small files are proved too (the reader leaves a file under ``lines._PROVE_FROM_LINES`` lines to the line
    pass): a test module that compares the block proofs with the line pass uses it on every test
    (``pytestmark = pytest.mark.usefixtures("prove_every_block")``)."""
    monkeypatch.setattr(lines, "_PROVE_FROM_LINES", 0)

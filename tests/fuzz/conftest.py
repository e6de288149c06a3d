"""The fuzz corpus, built once per session (shared with other modules: tests/conftest.py, ``fuzz_corpus``)."""

from __future__ import annotations

import pytest

from tests.fuzz.corpus import Corpus


@pytest.fixture(scope="session")
def corpus(fuzz_corpus: Corpus) -> Corpus:
    return fuzz_corpus

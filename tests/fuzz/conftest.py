"""The fuzz corpus, built once per session."""

from __future__ import annotations

import pytest

from tests.fuzz.corpus import Corpus, build_corpus


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("fuzz-corpus"))

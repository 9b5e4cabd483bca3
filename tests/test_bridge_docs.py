"""The code of the bridge pages (docs/bridges/*.md) runs, like the code of docs/*.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import test_docs  # as a module: importing its tests by name would collect them here

pytest.importorskip("reasoning_gym")
pytest.importorskip("textarena")

PAGES = sorted((test_docs.ROOT / "docs" / "bridges").glob("*.md"))


def test_there_is_a_page_per_bridge() -> None:
    assert [page.name for page in PAGES] == ["reasoning_gym.md", "textarena.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_bridge_page_code_runs(page: Path, tmp_path: Path) -> None:
    test_docs.test_doc_code_blocks_run(page, tmp_path)

"""Issue 23 through ``ask``: variants searched, authority by document class, fallbacks that say
what happened. Real knowledge bases in tmp_path; the web on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from sourcewise import KnowledgeBase
from sourcewise.ask import aask
from sourcewise.config import Settings, load_settings
from sourcewise.session import Session


@pytest.fixture
def st(tmp_path: Path) -> Settings:
    return load_settings(state_dir=tmp_path / "state", timeout=2.0, source_timeout=5.0)


def _kb(st: Settings, tmp_path: Path, files: dict[str, str]) -> None:
    docs = tmp_path / "docs"
    for name, body in files.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(body, "utf-8")
    with KnowledgeBase(st.state_dir / "kb.sqlite3", semantic=False) as kb:
        kb.index([docs])


async def test_kubernetes_setup_finds_the_k8s_page_through_its_variants(st: Settings, tmp_path: Path) -> None:
    _kb(
        st,
        tmp_path,
        {
            "k8s-cluster-bootstrap.md": "# k8s cluster bootstrap\n\nRun kubeadm init on the first node, "
            "then join the workers with the printed token.\n",
            "lunch.md": "# Lunch\n\nPizza on Fridays.\n",
        },
    )
    session = Session(st)
    try:
        answer = await aask("Kubernetes setup", sources=["kb"], session=session)
    finally:
        await session.aclose()
    assert answer.hits, answer.text
    assert answer.hits[0].hit.title == "k8s cluster bootstrap"
    queries = answer.reports[0].queries
    assert queries[0] == "Kubernetes setup"
    assert "k8s setup" in queries  # the variant query, within the same deadline


async def test_a_multi_word_variant_from_config_is_searched(tmp_path: Path) -> None:
    st = load_settings(
        state_dir=tmp_path / "state", source_timeout=5.0, variants=[["rate limiting", "throttling"]]
    )
    _kb(st, tmp_path, {"api.md": "# Throttling\n\nThe edge throttles clients above 100 requests a second.\n"})
    session = Session(st)
    try:
        answer = await aask("rate limiting for the public gateway", sources=["kb"], session=session)
    finally:
        await session.aclose()
    assert "throttling" in answer.plan.variants["rate limiting"]
    assert any(q.startswith("throttling") for q in answer.reports[0].queries)
    assert answer.hits
    assert answer.hits[0].hit.title == "Throttling"

"""Synonyms and abbreviations for query variants (seed 003: "Kubernetes setup" -> k8s, ...).

Each group lists names for one thing; a term in a group gets the others as variants. Users add
groups in config (``variants = [["sso", "single sign-on"]]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from sourcewise.text.words import words

__all__ = ["CATEGORIES", "GROUPS", "category_of", "variants_for"]

GROUPS: tuple[tuple[str, ...], ...] = (
    ("kubernetes", "k8s", "쿠버네티스", "container orchestration", "cluster"),
    ("javascript", "js", "자바스크립트", "ecmascript"),
    ("typescript", "ts", "타입스크립트"),
    ("database", "db", "데이터베이스", "디비"),
    ("postgresql", "postgres", "psql", "포스트그레스"),
    ("mysql", "마이에스큐엘"),
    ("mongodb", "mongo", "몽고디비"),
    ("elasticsearch", "elastic", "es", "엘라스틱서치"),
    ("python", "py", "파이썬"),
    ("golang", "go", "고랭"),
    ("react", "reactjs", "react.js", "리액트"),
    ("next.js", "nextjs", "넥스트"),
    ("node.js", "nodejs", "node", "노드"),
    ("docker", "container", "도커", "컨테이너"),
    ("continuous integration", "ci", "ci/cd", "pipeline", "빌드 파이프라인"),
    ("machine learning", "ml", "머신러닝", "기계학습"),
    ("artificial intelligence", "ai", "인공지능"),
    ("large language model", "llm", "언어모델"),
    ("retrieval augmented generation", "rag"),
    ("user interface", "ui", "화면"),
    ("user experience", "ux", "사용자 경험"),
    ("pull request", "pr", "merge request", "mr"),
    ("api", "endpoint", "인터페이스"),
    ("authentication", "auth", "login", "sign-in", "인증", "로그인"),
    ("single sign-on", "sso"),
    ("migration", "마이그레이션", "이전", "이관"),
    ("deployment", "deploy", "release", "배포", "릴리스"),
    ("timeline", "schedule", "roadmap", "일정", "로드맵"),
    ("decision", "결정", "decided", "agreed", "합의"),
    ("specification", "spec", "스펙", "명세", "명세서"),
    ("document", "doc", "docs", "문서"),
    ("meeting notes", "minutes", "회의록"),
    ("bug", "issue", "defect", "버그", "이슈"),
    ("incident", "outage", "장애"),
    ("performance", "latency", "성능"),
    ("security", "보안"),
    ("budget", "cost", "예산", "비용"),
    ("onboarding", "온보딩", "입사"),
    ("amazon web services", "aws"),
    ("google cloud", "gcp"),
    ("microsoft azure", "azure"),
    ("infrastructure as code", "iac", "terraform"),
    ("objectives and key results", "okr", "okrs"),
    ("key performance indicator", "kpi", "kpis"),
    ("quarter", "q1", "q2", "q3", "q4", "분기"),
)


@lru_cache(maxsize=8)
def _index(extra: tuple[tuple[str, ...], ...]) -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for group in (*GROUPS, *extra):
        names = [n.lower() for n in group]
        for name in names:
            bucket = index.setdefault(name, [])
            bucket.extend(n for n in names if n != name and n not in bucket)
    return {k: tuple(v) for k, v in index.items()}


def variants_for(
    terms: Iterable[str], extra: Sequence[Sequence[str]] = (), text: str = ""
) -> dict[str, list[str]]:
    """term -> its other names, for the terms that have any; with ``text`` (the question), also
    the names of several words it says ("rate limiting" -> "throttling")."""
    key = tuple(tuple(g) for g in extra)
    index = _index(key)
    out: dict[str, list[str]] = {}
    if text:
        said = f" {' '.join(words(text))} "
        for name in _phrases(key):
            if f" {name} " in said:
                out[name] = list(index[name])
    for term in terms:
        found = index.get(term.lower())
        if found:
            out[term] = list(found)
    return out


@lru_cache(maxsize=8)
def _phrases(extra: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """The names of several words among the groups, longest first."""
    return tuple(sorted((n for n in _index(extra) if " " in n), key=len, reverse=True))


# What a named thing is an instance of, for seed 003's last broadening steps ("PostgreSQL
# migration" -> "database migration"): (English, Korean) category names -> the group heads above.
CATEGORIES: dict[tuple[str, str], tuple[str, ...]] = {
    ("database", "데이터베이스"): (
        "postgresql", "mysql", "mongodb", "elasticsearch", "redis", "sqlite", "oracle", "mariadb",
        "cassandra", "dynamodb",
    ),
    ("cloud", "클라우드"): ("amazon web services", "google cloud", "microsoft azure"),
    ("container", "컨테이너"): ("kubernetes", "docker"),
    ("frontend", "프론트엔드"): ("react", "next.js", "vue", "angular", "svelte"),
    ("message queue", "메시지 큐"): ("kafka", "rabbitmq", "sqs", "pulsar"),
    ("language", "언어"): ("python", "golang", "javascript", "typescript", "java", "rust", "kotlin"),
    ("chat", "메신저"): ("slack", "teams", "discord"),
    ("tracker", "이슈 트래커"): ("jira", "asana", "linear"),
}  # fmt: skip


@lru_cache(maxsize=1)
def _members() -> dict[str, tuple[str, str]]:
    names = _index(())
    out: dict[str, tuple[str, str]] = {}
    for category, heads in CATEGORIES.items():
        for head in heads:
            for name in (head, *names.get(head, ())):
                out.setdefault(name, category)
    return out


def category_of(term: str, *, korean: bool = False) -> str | None:
    """The category ``term`` names an instance of, in the question's language, or ``None``."""
    found = _members().get(term.lower())
    return None if found is None else found[1 if korean else 0]

"""What ``sourcewise index --status`` tells about a knowledge base: size, chunks, files, last run, and
which files are in it and which are not, and why."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sourcewise.access import PUBLIC
from sourcewise.sources.kb.rows import Store

__all__ = ["FileCoverage", "KBStatus", "LastRun", "last_run_record", "status_of"]


class FileCoverage(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    state: Literal["indexed", "skipped", "failed"]
    reason: str = Field(default="", description="why a file is not indexed")
    chunks: int = 0


class LastRun(BaseModel):
    model_config = ConfigDict(frozen=True)

    at: datetime
    seconds: float
    added: int
    updated: int
    removed: int
    unchanged: int
    skipped: int
    chunks: int = Field(description="chunks written by that run")


class KBStatus(BaseModel):
    """The state of one knowledge base."""

    model_config = ConfigDict(frozen=True)

    index: str = Field(description="the index file (the engine's folder is beside it)")
    bytes_on_disk: int
    files: int
    chunks: int
    embedded: int = Field(description="chunk texts with an embedding (semantic extra)")
    vectors: str = Field(default="", description="how vectors are compared: in this process, or pgvector")
    restricted: int = Field(
        default=0,
        description="files not every user may read (their or a folder's permissions): over the "
        "network doors only [access] users named as their owner or group find them",
    )
    analyzer: str | None
    last_run: LastRun | None
    coverage: list[FileCoverage] = Field(description="every file indexed, skipped or failed")


def status_of(store: Store) -> KBStatus:
    files, chunks, _ = store.stats()
    covered = [FileCoverage(path=p, state="indexed", chunks=n) for p, n in store.indexed()]
    covered += [FileCoverage(path=p, state=s, reason=r) for p, s, r in store.coverage()]  # type: ignore[arg-type]
    raw = store.get_meta("last_run")
    last = LastRun.model_validate(json.loads(raw)) if raw else None
    return KBStatus(
        index=store.location, bytes_on_disk=store.disk_bytes(), files=files, chunks=chunks,
        embedded=store.vector_count(), vectors=store.vector_search, analyzer=store.get_meta("analyzer"),
        restricted=sum(r != (PUBLIC,) for r in store.readers().values()),
        last_run=last,
        coverage=sorted(covered, key=lambda c: c.path),
    )  # fmt: skip


def last_run_record(seconds: float, added: int, updated: int, removed: int, unchanged: int, skipped: int,
                    chunks: int) -> str:  # fmt: skip
    return LastRun(
        at=datetime.now(UTC), seconds=seconds, added=added, updated=updated, removed=removed,
        unchanged=unchanged, skipped=skipped, chunks=chunks,
    ).model_dump_json()  # fmt: skip

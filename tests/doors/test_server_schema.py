"""schemathesis against our own OpenAPI description, on a real uvicorn server on 127.0.0.1:
generated good and bad input never gets a 5xx, and every answer matches the schema.

``/fetch`` is left out: a generated URL naming a real host would make the server resolve it,
and no test touches the internet (its bad input has its own tests in test_server.py). The
example budget is small; CI may raise it with SOURCEWISE_SCHEMA_EXAMPLES.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from sourcewise import KnowledgeBase, load_settings
from sourcewise.doors.http import build_api, create_app
from sourcewise.doors.service import DoorSettings

from doorkit import JSON, SMALL, uvicorn_thread
from servers import LocalServer, Reply, local_server

EXAMPLES = int(os.environ.get("SOURCEWISE_SCHEMA_EXAMPLES", "25"))


@pytest.fixture(scope="module")
def api_schema() -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_dict(build_api().openapi())


# Loaded when the test runs, each operation a subtest: loaded at collection, schemathesis built
# every operation's cases in every xdist worker (~3 s of CPU each), not only in the one running it.
schema = schemathesis.pytest.from_fixture("api_schema").exclude(path="/fetch")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    providers: LocalServer
    with local_server() as providers:
        providers.route("/sx/search", Reply(200, SMALL, content_type=JSON))
        state: Path = tmp_path_factory.mktemp("state")
        notes = tmp_path_factory.mktemp("notes")
        (notes / "deploy.md").write_text(
            "# Deploying\n\nTag the release, then run the deploy job.\n", "utf-8"
        )
        KnowledgeBase(state / "kb.sqlite3", semantic=False).index([notes])  # /sources/search, /ask
        conf = load_settings(
            providers=["searxng"],
            provider_options={"searxng": {"url": f"{providers.url}/sx"}},
            state_dir=state,
            timeout=5,
        )
        with uvicorn_thread(create_app(conf, DoorSettings(rate_limit=0))) as url:
            yield url


@pytest.mark.timeout(600)  # every operation in one test: 120 s is for one
@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case: schemathesis.Case, live: str) -> None:
    response = case.call(base_url=live, timeout=30)
    case.validate_response(
        response,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
            negative_data_rejection,
        ],
    )

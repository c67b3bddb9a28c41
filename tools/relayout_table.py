"""The tables of ``tools/relayout.py``: where each module and test goes in the layout by capability.

A module or test no rule names stays where it is and the script prints it: add it here to move it.
"""

from __future__ import annotations

PACKAGE = "sourcewise"

# old path under src/sourcewise -> new path. Exact entries win over FOLDERS and PREFIXES.
MODULES = {
    # web/: URL keys, tiers and rating, the provider chain, ranking, citations, robots.txt rules
    "api.py": "web/api.py",
    "engine.py": "web/engine.py",
    "pages.py": "web/pages.py",
    "core/urls.py": "web/urls.py",
    "core/urlparse.py": "web/urlparse.py",
    "core/weburls.py": "web/weburls.py",
    "core/suffixes.py": "web/suffixes.py",
    "core/tiers.py": "web/tiers.py",
    "core/tierrules.py": "web/tierrules.py",
    "core/rating.py": "web/rating.py",
    "core/projects.py": "web/projects.py",
    "core/rank.py": "web/rank.py",
    "core/cite.py": "web/cite.py",
    "core/robots.py": "web/robots.py",
    # text/: the one analyzer, extraction, chunking, passages, markup and control characters
    "core/analyze.py": "text/analyze.py",
    "core/chunk.py": "text/chunk.py",
    "core/passages.py": "text/passages.py",
    "core/markup.py": "text/markup.py",
    "core/sanitize.py": "text/sanitize.py",
    "core/text.py": "text/words.py",
    "core/extract.py": "text/extract.py",
    # planning/: route, classify, plan, dates, variants, broadening, refinement
    "routing.py": "planning/routing.py",
    "core/route.py": "planning/route.py",
    "core/classify.py": "planning/classify.py",
    "core/plan.py": "planning/planner.py",
    "core/dates.py": "planning/dates.py",
    "core/variants.py": "planning/variants.py",
    "core/widen.py": "planning/widen.py",
    "core/content.py": "planning/content.py",
    "core/negation.py": "planning/negation.py",
    "core/syntax.py": "planning/syntax.py",
    "core/keywords.py": "planning/keywords.py",
    "core/validate.py": "planning/validate.py",
    "core/refine.py": "planning/refine.py",
    "core/feedback.py": "planning/feedback.py",
    # answer/: merge, relevance, authority, ambiguity, the extractive and the model writers
    "answer.py": "answer/model.py",
    "judge.py": "answer/judge.py",
    "core/merge.py": "answer/merge.py",
    "core/relevance.py": "answer/relevance.py",
    "core/ambiguity.py": "answer/ambiguity.py",
    "core/extractive.py": "answer/extractive.py",
    "core/pick.py": "answer/pick.py",
    "core/asked.py": "answer/asked.py",
    "core/doctype.py": "answer/doctype.py",
    "core/fusion.py": "answer/fusion.py",
    # sources/: one package per family
    "sources_api.py": "sources/api.py",
    "core/filters.py": "sources/filters.py",
    "sources/kb.py": "sources/kb/source.py",
    "sources/code.py": "sources/code/source.py",
    "sources/codeindex.py": "sources/code/index.py",
    "sources/codewalk.py": "sources/code/walk.py",
    "core/outline.py": "sources/code/outline.py",
    "core/codefacts.py": "sources/code/facts.py",
    "core/locate.py": "sources/code/locate.py",
    "core/taskread.py": "sources/code/taskread.py",
    "sources/slack.py": "sources/messages/slack.py",
    "sources/_slack_export.py": "sources/messages/slack_export.py",
    "sources/mail.py": "sources/messages/mail.py",
    "sources/_mailbox.py": "sources/messages/mailbox.py",
    "sources/_messages.py": "sources/messages/exports.py",
    "sources/github.py": "sources/tracker/github.py",
    "core/issues.py": "sources/tracker/issues.py",
    "sources/mcp.py": "sources/mcp/source.py",
    "sources/_mcp_schema.py": "sources/mcp/schema.py",
    "core/mcpread.py": "sources/mcp/read.py",
    # doors/: the CLI, MCP, HTTP, the web page, their guards and renderers
    "cli.py": "doors/cli/main.py",
    "mcp_server.py": "doors/mcp.py",
    "mcp_text.py": "doors/mcp_text.py",
    "server.py": "doors/http.py",
    "service.py": "doors/service.py",
    "guards.py": "doors/guards.py",
    "doorsafe.py": "doors/safe.py",
    "doorerrors.py": "doors/errors.py",
    "webpage.py": "doors/page.py",
    "core/render.py": "doors/render.py",
    "core/present.py": "doors/present.py",
}
# Every file under the folder moves (files added later included).
FOLDERS = {"providers/": "web/providers/"}
# ``sources/kbstore.py`` -> ``sources/kb/store.py``; ``cli_web.py`` -> ``doors/cli/web.py``.
PREFIXES = {"sources/kb": "sources/kb/", "cli_": "doors/cli/"}
# Modules that stay where they are (leaves, owners, the loops, net/): not reported as unmapped.
STAY = {
    "__init__.py", "__main__.py", "_lazy.py", "_sync.py", "_version.py", "access.py", "ask.py",
    "config.py", "effort.py", "errors.py", "gather.py", "keys.py", "registry.py", "retrieve.py",
    "retrieve_code.py", "retrieve_loop.py", "session.py", "core/__init__.py", "sources/__init__.py",
    "sources/_files.py", "sources/_fts.py", "sources/base.py", "sources/readers.py", "sources/web.py",
    "sources/workers.py",
}  # fmt: skip
STAY_FOLDERS = ("models/", "net/")
# Entry-point group names look like module names but are the plug-in interface: never renamed.
GROUPS = ("sourcewise.providers", "sourcewise.sources")
# The folder a package is emptied from, removed when nothing else is left in it.
EMPTIED = ("core",)
NEW_PACKAGES = {
    "web": "The web: URL keys, source tiers and rating, the provider chain and its providers, ranking and\n"
    "citations (seeds 000-002).",
    "web/providers": "",  # moved with its own __init__.py
    "text": "Text: the one analyzer (English and Korean), extraction, chunking, passages, markup.",
    "planning": "Reading a question: route, classify, plan, dates, variants, broadening and refinement\n"
    "(seeds 001, 003, 004).",
    "answer": "Answering: cross-source merge, relevance and authority, ambiguity, the extractive and the\n"
    "model writers.",
    "doors": "The doors: the CLI, the MCP server, the HTTP API and web page, their guards and renderers.",
    "doors/cli": "The ``sourcewise`` command: one module per group of commands, ``main`` the entry point.",
    "sources/kb": "The knowledge base: files indexed on tantivy (or PostgreSQL) and searched.",
    "sources/code": "A code repository as a source, and reading a task against it.",
    "sources/messages": "Chat and mail exports as sources (Slack, mbox, Maildir).",
    "sources/tracker": "Issue trackers as sources (GitHub exports).",
    "sources/mcp": "Any MCP server's search tool as a source.",
}
# tests/test_x.py -> tests/AREA/test_x.py, mirroring src/. Tests that import another test file
# share its folder (pytest puts a test's own folder on sys.path).
AREAS = {
    "web": "cite ddgs gemini gemini_cli mcp_provider projects prose providers rank result_urls robots safety "
    "tiers tricky_tiers urls fast_paths engine budget",
    "net": "fetch fetch_robots guard deadline redis offline",
    "text": "analyze extract",
    "planning": "plan plan_components route route_signals conditional call_fast_paths validate",
    "answer": "merge_relevance extractive pick fusion doctype hostile_answer",
    "sources": "kb kb_mode kbembed kbpg kbscale kbvector source_code source_exports_stored source_github "
    "source_mail source_messages source_slack sources_base mcp_sources mcp_federation hostile_exports "
    "hostile_index hostile_kbfail hostile_unreadable readers locate",
    "doors": "cli cli_ask cli_config cli_gemini mcp server server_schema webpage doors_ask doors_effort "
    "doors_grounded doors_props doors_sources hostile_doors hostile_hang hostile_redis access workers team "
    "render_layouts behaviour terminal",
}
TESTS = {f"test_{name}.py": area for area, names in AREAS.items() for name in names.split()}
# Tests of the top level (the loops, the public surface, settings, the registry, the whole package).
TESTS_STAY = {
    f"test_{name}.py"
    for name in (
        "ask ask_plans ask_properties bad_input config docs_examples layers pgserver plugins properties "
        "public_api regex_time registry retrieve retrieve_input session_owner settings_cache startup"
    ).split()
}
TEXT_GLOBS = ("src/**/*.py", "tests/**/*.py", "benchmarks/**/*.py", "benchmarks/*.md", "docs/**/*.md")
TEXT_FILES = ("README.md", "pyproject.toml", ".ci/run")
SKIP_PARTS = {"data", "fixtures", "__pycache__"}  # recorded inputs are never rewritten

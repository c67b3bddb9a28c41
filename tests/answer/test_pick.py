"""Answer selection and the gate: each example of issue 22, on texts written here in the shape of
the real documentation they came from (httpx, the Rust Book, FastAPI, Korean notes)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sourcewise.answer.asked import covered, read
from sourcewise.answer.candidates import in_name
from sourcewise.answer.extractive import units
from sourcewise.answer.pick import pick
from sourcewise.config import Settings
from sourcewise.loops.ask import aask
from sourcewise.models import Hit, RankedHit
from sourcewise.session import Session
from sourcewise.text.analyze import analyze


def _ranked(*docs: tuple[str, str]) -> list[RankedHit]:
    return [
        RankedHit(
            hit=Hit(title=title, location=f"memory://{i}", text=text, source="kb", kind="knowledge_base",
                    authority="wiki", score=1.0),
            relevance=0.9 - i / 20,
            factors=(),
        )
        for i, (title, text) in enumerate(docs)
    ]  # fmt: skip


def _answer(question: str, *docs: tuple[str, str]) -> str:
    return " ".join(text for text, _ in pick(question, _ranked(*docs)))


def test_a_default_question_gets_the_value_after_the_definition() -> None:
    doc = (
        "Pool settings",
        "The `keepalive_expiry` setting is the time an idle connection is kept open before it is "
        "closed and removed from the pool. The default is 5 seconds.\n\nSee also the limits page.",
    )
    other = ("Timeouts", "A timeout can be set per request or on a client for all of its requests.")
    answer = _answer("What is the default keepalive expiry?", other, doc)
    assert "The default is 5 seconds." in answer
    assert "keepalive_expiry" in answer, "the sentence it completes comes with it"


def test_log_meets_logging() -> None:
    logging_page = (
        "Logging",
        "If you need to inspect what httpx does, you can use Python's standard logging to output "
        "information about each request.\n\n```python\nimport logging\nlogging.basicConfig(level=logging.DEBUG)\n```",
    )
    answer = pick("How do I log the requests httpx makes?", _ranked(logging_page))
    assert answer, "log meets logging"
    assert any(text.startswith("```python\nimport logging") for text, _ in answer), "the command is a block"


def test_korean_verb_forms_meet() -> None:
    note = ("인물", "철수는 2015년에 영희와 결혼하였으나 3년 뒤에 헤어졌다.")
    assert (
        _answer("철수는 언제 결혼했는가?", note) == "철수는 2015년에 영희와 결혼하였으나 3년 뒤에 헤어졌다."
    )


def test_generic_words_alone_do_not_answer_an_operator_question() -> None:
    overloading = (
        "Operators",
        "Rust does not let you create your own operators, but you can overload the operators listed "
        "here by implementing their traits. The default value of an operator's output type is Self.",
    )
    question_mark = (
        "Recoverable errors",
        "The `?` operator placed after a `Result` value returns the error from the whole function "
        "early, so the error propagates to the caller.",
    )
    assert pick("What does the ? operator do?", _ranked(overloading)) == []
    answer = pick("What does the ? operator do?", _ranked(overloading, question_mark))
    assert [h for _, h in answer] == [1]
    assert "propagates" in answer[0][0]


def test_a_front_matter_example_does_not_answer_a_release_question() -> None:
    front = (
        "Metadata",
        "---\ntitle: FastAPI\nsummary: FastAPI framework, high performance\n---\n\nFastAPI is a modern web framework.",
    )
    assert pick("latest FastAPI release", _ranked(front)) == []
    notes = ("Release Notes", "## 0.115.0\n\nThe latest FastAPI release adds query parameter models.")
    assert (
        _answer("latest FastAPI release", front, notes)
        == "The latest FastAPI release adds query parameter models."
    )


def test_the_fact_in_a_table_row_or_definition_line() -> None:
    table = (
        "Options",
        "| option | default |\n|---|---|\n| `max_connections` | 100 |\n| `max_keepalive` | 20 |",
    )
    assert "100" in _answer("What is the default max_connections?", table)
    man = (
        "grep",
        "OPTIONS\n       -i, --ignore-case\n              Ignore case distinctions in patterns and input data.\n",
    )
    assert "Ignore case distinctions" in _answer("How do I ignore case in grep?", man)


def test_question_types_and_specific_words() -> None:
    asked = read("What is the default value of the operator?")
    assert asked.kind == "default"
    assert [sorted(asked.groups[i]) for i in asked.specific] == [["default"], ["valu"], ["oper"]]
    asked = read("What is the default timeout?")
    assert [sorted(asked.groups[i]) for i in asked.specific] == [["timeout"]]
    assert read("How many connections does a pool keep?").kind == "number"
    assert read("When was 2.0 released?").kind == "when"
    assert read("휴가 신청은 어떻게 해야 돼?").kind == "how"
    assert read("What does the ? operator do?").symbols == ("?",)


@given(
    st.text(alphabet=st.sampled_from(list("ab cd?.한국 ")), max_size=40),
    st.lists(st.text(alphabet=st.sampled_from(list("ab cd.한국 \n`|#-")), max_size=120), max_size=4),
)
def test_every_picked_unit_is_from_its_hit_and_holds_a_specific_term(question: str, texts: list[str]) -> None:
    asked = read(question)
    hits = _ranked(*((f"t{i}", t) for i, t in enumerate(texts)))
    picked = pick(question, hits)
    assert len(picked) <= 3
    for text, h in picked:
        assert text in [u.text for u in units(texts[h], wrapped=True)]
    if picked and asked.specific:
        shown = set().union(*(set(analyze(t, stem=True)) for t, _ in picked))
        named = set().union(*(in_name(asked, t) for t, _ in picked))  # "-maxdepth" says "depth"
        assert (covered(shown, asked.groups) | named) & set(asked.specific)


async def test_ask_answers_from_the_logging_page_of_an_indexed_folder(tmp_path: Path) -> None:
    from sourcewise.sources.kb.source import KnowledgeBase

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "logging.md").write_text(
        "# Logging\n\nTo see the requests httpx makes, turn on Python's standard logging.\n\n"
        "```python\nimport logging\nlogging.basicConfig(level=logging.DEBUG)\n```\n",
        "utf-8",
    )
    (docs / "timeouts.md").write_text("# Timeouts\n\nThe default timeout is five seconds.\n", "utf-8")
    kb = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    kb.index([docs])
    kb.close()
    settings = Settings(state_dir=tmp_path, sources={"kb": {"type": "kb", "semantic": False}})
    async with Session(settings) as session:
        answer = await aask("How do I log the requests httpx makes?", sources=["kb"], session=session)
        assert answer.answered, answer.text
        assert answer.sources[0].hit.location.split("#")[0].endswith("logging.md")
        assert "logging.basicConfig" in answer.text
        refused = await aask("What does the ? operator do?", sources=["kb"], session=session)
        assert not refused.answered, refused.text
        assert not refused.citations


def _relevance(path: str, title: str, text: str, question: str, rank: int) -> float:
    """Seed 003's relevance of a kb hit at ``path`` for ``question``, at place ``rank`` of its source."""
    from datetime import date

    from sourcewise.answer.relevance import score_hit

    hit = Hit(title=title, location=path, path=path, text=text, source="kb", kind="knowledge_base",
              authority="wiki", score=1.0)  # fmt: skip
    return score_hit(hit, terms=analyze(question), kind="fact", today=date(2026, 1, 1), rank=rank)[0]


def test_a_changelog_ranks_below_the_page_it_summarises_unless_changes_are_asked() -> None:
    text = "Timeouts default to five seconds for every request a client makes."
    page = ("docs/timeouts.md", "Timeouts", text)
    log = ("CHANGELOG.md", "Changelog", text)
    assert _relevance(*page, "default timeout", 1) > _relevance(*log, "default timeout", 0)
    changed = "what changed in the default timeout"
    assert _relevance(*log, changed, 0) > _relevance(*page, changed, 1)


def test_a_sentence_that_goes_on_with_however_comes_along() -> None:
    page = (
        "Transports",
        "It is not in the scope of HTTPX to trigger ASGI lifespan events of your app. However it is "
        "suggested to use `LifespanManager` from asgi-lifespan in pair with `AsyncClient`.",
    )
    answer = _answer("How do I trigger ASGI lifespan events?", page)
    assert "LifespanManager" in answer


def test_an_announced_example_comes_with_its_sentence() -> None:
    page = (
        "Proxies",
        "Proxy credentials can be passed as the `userinfo` section of the proxy URL. For example:\n\n"
        '```python\nwith httpx.Client(proxy="http://username:password@localhost:8030") as client:\n    ...\n```',
    )
    answer = _answer("How do I pass proxy credentials?", page)
    assert "username:password" in answer


def test_a_short_heading_names_its_section_and_a_name_is_not_met_by_its_part() -> None:
    env = (
        "Environment Variables",
        "## Proxies\n\nThe environment variables documented below are used as a convention by various "
        "HTTP tooling, including:\n\n* cURL\n* requests\n\n### `NO_PROXY`\n\nValid values: a comma-separated "
        "list of hostnames/urls\n\n`NO_PROXY` disables the proxy for specific urls\n\n### `SSL_CERT_FILE`\n\n"
        "Valid values: a filename\n\nIf this environment variable is set then HTTPX will load CA certificate "
        "from the specified file instead of the default location.",
    )
    assert "disables the proxy" in _answer("What does the NO_PROXY environment variable do?", env)
    assert "CA certificate" in _answer("What does SSL_CERT_FILE do?", env)


def test_a_man_page_subsection_is_a_heading() -> None:
    text = (
        "   Context Line Control\n       -A NUM, --after-context=NUM\n"
        "              Print NUM lines of trailing context after matching lines.\n"
    )
    found = units(text, wrapped=True)
    assert (found[0].text, found[0].kind) == ("Context Line Control", "heading")
    assert found[1].text.startswith("-A NUM, --after-context=NUM Print")


def test_a_name_met_only_inside_a_longer_identifier_counts_less() -> None:
    # The Rust Book: "Mutex" in `MutexGuard`, "unwrap" in `unwrap_or_else`, are other names.
    guard = (
        "Shared state",
        "The call to `lock` returns a type called `MutexGuard`, wrapped in a `LockResult`.",
    )
    mutex = (
        "Mutexes",
        "A mutex allows only one thread to access some data at any given time, by mutual exclusion.",
    )
    assert "mutual exclusion" in _answer("What is a Mutex?", guard, mutex)
    closure = ("Closures", "For now, `unwrap_or_else` will pass the inner value of the `Err` to our closure.")
    result = ("Result", "If the `Result` is the `Err` variant, `unwrap` will call the `panic!` macro for us.")
    assert "panic!" in _answer("What does unwrap do on an Err value?", closure, result)


def test_the_option_whose_name_the_question_says_wins_a_tie() -> None:
    # sort(1) and tar(1), as `man` renders them: every entry says "sort" and "numeric" alike.
    sort = (
        "sort",
        "OPTIONS\n"
        "       -g, --general-numeric-sort\n              compare according to general numerical value\n\n"
        "       -h, --human-numeric-sort\n              compare human readable numbers (e.g., 2K 1G)\n\n"
        "       -n, --numeric-sort\n              compare according to string numerical value\n",
    )
    assert _answer("How do I sort numerically?", sort).startswith("-n, --numeric-sort")
    tar = (
        "tar",
        "OPTIONS\n"
        "       --one-file-system\n              Stay in local file system when creating archive.\n\n"
        "       -c, --create\n              Create a new archive.\n",
    )
    assert _answer("How do I create a tar archive?", tar).startswith("-c, --create")


def test_which_option_asks_for_the_option_entry() -> None:
    sed = (
        "sed",
        "The -E option switches to using extended regular expressions instead; it has been supported "
        "for years by GNU sed.\n\n"
        "       -E, -r, --regexp-extended\n              use extended regular expressions in the script\n",
    )
    assert "--regexp-extended" in _answer("Which sed option enables extended regular expressions?", sed)
    assert read("개발용으로 애플리케이션을 실행하는 명령어는?").kind == "how"


def test_a_when_question_about_an_event_is_answered_by_what_it_follows() -> None:
    tasks = (
        "백그라운드 작업",
        "백그라운드에서 실행될 작업 함수(`write_notification`).\n\n"
        "응답을 반환한 후에 실행할 백그라운드 작업을 정의할 수 있습니다.",
    )
    assert "후에" in _answer("백그라운드 작업은 언제 실행되나요?", tasks)


def test_a_heading_naming_several_things_is_about_none_of_them() -> None:
    compare = (
        "Shared state",
        "### Comparing `RefCell<T>`/`Rc<T>` and `Mutex<T>`/`Arc<T>`\n\n"
        "You might have noticed that `counter` is immutable; this means `Mutex<T>` provides interior mutability.",
    )
    rc = (
        "Rc",
        "The `Rc<T>` type enables multiple ownership: it keeps track of the number of references to a value.",
    )
    assert "multiple ownership" in _answer("What is Rc<T> used for?", compare, rc)


def test_a_definition_comes_with_its_next_sentence() -> None:
    manual = (
        "bzip2 manual",
        "bzip2recover is a simple program whose purpose is to search for blocks in .bz2 files. "
        "You can then use bzip2 -t to test the integrity of the resulting files.\n\nOther text here.",
    )
    answer = _answer("What does bzip2recover do?", manual)
    assert "search for blocks" in answer
    assert "bzip2 -t" in answer


def test_a_partial_page_ranks_below_the_page_it_quotes() -> None:
    text = "Use the TestClient to call your app in tests, as a browser would."
    page = ("docs/testing.md", "Testing", text)
    generated = ("docs/_llm-test.md", "LLM test file", text)
    module = ("pkg/__init__.md", "Testing", text)  # "__init__" is a module's name, no partial
    assert _relevance(*page, "test client", 1) > _relevance(*generated, "test client", 0)
    assert _relevance(*module, "test client", 0) > _relevance(*page, "test client", 1)


def test_a_korean_why_not_question_is_not_refused_for_its_adverb_and_negation() -> None:
    security = (
        "보안 소개",
        "OAuth 1도 있었는데, 이는 OAuth2와 매우 다르고 통신을 암호화하는 방법까지 직접 명세에 포함했기 때문에 "
        "더 복잡했습니다.\n\n그래서 요즘은 널리 쓰이지 않습니다.",
    )
    assert "복잡" in _answer("OAuth 1은 왜 잘 쓰이지 않나요?", security)


def test_a_quantifier_is_not_what_a_question_asks_about() -> None:
    # FastAPI's Korean CORS page: "모든" (all) is said by the question and by a sentence that does
    # not answer it; the wildcard the question asks about is in the sentence that does.
    cors = (
        "CORS (교차-출처 리소스 공유): 와일드카드",
        '또한 목록을 `"*"`("와일드카드")로 선언해 모두 허용된다고 말할 수도 있습니다. '
        "하지만 그러면 자격 증명이 포함된 모든 것을 제외하고 특정 유형의 통신만 허용하게 됩니다. "
        "따라서 모든 것이 올바르게 동작하게 하려면, 허용된 출처를 명시적으로 지정하는 것이 더 좋습니다.",
    )
    asked = read("와일드카드로 모든 출처를 허용할 수 있나요?")
    quantifier = next(i for i, g in enumerate(asked.groups) if "모든" in g)
    assert quantifier not in asked.specific
    assert '"*"' in _answer("와일드카드로 모든 출처를 허용할 수 있나요?", cors)
    each = read("How do I print lines after each match?")
    assert [g for i, g in enumerate(each.groups) if i in each.specific] == [
        {"print"},
        {"line"},
        {"after"},
        {"match"},
    ]


def test_a_how_question_is_answered_by_what_you_can_do() -> None:
    # FastAPI's Korean path-parameters page: the way is stated as "~할 수 있습니다" (you can ...).
    page = (
        "타입이 있는 경로 매개변수",
        "파이썬 표준 타입 어노테이션을 사용하여 함수에 있는 경로 매개변수의 타입을 선언할 수 있습니다:",
    )
    other = (
        "경로 매개변수와 숫자 검증",
        "`Query`를 사용하여 쿼리 매개변수에 더 많은 검증과 메타데이터를 선언하는 방법과 동일하게 `Path`를 "
        "사용하여 경로 매개변수에 검증과 메타데이터를 같은 타입으로 선언합니다.",
    )
    answer = pick("경로 매개변수의 타입은 어떻게 선언하나요?", _ranked(page, other))
    assert "타입 어노테이션" in answer[0][0]


def test_the_command_in_the_chunk_after_the_hit_completes_a_how_answer() -> None:
    """The Rust Book's "Running Tests in Parallel or Consecutively", cut by the kb at a blank line:
    the sentence that names the flag ends one chunk, the command opens the next (``meta["after"]``,
    ``KnowledgeBaseSource.read``); that chunk completes the answer but never answers alone."""
    said = (
        "If you don't want to run the tests in parallel, you can send the `--test-threads` flag and "
        "the number of threads you want to use to the test binary. Take a look at the following example:"
    )
    after = "```console\n$ cargo test -- --test-threads=1\n```\n\nWe set the number of test threads to `1`."
    [ranked] = _ranked(("Running Tests in Parallel or Consecutively", said))
    ranked = ranked.model_copy(update={"hit": ranked.hit.model_copy(update={"meta": {"after": after}})})
    answer = pick("How do I run tests one at a time, not in parallel?", [ranked])
    assert "$ cargo test -- --test-threads=1" in " ".join(text for text, _ in answer)
    assert answer[0][0].startswith("If you don't want"), "the hit's own sentence answers first"
    assert {h for _, h in answer} == {0}, "cited as the hit"
    alone = pick("What does the number of test threads set?", [ranked])
    assert all(not text.startswith("We set") for text, _ in alone), "the next chunk never answers alone"


def test_an_option_named_by_words_run_together_answers() -> None:
    """find(1): ``-maxdepth`` says "depth" although no word of the entry is "depth"; it answers over
    ``-depth``, which says "depth" but not "descend"."""
    entries = (
        "find",
        "-depth Process each directory's contents before the directory itself.\n\n"
        "-maxdepth levels\n    Descend at most levels (a non-negative integer) levels of directories below "
        "the starting-points.\n\n-mount Don't descend directories on other filesystems.",
    )
    answer = _answer("How do I limit the directory depth that find descends?", entries)
    assert answer.startswith("-maxdepth levels Descend at most levels"), answer


def test_a_close_second_joins_the_answer_even_when_it_names_nothing_new() -> None:
    """The Rust Book on ``Rc<T>``: two sentences name it and score alike; the one ranked second holds
    what it is for. A close second costs a sentence; leaving it out loses the answer."""
    counting = ("`Rc<T>`", "The `Rc<T>` type keeps track of the number of references to a value.")
    owners = ("Interior mutability", "Recall that `Rc<T>` lets you have multiple owners of some data.")
    far = (
        "Threads",
        "Spawned threads can share nothing unless it is wrapped in a type that is safe to send.",
    )
    answer = _answer("What is Rc<T> used for?", counting, owners, far)
    assert "multiple owners" in answer
    assert "keeps track" in answer
    assert "Spawned threads" not in answer, "a unit that does not say what is asked stays out"


def test_a_chain_of_this_sentences_brings_what_it_refers_to() -> None:
    """httpx's "Why use a Client?": "This can bring ..." leans on "This means ...", which leans on the
    sentence that names connection pooling, which the answer must carry."""
    page = (
        "Why use a Client?",
        "Each request made with the top-level API opens a new connection. "
        "On the other hand, a `Client` instance uses HTTP connection pooling. "
        "This means that requests to the same host reuse the underlying TCP connection. "
        "This can bring significant performance improvements compared to using the top-level API.",
    )
    answer = _answer("Why use a Client instead of the top-level API?", page)
    assert "connection pooling" in answer, answer
    assert answer.index("connection pooling") < answer.index("This means"), "in the page's order"


def test_only_a_real_option_says_the_questions_words() -> None:
    # The CI profile found "-#국" read as an option whose name says "국", one bigram of the
    # question's "국국d국cb": a unit was picked for it. An option starts "-" or "--" and a letter
    # or digit, and its name says a group as ``covered`` counts one.
    odd = read("국국d국cb")
    assert in_name(odd, "-#국 `") == set()
    asked = read("How do I limit the search depth?")
    depth = next(i for i, g in enumerate(asked.groups) if "depth" in g)
    assert depth in in_name(asked, "-maxdepth levels  Descend at most levels of directories.")
    assert in_name(asked, "- depth is a plain list item") == set()


def test_a_question_for_the_members_of_a_set_gets_the_list_its_sentence_announces() -> None:
    # "What X are there?" asks for a list: the sentence that announces it and its items, each
    # item read past its own second sentence, rather than the sentence naming X most often.
    doc = (
        "Handlers",
        "A logger hands its records to handlers, and a logger may have several handlers.\n\n"
        "There are currently two handlers:\n\n"
        "* `stream` - Writes each record to a stream. Passed the `stream` instance.\n"
        "* `file` - Writes each record to a file on disk. Passed the `filename`.\n\n"
        "Handlers must always be set as a list, and you may register multiple handlers for each logger.",
    )
    assert read("What handlers are there?").kind == "list"
    assert read("What can unsafe Rust do?").kind == "list"
    assert read("What is a handler?").kind == "what"
    answer = _answer("What handlers are there?", doc)
    assert answer.startswith("There are currently two handlers:")
    assert "`stream` - Writes" in answer
    assert "`file` - Writes" in answer


def test_the_same_paragraph_in_two_files_is_said_once() -> None:
    """A folder indexed twice (a second clone of the same docs): both copies rank near the top, and
    the answer said the same command block twice, cited [1] and [2]."""
    page = (
        "The knowledge base",
        "Index a folder of notes with one command:\n\n```bash\nsourcewise index ~/notes\n```\n\n"
        "Run it again after the notes change: unchanged files are skipped.",
    )
    chosen = pick("How do I index my notes?", _ranked(page, page))
    texts = [text for text, _ in chosen]
    assert any("sourcewise index ~/notes" in text for text in texts)
    assert len(texts) == len(set(texts)), texts
    assert {hit for _, hit in chosen} == {0}, "cited where it ranked first"


def test_an_options_entry_answers_for_the_program_its_chunk_is_about() -> None:
    # bzip2's manual (a PDF Debian ships): the entry names the option, not the program; the
    # sentences naming bzip2 around it say nothing of -s.
    manual = (
        "How to use it",
        "bzip2 compresses files using the Burrows-Wheeler block sorting text compression algorithm.\n\n"
        "-k --keep\nKeep (don't delete) input files during compression or decompression.\n\n"
        "-s --small\nReduce memory usage, for compression, decompression and testing.",
    )
    answer = _answer("What does bzip2 -s do?", manual)
    assert "Reduce memory usage" in answer
    other = (
        "How to use it",
        "tar saves many files together into a single archive.\n\n"
        "-s --same-order\nSort names to extract to match archive.",
    )
    assert _answer("What does bzip2 -s do?", other) == "", "the chunk is not about bzip2"


def test_a_block_that_says_the_words_only_inside_names_fits_a_how_question_less() -> None:
    # httpx's docs: "connect" only inside ``ConnectError`` in the SSL page's error output made it
    # the "command" for retrying connections, and the transports page that says how was left out.
    ssl = (
        "SSL",
        "By default httpx will verify HTTPS connections.\n\n"
        '```pycon\n>>> httpx.get("https://expired.badssl.com/")\n'
        "httpx.ConnectError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed\n```",
    )
    pools = ("Pools", "A pool keeps idle sockets open between requests.")
    transports = ("Transports", "Connection retries are also available via this interface.")
    picked = pick("How do I retry failed connections?", _ranked(ssl, pools, transports))
    assert any("retries" in text for text, _ in picked), picked


def test_a_term_nothing_read_holds_weighs_twice_in_the_gate() -> None:
    """The Rust Book says Rust works "without needing a garbage collector"; asked how to write a
    garbage collector *plugin*, it must not answer with that: "plugin" is in nothing read, so the
    question is about what the documents do not say. (Found with hybrid search, whose semantic leg
    ranks that sentence first: 3 of the question's 5 specific terms passed the 60% rule.)"""
    question = "How do I write a garbage collector plugin for Rust?"
    ownership = (
        "Understanding Ownership",
        "Ownership is Rust's most unique feature. It enables Rust to make memory safety guarantees "
        "without needing a garbage collector, so it's important to understand how ownership works.",
    )
    testing = ("Writing Tests", "Tests are Rust functions that verify that the non-test code works.")
    unsafe = ("Unsafe Rust", "To write unsafe code, use the unsafe keyword and start a new block.")
    assert pick(question, _ranked(ownership, testing, unsafe)) == []
    # What the rest of the question asks, all of it said, still answers without the missing term.
    allocator = (
        "Allocators",
        "To write a garbage collector for Rust, implement the GlobalAlloc trait for your type.",
    )
    assert "GlobalAlloc" in _answer(question, allocator, testing, unsafe)

"""Change coupling in the refine step: files that changed together with the best candidates in the
repository's real git history (written by the test) come in with the reason; no git, not a
repository and a slow git degrade with a note; the benchmark's snapshots never show the task's own
commit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as hyp

from sourcewise import retrieve
from sourcewise.config import Settings, load_settings
from sourcewise.sources.cochange import History, neighbours, parse_log, read_history
from sourcewise.sources.code import CodeOptions, CodeSource

from servers import LocalServer, Reply

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_retrieve import snapshot

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0, reason="needs git"
)

TASK = "Fix the rounding of the invoice total"
SEED = "src/billing/invoice_total.py"
COUPLED = "src/billing/posting.py"  # none of the task's words: only history ties it to the seed
FILES = {
    SEED: "def invoice_total(lines):\n    total = sum(lines)\n    return round(total, 2)  # rounding\n",
    COUPLED: "def post_entries(book, entries):\n    for entry in entries:\n        book.append(entry)\n",
    "src/shop/basket.py": "def basket_items(basket):\n    return list(basket)\n",
    "src/shop/coupon.py": "def apply_coupon(price, coupon):\n    return price - coupon\n",
    "src/shop/shipment.py": "def ship(parcel):\n    return parcel.address\n",
}


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    }  # fmt: skip
    cmd = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout


def commit(repo: Path, changes: dict[str, str], message: str) -> str:
    for path, text in changes.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The seed and the coupled file changed together in all 4 of the seed's commits; fillers once."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    texts = dict(FILES)
    commit(root, texts, "first")
    for i in range(3):
        texts = {**texts, SEED: texts[SEED] + f"# v{i}\n", COUPLED: texts[COUPLED] + f"# v{i}\n"}
        commit(root, {SEED: texts[SEED], COUPLED: texts[COUPLED]}, f"step {i}")
    commit(root, {"src/shop/basket.py": texts["src/shop/basket.py"] + "# more\n"}, "basket")
    return root


@pytest.fixture
def st(tmp_path: Path) -> Settings:
    return load_settings(state_dir=tmp_path / "state", source_timeout=10.0)


def paths(found: object) -> list[str | None]:
    return [c.hit.path for c in getattr(found, "considered", ())]


def test_one_pass_misses_the_coupled_file_the_loop_brings_it_in_and_says_why(
    repo: Path, st: Settings
) -> None:
    one = retrieve(TASK, sources=[f"code:{repo}"], max_cycles=1, settings=st)
    assert paths(one)[0] == SEED
    assert COUPLED not in paths(one)
    assert one.cycles[0].history == ""  # one pass reads no history

    loop = retrieve(TASK, sources=[f"code:{repo}"], max_cycles=3, settings=st)
    found = {c.hit.path: c for c in loop.considered}
    assert COUPLED in found
    assert paths(loop)[0] == SEED  # the first pass's order is kept above
    assert found[COUPLED].cycle == 2
    assert "changed together with src/billing/invoice_total.py in 4 of its 4 commits" in found[COUPLED].reason
    assert 0.5 <= found[COUPLED].relevance < 0.7  # "related": history is not proof
    assert loop.cycles[0].history == "co-change: 5 commits read"
    assert all(c.history == "" for c in loop.cycles[1:])  # read once, said once
    assert any(COUPLED in line and "4 of its 4 commits" in line for line in loop.cycles[1].cochanged)


def test_co_change_brings_in_only_files_the_code_source_indexes(tmp_path: Path, st: Settings) -> None:
    """History names every file ever committed; the source leaves some out on purpose: a secret now
    in .gitignore, its own exclude glob, a binary file. None of them comes in, and no text of theirs."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    texts = dict(FILES)
    commit(root, texts, "first")
    secret, private, blob = "src/billing/.env", "src/billing/ledger_private.py", "src/billing/rates.bin"
    for i in range(3):
        texts = {**texts, SEED: texts[SEED] + f"# v{i}\n", COUPLED: texts[COUPLED] + f"# v{i}\n"}
        commit(root, {
            SEED: texts[SEED], COUPLED: texts[COUPLED], secret: f"STRIPE_SECRET_KEY=sk_live_{i}abcdef\n",
            private: f"def ledger():\n    return {i}\n", blob: f"\0\1rates {i}\n",
        }, f"step {i}")  # fmt: skip
    commit(root, {".gitignore": ".env\n"}, "ignore env")  # now ignored; the file is still on disk
    source = CodeSource("repo", CodeOptions(path=root, exclude=("*_private.py",)), st)
    loop = retrieve(TASK, sources=[source], max_cycles=3, settings=st)
    found = {c.hit.path: c for c in loop.considered}
    assert COUPLED in found  # co-change still works
    assert "4 of its 4 commits" in found[COUPLED].reason
    assert not {secret, private, blob} & set(found)
    assert all("sk_live" not in (c.hit.text or "") + c.hit.snippet for c in loop.considered)
    assert not any(p in line for c in loop.cycles for line in c.cochanged for p in (secret, private, blob))


def test_with_a_model_scoring_co_change_is_said_once(repo: Path, tmp_path: Path, server: LocalServer) -> None:
    content = json.dumps([{"n": 1, "relevance": 0.9, "reason": "the total itself"}])
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
    server.route("/v1/chat/completions", Reply(body=json.dumps(body), content_type="application/json"))
    st = load_settings(state_dir=tmp_path / "s", model_url=f"{server.url}/v1", model_name="t")
    loop = retrieve(TASK, sources=[f"code:{repo}"], max_cycles=3, settings=st)
    found = {c.hit.path: c for c in loop.considered}
    assert found[SEED].scorer == "model"
    assert found[COUPLED].reason.count("changed together with") == 1
    assert 0.5 <= found[COUPLED].relevance < 0.7


def test_the_same_history_and_task_give_the_same_cycles(repo: Path, tmp_path: Path) -> None:
    runs = [
        retrieve(TASK, sources=[f"code:{repo}"], settings=load_settings(state_dir=tmp_path / f"s{i}"))
        for i in range(2)
    ]
    assert runs[0].model_dump(exclude={"cycles": {"__all__": {"reports"}}}) == runs[1].model_dump(
        exclude={"cycles": {"__all__": {"reports"}}}
    )


def test_a_folder_that_is_not_a_repository_is_searched_with_a_note(tmp_path: Path, st: Settings) -> None:
    root = tmp_path / "plain"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    loop = retrieve(TASK, sources=[f"code:{root}"], max_cycles=3, settings=st)
    assert paths(loop)[0] == SEED
    assert COUPLED not in paths(loop)
    assert loop.cycles[0].history == "co-change unavailable: not a git repository"


def test_no_git_on_the_path_degrades_with_a_note(
    repo: Path, tmp_path: Path, st: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "nobin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert read_history(repo) == History(note="co-change unavailable: git is not installed")
    loop = retrieve(TASK, sources=[f"code:{repo}"], max_cycles=3, settings=st)
    assert loop.cycles[0].history == "co-change unavailable: git is not installed"
    assert COUPLED not in paths(loop)


def test_a_slow_git_is_cut_off_with_a_note(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = tmp_path / "slowbin"
    slow.mkdir()
    (slow / "git").write_text("#!/bin/sh\nsleep 5\n")
    (slow / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}{os.pathsep}{os.environ['PATH']}")
    assert read_history(repo, timeout=0.3) == History(note="co-change unavailable: git log took over 0.3s")


def test_history_is_read_relative_to_a_subfolder_and_big_commits_are_left_out(repo: Path) -> None:
    commit(repo, {f"src/billing/bulk_{i}.py": "x = 1\n" for i in range(16)}, "bulk")
    history = read_history(repo / "src" / "billing")
    assert "1 touching more than 15 files left out" in history.note
    assert frozenset({"invoice_total.py", "posting.py"}) in history.commits
    assert all(not p.startswith("src/") for files in history.commits for p in files)


def test_neighbours_follow_support_and_confidence() -> None:
    history = History(
        commits=(
            frozenset({"a", "b"}), frozenset({"a", "b", "c"}), frozenset({"a", "c"}), frozenset({"a"}),
            frozenset({"d", "e"}), frozenset({"d", "e"}),
        )
    )  # fmt: skip
    found = neighbours(history, ["a", "d"], min_support=2, min_confidence=0.5)
    assert [(n.path, n.seed, n.together, n.seed_commits) for n in found] == [
        ("e", "d", 2, 2), ("b", "a", 2, 4), ("c", "a", 2, 4),
    ]  # fmt: skip
    assert found[0].reason == "changed together with d in 2 of its 2 commits"
    assert neighbours(history, ["a"], min_confidence=0.6) == []
    assert neighbours(history, ["a", "b"], min_support=1)[0].path == "c"  # a seed is never its own neighbour


@given(hyp.text(), hyp.lists(hyp.text(max_size=5), max_size=5))
def test_any_log_text_parses_and_neighbours_keep_their_rules(out: str, seeds: list[str]) -> None:
    commits, skipped = parse_log(out, max_files=3)
    assert skipped >= 0
    assert all(0 < len(files) <= 3 and "" not in files for files in commits)
    found = neighbours(History(commits), seeds)
    assert all(n.together >= 2 and n.confidence >= 0.5 and n.path not in seeds for n in found)
    assert found == sorted(found, key=lambda n: (-n.confidence, -n.together, n.path))


def test_a_benchmark_snapshot_never_shows_the_task_commit(repo: Path, tmp_path: Path) -> None:
    shas = git(repo, "log", "--format=%H").split()  # newest first: basket, step 2, step 1, step 0, first
    task = shas[1]
    snap = snapshot(repo, task, tmp_path / "snap")
    assert (snap / SEED).read_text() == git(repo, "show", f"{task}:{SEED}")  # the commit's tree
    visible = git(snap, "log", "--all", "--format=%H").split()
    assert visible == shas[2:]  # only the parent and its ancestors
    assert task not in git(snap, "log", "--all", "--reflog", "--format=%H")
    assert git(snap, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/snapshot"]
    assert len(read_history(snap).commits) == len(shas) - 2
    root = snapshot(repo, shas[-1], tmp_path / "root")  # a root commit: no history at all
    assert read_history(root).note == "co-change unavailable: the repository has no commits yet"


def _repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir()
    git(path, "init", "-q")
    commit(path, files, "one")
    commit(path, {name: text + "# two\n" for name, text in files.items()}, "two")
    return path


def _marker_program(tmp_path: Path) -> tuple[Path, Path]:
    """A program that leaves a marker file when anything runs it."""
    marker = tmp_path / "RAN"
    program = tmp_path / "program.sh"
    program.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    program.chmod(0o755)
    return program, marker


def test_the_callers_git_variables_do_not_point_git_at_another_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = _repo(tmp_path / "mine", {"a1.py": "1\n", "a2.py": "2\n"})
    other = _repo(tmp_path / "other", {"b1.py": "1\n", "b2.py": "2\n"})
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))  # as in a git hook run in the other repository
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'log.showsignature'='true'")
    history = read_history(mine)
    assert history.commits == (frozenset({"a1.py", "a2.py"}),) * 2
    assert history.note == "co-change: 2 commits read"


def test_a_repository_config_cannot_make_git_run_a_signature_program(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", {"x.py": "1\n", "y.py": "2\n"})
    raw = git(root, "cat-file", "commit", "HEAD")
    head, body = raw.split("\n\n", 1)
    signed = f"{head}\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----\n\n{body}"
    made = subprocess.run(
        ["git", "-C", str(root), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=signed, capture_output=True, text=True, check=True,
    )  # fmt: skip
    git(root, "update-ref", "HEAD", made.stdout.strip())
    program, marker = _marker_program(tmp_path)
    for key in ("gpg.program", "gpg.openpgp.program", "gpg.ssh.program", "gpg.x509.program"):
        git(root, "config", key, str(program))
    git(root, "config", "log.showSignature", "true")
    history = read_history(root)
    assert history.note == "co-change: 2 commits read"
    assert not marker.exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("key", ["diff.orderFile", "mailmap.file"])
def test_a_repository_config_naming_a_fifo_does_not_hang_git(tmp_path: Path, key: str) -> None:
    root = _repo(tmp_path / "repo", {"x.py": "1\n", "y.py": "2\n"})
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # a read blocks for ever (/dev/zero would fill memory instead)
    git(root, "config", key, str(fifo))
    assert read_history(root, timeout=3).note == "co-change: 2 commits read"


def _partial_clone(tmp_path: Path, filter_spec: str, upstream: Path) -> tuple[Path, Path]:
    """A partial clone of ``upstream`` whose promisor remote now runs a marker program to fetch."""
    git(upstream, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / f"clone-{filter_spec.replace(':', '-')}"
    git(tmp_path, "clone", "-q", "--no-checkout", f"--filter={filter_spec}", upstream.as_uri(), str(clone))
    program, marker = _marker_program(tmp_path)
    git(clone, "config", "remote.origin.url", "ssh://example.invalid/repo")
    git(clone, "config", "core.sshCommand", str(program))
    return clone, marker


def test_a_partial_clone_missing_trees_fetches_nothing_and_says_the_history_is_incomplete(
    tmp_path: Path,
) -> None:
    upstream = _repo(tmp_path / "up", {"f.py": "1\n", "g.py": "2\n"})
    clone, marker = _partial_clone(tmp_path, "tree:0", upstream)
    history = read_history(clone)
    assert not marker.exists()
    assert history.commits == ()
    assert history.note == (
        "co-change unavailable: the history is incomplete (a partial clone; its missing objects are not fetched)"
    )


def test_a_partial_clone_missing_blobs_gives_its_history_without_fetching(tmp_path: Path) -> None:
    upstream = _repo(tmp_path / "up", {"f.py": "one\ntwo\nthree\n", "g.py": "2\n"})
    git(upstream, "mv", "f.py", "h.py")
    commit(upstream, {"h.py": "one\ntwo\nthree\nfour\n", "g.py": "3\n"}, "rename and edit")
    clone, marker = _partial_clone(tmp_path, "blob:none", upstream)
    history = read_history(clone)  # rename detection would need the blobs
    assert not marker.exists()
    assert history.commits[0] == frozenset({"f.py", "g.py", "h.py"})
    assert history.note == "co-change: 3 commits read"


def test_paths_with_any_character_but_nul_are_read_whole(tmp_path: Path) -> None:
    """A path may hold the old record separator (\\x1e), newlines (one leading too) or 40 hex digits,
    like a hash; each commit is still read whole, an empty commit in between changes nothing."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    odd = ["we\x1eird.py", "nl\nname.py", "\nlead.py", "a" * 40, "b" * 64, "plain.py"]
    for i in range(2):
        commit(root, {name: f"{i}\n" for name in odd}, f"c{i}")
        git(root, "commit", "-q", "--allow-empty", "-m", f"empty {i}")
    history = read_history(root)
    assert history.commits == (frozenset(odd),) * 2
    assert history.note == "co-change: 2 commits read"


def _log(commits: list[tuple[str, list[str]]]) -> str:
    """Output laid out as ``git log --format=%x00%H --name-only -z`` writes it."""
    return "".join(
        f"\0{sha}\0" + ("\n" if paths else "") + "".join(f"{p}\0" for p in paths) for sha, paths in commits
    )


@given(
    hyp.lists(
        hyp.tuples(
            hyp.sampled_from(["0" * 40, "c" * 40, "e" * 64]),
            hyp.lists(
                hyp.text(hyp.characters(blacklist_characters="\0"), min_size=1, max_size=6), max_size=5
            ),
        ),
        max_size=6,
    )
)
def test_any_paths_in_git_layout_parse_back_to_their_commits(commits: list[tuple[str, list[str]]]) -> None:
    parsed, skipped = parse_log(_log(commits), max_files=3)
    files = [frozenset(paths) for _, paths in commits if paths]
    assert parsed == tuple(f for f in files if len(f) <= 3)
    assert skipped == sum(len(f) > 3 for f in files)


def _endless_git(tmp_path: Path) -> Path:
    """A git that writes well-formed commits for ever."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    record = repr(b"\0" + b"1" * 40 + b"\0\na.py\0b.py\0")
    (bindir / "git").write_text(
        f"#!{sys.executable}\nimport sys\nblock = {record} * 4096\nwhile True:\n    sys.stdout.buffer.write(block)\n"
    )
    (bindir / "git").chmod(0o755)
    return bindir


def test_git_output_is_cut_while_read_and_git_stopped(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{_endless_git(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    history = read_history(repo, timeout=8)  # read to the end first, it would run until the timeout
    assert history.note.startswith("co-change: ")
    assert history.note.endswith("commits read (git's output cut at 20,000,000 bytes)")
    assert history.commits
    assert set(history.commits) == {frozenset({"a.py", "b.py"})}


def test_a_cut_keeps_the_newest_commits_read_whole(repo: Path) -> None:
    whole = read_history(repo)
    two = len(git(repo, "log", "-n2", "--name-only", "-z", "--format=%x00%H").encode())
    for size, read in [(two + 20, 2), (two - 20, 1)]:  # a third commit, a second commit started
        cut = read_history(repo, max_output=size)
        assert cut.note == f"co-change: {read} commits read (git's output cut at {size:,} bytes)"
        assert cut.commits == whole.commits[:read]

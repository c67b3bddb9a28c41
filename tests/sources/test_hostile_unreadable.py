"""Issue 29: files and folders ``index`` may not read are reported with the reason, and the run goes on.

The tests run as root, and root reads any file whatever its mode. So the indexing child runs with
a real permission failure: ``setpriv`` drops the capabilities that let root ignore file modes
(``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``, ``CAP_FOWNER``) from its bounding set, and the
kernel then refuses a mode-000 file or folder to it as to anyone (the child stays root, so it can
still run the Python under /root that an unprivileged user such as ``nobody`` could not). As any
other user the child runs unchanged: the modes alone refuse.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cli import run_process

pytestmark = pytest.mark.timeout(120)
NO_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]


@pytest.fixture
def closed(tmp_path: Path) -> Iterator[Path]:
    """A folder of one readable note, one mode-000 note and one mode-000 folder (modes restored after)."""
    docs = tmp_path / "docs"
    (docs / "shut").mkdir(parents=True)
    (docs / "open.md").write_text("# Rollback\n\nTo roll back, redeploy the previous tag.\n", "utf-8")
    (docs / "secret.md").write_text("# Secret\n\nThe rollback password is aubergine.\n", "utf-8")
    (docs / "shut" / "inner.md").write_text("# Inner\n\nRollback notes behind a closed door.\n", "utf-8")
    for path in (docs / "secret.md", docs / "shut"):
        path.chmod(0)
    yield docs
    (docs / "shut").chmod(stat.S_IRWXU)
    (docs / "secret.md").chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_unreadable_files_and_folders_are_reported_with_the_reason(closed: Path, tmp_path: Path) -> None:
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv (util-linux): no way to be refused a file here")
        prefix = NO_OVERRIDE
    done = run_process(["index", str(closed), "--json", "--no-semantic"], tmp_path, prefix=prefix)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["added"] == [str(closed / "open.md")]
    skipped = {Path(s["path"]).name: s for s in report["skipped"]}
    assert set(skipped) == {"secret.md", "shut"}
    assert skipped["secret.md"]["state"] == "failed"
    assert skipped["secret.md"]["reason"] == "cannot be read: Permission denied"
    assert "cannot be listed: Permission denied" in skipped["shut"]["reason"]
    assert "aubergine" not in done.stdout + done.stderr

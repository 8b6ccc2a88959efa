"""A failed apt restore is never "exactly as before" (issue 21: rollback said so after a failed apt
reinstall or hold). The apt/dpkg edge is tests.integration.apply.test_units.FakeApt (it keeps
versions and holds as apt-get and apt-mark would); here it refuses one kind of restore command
during the rollback. Whatever fails, the result is not exact and names the package."""

from __future__ import annotations

from typing import Any, Sequence

import pytest

from fixer.applier import apply_plan, rollback
from fixer.model import CommandResult, PlanOptions
from tests.integration.apply.test_units import FakeApt, apt_install_and_hold

pytestmark = pytest.mark.integration

PKGS = {"libcudnn9-cuda-13": "9.19.0.56-1", "libcudnn9-dev-cuda-13": "9.19.0.56-1"}


class FailingApt(FakeApt):
    """FakeApt whose `fail` command (("apt-get", "install"), ("apt-mark", "unhold"), ...) fails
    once armed."""

    def __init__(self, *args: Any, fail: Sequence[str] = (), **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.fail, self.armed = tuple(fail), False

    def __call__(self, argv: Sequence[str], timeout: float = 0, on_output: Any = None, **kw: Any):
        if self.armed and tuple(argv[:2]) == self.fail:
            return CommandResult(rc=100, output="E: refused by the test")
        return super().__call__(argv, timeout=timeout, on_output=on_output)


@pytest.mark.parametrize(
    "fail",
    [("apt-get", "install"), ("apt-get", "remove"), ("apt-mark", "unhold"), ("apt-mark", "hold")],
)
def test_a_failed_apt_restore_is_not_exact_and_names_the_package(venv, tmp_path, fail):
    apt = FailingApt({"libcudnn9-cuda-13": "9.14.0.64-1"}, held={"libcublas-13-0"}, fail=fail)
    plan = apt_install_and_hold(PKGS)
    apply_plan(plan, python=venv, options=PlanOptions(root=str(tmp_path)), runner=apt)
    apt.armed = True
    back = rollback(root=str(tmp_path), runner=apt)
    if fail == ("apt-mark", "hold"):
        # nothing the apply held was held before: rollback re-holds nothing, so nothing fails
        assert back.exact, back.remaining
        return
    assert not back.exact
    assert any("libcudnn9" in r for r in back.remaining), back.remaining

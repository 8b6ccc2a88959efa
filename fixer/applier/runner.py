"""Apply's edge to the processes it runs: the `Runner` it calls every command through (tests and
callers inject their own) and the default one, `run_command`, on the package's one child-process
runner (fixer.system.proc). What apply needs from it:

- the child gets its own process group (so that stopping it reaches pip's own children:
  build backends, apt's dpkg), and the kernel sends it SIGINT if the apply dies
  (PR_SET_PDEATHSIG): pip then unwinds as after Ctrl-C instead of finishing the install behind
  the rollback's back (`_proc.Group.APPLY`);
- `on_start(pid)` lets the transaction write the child's pid (and start time) into the journal
  before it can change anything, so that a later `rollback` can find it, stop it and wait for it;
- `keep_fds` hands the target lock to the child: the lock stays held until the child is gone,
  even if the apply was killed;
- stopping it (Ctrl-C, SIGTERM, timeout) sends SIGINT to the child's group first (pip rolls back
  what it moved aside on KeyboardInterrupt where it can), then SIGTERM, then SIGKILL, each after
  a grace period, and always reaps it before returning: nothing is restored while it runs
  (`_proc.GENTLE`).

No shell is involved anywhere.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, Protocol, Sequence

from fixer.model import CommandResult
from fixer.system import proc as _proc

#: How much of a command's output a CommandResult keeps (the whole output goes to the log).
OUTPUT_TAIL = 64 * 1024


class Runner(Protocol):
    def __call__(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        on_output: Optional[Callable[[str], None]] = None,
        env: Optional[Mapping[str, str]] = None,
    ) -> CommandResult: ...


def run_command(
    argv: Sequence[str],
    *,
    timeout: float,
    on_output: Optional[Callable[[str], None]] = None,
    env: Optional[Mapping[str, str]] = None,
    on_start: Optional[Callable[[int], None]] = None,
    keep_fds: Sequence[int] = (),
) -> CommandResult:
    """Run `argv`, calling `on_output(line)` for each line it prints. A command that runs past
    `timeout` seconds is stopped (rc 124, timed_out). KeyboardInterrupt (or any exception raised
    by a signal handler) stops the child's process group (SIGINT, then harder), reaps it, and
    propagates. `on_start(pid)` runs right after the child exists; if it raises, the child is
    stopped and the exception propagates. A command that cannot start: rc 127."""
    done = _proc.run(
        argv,
        timeout=timeout,
        env=env,
        merge_stderr=True,
        group=_proc.Group.APPLY,
        stop=_proc.GENTLE,
        keep_fds=keep_fds,
        keep=OUTPUT_TAIL,
        on_line=on_output,
        on_start=on_start,
    )
    if done.error is not None:
        return CommandResult(rc=127, output=done.error, seconds=done.seconds)
    if done.timed_out:
        return CommandResult(
            rc=124,
            output=done.text + f"\n[stopped after {timeout:.0f} s]",
            seconds=done.seconds,
            timed_out=True,
        )
    rc = done.returncode if done.returncode is not None else -9
    return CommandResult(rc=rc, output=done.text, seconds=done.seconds)

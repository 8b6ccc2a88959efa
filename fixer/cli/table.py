"""Every option of every command, declared once as plain data (flags, value kind, choices, default,
help), with each command's exit codes. fixer.cli.options makes each row a typer option that the
commands reuse, and renders --help from the same rows."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Tuple

from fixer.api import DEFAULT_LOCK_FILE
from fixer.model import FRAMEWORKS, VERIFIABLE
from fixer.detection.gpu_probe import ENV_CUDA, ENV_DRIVER, ENV_GPU

INSTALLERS: Tuple[str, ...] = ("auto", "pip", "uv", "conda")
CUDNN_SOURCES: Tuple[str, ...] = ("pip", "apt", "conda")


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    """One option. `kind`: "flag" (on/off, default off), "value" (one value) or "multi"
    (repeatable, a list)."""

    flags: Tuple[str, ...]
    help: str
    kind: str = "value"
    metavar: Optional[str] = None
    choices: Tuple[str, ...] = ()
    default: Any = None
    type: type = str

    def help_for(self, command: str) -> str:
        """The help as `command`'s --help prints it: --json names the command's own schema file."""
        return (
            self.help.replace("COMMAND.json", command.replace(" ", "-") + ".json")
            if command
            else self.help
        )


OPTIONS: Dict[str, OptionSpec] = {
    # -- global
    "version": OptionSpec(("--version",), "Print the version and exit.", kind="flag"),
    # -- output and target
    "json": OptionSpec(
        ("--json",),
        "Write one JSON object to stdout (its shape: fixer/schemas/COMMAND.json; errors too).",
        kind="flag",
    ),
    "python": OptionSpec(
        ("--python",),
        "Target interpreter to inspect or repair (default: the one running "
        "this tool; rollback: the one the last apply changed).",
        metavar="PATH",
    ),
    "recipes": OptionSpec(
        ("--recipes",),
        "Extra recipe directory (repeatable, later ones win); its files "
        "replace the shipped recipes of the same name.",
        kind="multi",
        metavar="DIR",
    ),
    "environment": OptionSpec(
        ("--environment",),
        "Use the machine a `doctor --json` file describes, or a "
        "bundled example: colab-2026-08, colab-2026-08-cpu, colab-2025-01-tf215, "
        "h200-healthy, h200-pip-cudnn-hidden.",
        metavar="FILE|NAME",
    ),
    "lock": OptionSpec(
        ("--lock",),
        "A lock file written by `lock` (doctor: report drift from it; apply: "
        "install exactly it, hashes enforced).",
        metavar="FILE",
    ),
    "deep": OptionSpec(
        ("--deep",),
        "Also import each framework in a child process (slower) and report what "
        "it sees: its cuDNN version, mapped files, devices.",
        kind="flag",
    ),
    # -- intent
    "framework": OptionSpec(
        ("--framework",),
        "Framework to make work (repeatable; default: those installed).",
        kind="multi",
        choices=FRAMEWORKS,
        metavar="NAME",
    ),
    "verify_framework": OptionSpec(
        ("--framework",),
        "Check only this framework (repeatable; default: those installed).",
        kind="multi",
        choices=VERIFIABLE,
        metavar="NAME",
    ),
    "torch": OptionSpec(("--torch",), "Wanted PyTorch version.", metavar="VERSION"),
    "tensorflow": OptionSpec(("--tensorflow",), "Wanted TensorFlow version.", metavar="VERSION"),
    "jax": OptionSpec(("--jax",), "Wanted JAX version.", metavar="VERSION"),
    "cuda": OptionSpec(("--cuda",), "Wanted CUDA version of the builds.", metavar="X.Y"),
    "cudnn_from": OptionSpec(
        ("--cudnn-from",), "Where cuDNN should come from.", choices=CUDNN_SOURCES
    ),
    "keep": OptionSpec(
        ("--keep",), "Never change this distribution (repeatable).", kind="multi", metavar="NAME"
    ),
    # -- sources and installers
    "installer": OptionSpec(
        ("--installer",),
        "Installer to run (auto: uv when the target has no pip and uv is there, else pip).",
        choices=INSTALLERS,
        default="auto",
    ),
    "find_links": OptionSpec(
        ("--find-links",), "Local wheelhouse directory (repeatable).", kind="multi", metavar="DIR"
    ),
    "no_index": OptionSpec(
        ("--no-index",), "Use no package index (only --find-links).", kind="flag"
    ),
    "index_mirror": OptionSpec(
        ("--index-mirror",),
        "Rewrite an index URL prefix (repeatable), e.g. "
        "https://download.pytorch.org/whl=http://127.0.0.1:8080/whl",
        kind="multi",
        metavar="FROM=TO",
    ),
    # -- apply and rollback
    "dry_run": OptionSpec(("--dry-run",), "Print the plan and change nothing.", kind="flag"),
    "yes": OptionSpec(
        ("--yes", "-y"), "Never ask (the default unless --interactive).", kind="flag"
    ),
    "interactive": OptionSpec(
        ("--interactive",), "Show the plan and ask before changing anything.", kind="flag"
    ),
    "root": OptionSpec(
        ("--root",),
        "Sandbox prefix for every file the tool writes (loader fixes, journal).",
        metavar="DIR",
    ),
    "restart": OptionSpec(
        ("--restart",), "Restart the notebook runtime when it must reload libraries.", kind="flag"
    ),
    "no_verify": OptionSpec(
        ("--no-verify",),
        "Skip the health checks after applying (GPU convolution test, "
        "detect + diagnose); the check that every step did its work "
        "still runs.",
        kind="flag",
    ),
    "force": OptionSpec(
        ("--force",),
        "Roll back from a damaged journal: whatever it still holds (recorded "
        "files, backups, the distributions before).",
        kind="flag",
    ),
    "prepare_for_gpu": OptionSpec(
        ("--prepare-for-gpu",),
        "This machine has no GPU now but is being prepared for one (an image built on a CPU host): apply the "
        "plan anyway. Without it, apply on a machine with no visible GPU changes nothing and exits 3 (0 when "
        "nothing installed or asked for needs a GPU).",
        kind="flag",
    ),
    "resume": OptionSpec(
        ("--resume",),
        "Go on with the apply that stopped for a kernel restart (condacolab), from its journal.",
        kind="flag",
    ),
    "verbose": OptionSpec(
        ("--verbose", "-v"), "Show every line the installers print.", kind="flag"
    ),
    # -- lock, verify, explain
    "output": OptionSpec(
        ("-o", "--output"),
        "Where to write the lock file.",
        metavar="FILE",
        default=DEFAULT_LOCK_FILE,
    ),
    "timeout": OptionSpec(
        ("--timeout",),
        "Seconds each framework's check may take.",
        metavar="S",
        default=120.0,
        type=float,
    ),
    "file": OptionSpec(
        ("--file", "-f"), "Read the error text from this file ('-': stdin).", metavar="F"
    ),
    "no_detect": OptionSpec(
        ("--no-detect",), "Explain the text alone; do not look at this machine.", kind="flag"
    ),
    # -- report, debug
    "html": OptionSpec(
        ("--html",), "Write HTML (one self-contained page) instead of markdown.", kind="flag"
    ),
    "no_redact": OptionSpec(
        ("--no-redact",),
        "Show home and user paths as they are (by default the home "
        "directory reads ~ and user names <user>).",
        kind="flag",
    ),
    # -- fleet
    "ray": OptionSpec(
        ("--ray",),
        "Ray cluster address (ray://HOST:10001, HOST:6379 or auto): one doctor task "
        "pinned to each GPU node. Needs `pip install colab-cudnn-fix[fleet]`.",
        metavar="ADDRESS",
    ),
    "slurm": OptionSpec(
        ("--slurm",),
        "Shared directory of a Slurm job array's per-node `doctor --json` files: "
        "read them back (with --nodes: print the job-array command that writes "
        "them).",
        metavar="DIR",
    ),
    "nodes": OptionSpec(
        ("--nodes",),
        "With --slurm: print the sbatch job-array command for this many nodes.",
        metavar="N",
        type=int,
    ),
    "partition": OptionSpec(
        ("--partition",),
        "With --slurm --nodes: the Slurm partition of the GPU nodes.",
        metavar="NAME",
    ),
    "fleet_timeout": OptionSpec(
        ("--timeout",),
        "Seconds to wait for every node's answer.",
        metavar="S",
        default=300.0,
        type=float,
    ),
    "markdown": OptionSpec(
        ("--markdown",), "Write the report as markdown instead of a terminal table.", kind="flag"
    ),
}

#: Intent options shared by plan, apply and lock (in this order in their help).
INTENT = ("framework", "torch", "tensorflow", "jax", "cuda", "cudnn_from", "keep")

#: Each command's exit codes, as its help prints them.
EXIT_CODES: Dict[str, Tuple[Tuple[int, str], ...]] = {
    "doctor": (
        (0, "healthy, or nothing to fix (no GPU and nothing installed needs one)"),
        (1, "problems found"),
        (2, "bad usage or input"),
        (3, "no GPU visible while something installed needs one"),
    ),
    "plan": (
        (0, "a plan, or nothing to do"),
        (1, "no stack fits (the clashes are printed)"),
        (2, "bad usage or input"),
    ),
    "apply": (
        (0, "done, nothing to do, or healthy after the fix"),
        (1, "a step failed (rolled back), another apply holds the lock, or still unhealthy after"),
        (2, "bad usage or input (nothing changed)"),
        (3, "no GPU (nothing changed)"),
        (130, "interrupted (rolled back)"),
    ),
    "verify": (
        (0, "every framework passed"),
        (1, "a framework failed, crashed or timed out"),
        (2, "bad usage or input"),
    ),
    "explain": (
        (0, "a cause was found"),
        (1, "the text was not recognised"),
        (2, "bad usage or input"),
    ),
    "lock": (
        (0, "written"),
        (1, "no stack fits, or an index could not give a file's hash"),
        (2, "bad usage or input"),
    ),
    "rollback": (
        (0, "rolled back exactly, or nothing to roll back"),
        (
            1,
            "could not restore everything (what is left is listed), or another apply holds the lock",
        ),
        (2, "bad usage or input"),
    ),
    "report": ((0, "the report was written (its verdict is inside)"), (2, "bad usage or input")),
    "debug": ((0, "the bundle was written"), (2, "bad usage or input")),
    "fleet doctor": (
        (0, "every GPU node answered and is healthy (or the job-array command was printed)"),
        (1, "a node has problems or did not answer"),
        (2, "bad usage, or the cluster cannot be reached"),
    ),
    "fleet lock-check": (
        (0, "every GPU node answered and matches the lock"),
        (1, "a node drifted, has problems or did not answer"),
        (2, "bad usage, or the cluster cannot be reached"),
    ),
    "recipes list": ((0, "listed"), (2, "bad usage or a broken recipe file")),
    "recipes show": ((0, "shown"), (2, "bad usage, nothing matches, or a broken recipe file")),
    "recipes validate": (
        (0, "every recipe file is valid"),
        (2, "problems found (each as FILE:LINE)"),
    ),
}
GENERAL_EXIT_CODES: Tuple[Tuple[int, str], ...] = (
    (0, "healthy or done"),
    (1, "problems found, or a step failed (rolled back)"),
    (2, "bad usage or bad input (nothing changed)"),
    (3, "nothing detected (no GPU)"),
    (4, "the output could not be written (a closed pipe, a full disk)"),
    (130, "interrupted"),
)


#: Environment variables the commands that detect read (see fixer.detection.overrides).
def environment_overrides() -> Tuple[Tuple[str, str], ...]:
    """The variables detection reads instead of probing, for --help. Imported when help is
    rendered: importing fixer.detection (a package) costs about a quarter of `plan --json
    --environment`'s start-up on a loaded 2-core machine, and no plan of a described machine
    needs it."""
    return (
        (ENV_DRIVER, "driver version instead of probing, e.g. 580.65.06"),
        (ENV_CUDA, "highest CUDA the driver supports, e.g. 13.0"),
        (ENV_GPU, "GPUs instead of probing: NAME:CC[,NAME:CC...], e.g. 'Tesla T4:7.5', or none"),
    )


DETECTING_COMMANDS = ("doctor", "plan", "apply", "lock", "verify", "explain", "report", "debug")

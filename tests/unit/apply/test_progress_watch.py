"""An installer's output read as progress (fixer.applier.progress), over generated transcripts.

The transcripts are written the way the installers write them (pip's `_log_download` and
`_raw_progress_bar` with `format_size`, uv's reporter lines; see the module's doc for the
sources), with generated files, sizes, chunkings, times and noise lines. The invariants:

- bytes done never go back, never pass what is expected, and end at the sum of the files;
- the rate is never negative and is None until bytes are counted (uv counts none);
- the time left is never negative, and 0 once everything came down;
- silence is the time since the last line, whatever the lines were;
- a display line is one line, whatever the snapshot.
"""

from __future__ import annotations

from typing import List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.applier import progress
from fixer.applier.progress import InstallWatch, Snapshot
from fixer.render.progress import bar, checking_text, duration, progress_text, size, summary_text
from tests.helpers.examples import examples


def pip_format_size(n: float) -> str:
    """pip's src/pip/_internal/utils/misc.py format_size (pip 24.x-26.x)."""
    if n > 1000 * 1000:
        return f"{n / 1000.0 / 1000:.1f} MB"
    if n > 10 * 1000:
        return f"{int(n / 1000)} kB"
    if n > 1000:
        return f"{n / 1000.0:.1f} kB"
    return f"{int(n)} bytes"


def uv_format_size(n: float) -> str:
    """uv's human-readable bytes (binary units, one decimal, no space)."""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n /= 1024
        i += 1
    return f"{n:.1f}{units[i]}"


names = st.from_regex(r"[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,6}){0,2}", fullmatch=True)
files = st.lists(
    st.tuples(names, st.integers(600 * 1024, 3 * 10**9), st.integers(1, 12)),
    min_size=1,
    max_size=4,
    unique_by=lambda f: f[0],
)
noise = st.sampled_from(
    [
        "Looking in indexes: http://127.0.0.1:1/simple/",
        "  Downloading torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl.metadata (30 kB)",
        "WARNING: something",
        "",
        "Requirement already satisfied: numpy in /usr/lib/python3/dist-packages",
    ]
)


def pip_transcript(
    spec: List[Tuple[str, int, int]], gap: float, noise_line: str
) -> List[Tuple[float, str]]:
    t = 0.0
    lines: List[Tuple[float, str]] = []
    for name, total, chunks in spec:
        wheel = f"{name.replace('-', '_')}-1.0-py3-none-manylinux_2_17_x86_64.whl"
        lines.append((t, f"Collecting {name}"))
        lines.append((t, noise_line))
        lines.append((t, f"Downloading {wheel} ({pip_format_size(total)})"))
        for k in range(chunks + 1):
            t += gap
            lines.append((t, f"Progress {total * k // chunks} of {total}"))
    lines.append((t + gap, "Installing collected packages: " + ", ".join(n for n, _, _ in spec)))
    lines.append(
        (t + 2 * gap, "Successfully installed " + " ".join(f"{n}-1.0" for n, _, _ in spec))
    )
    return lines


@given(files, st.floats(0.01, 3.0), noise, st.integers(0, 4 * 10**9))
@settings(max_examples=examples(300))
def test_pip_bytes_never_go_back_nor_pass_what_is_expected(spec, gap, noise_line, planned):
    watch = InstallWatch(0.0, expected=planned or None, packages=[spec[0][0]])
    last_done = 0
    for t, line in pip_transcript(spec, gap, noise_line):
        watch.line(line, t)
        snap = watch.snapshot(t)
        assert snap.done >= last_done
        last_done = snap.done
        assert snap.expected is None or snap.done <= snap.expected
        assert snap.rate is None or snap.rate >= 0
        assert snap.eta is None or snap.eta >= 0
        assert snap.silent == 0.0
        assert "\n" not in progress_text(snap).plain
    assert last_done == sum(total for _, total, _ in spec)
    assert snap.action == "finishing"
    assert snap.expected is not None and snap.expected >= last_done


@given(files, st.floats(0.05, 2.0))
@settings(max_examples=examples(200))
def test_pip_rate_and_time_left_follow_the_bytes(spec, gap):
    """At a steady pace the rate is the pace, and the time left is what remains at that pace."""
    name, total, chunks = spec[0]
    watch = InstallWatch(0.0, expected=total)
    watch.line(f"Downloading {name}-1.0-py3-none-any.whl ({pip_format_size(total)})", 0.0)
    for k in range(chunks + 1):
        watch.line(f"Progress {total * k // chunks} of {total}", k * gap)
    snap = watch.snapshot(chunks * gap)
    assert snap.done == total and snap.eta == 0
    assert snap.download_seconds == chunks * gap
    if chunks * gap > 0:
        pace = total / (chunks * gap)
        assert snap.rate is not None
        assert abs(snap.rate - pace) <= pace * 0.05 + total / chunks / max(gap, 1e-9) * 0.05 + 1


@given(files, st.floats(0.01, 3.0))
@settings(max_examples=examples(200))
def test_uv_counts_files_when_they_end_and_no_rate(spec, gap):
    watch = InstallWatch(0.0, packages=[spec[0][0]])
    watch.line("Resolved 3 packages in 163ms", 0.0)
    t = 0.0
    finished = 0
    for name, total, _ in spec:
        t += gap
        watch.line(f"Downloading {name} ({uv_format_size(total)})", t)
        snap = watch.snapshot(t + gap / 2)
        assert snap.action == "downloading" and snap.package == name
        assert snap.rate is None and snap.eta is None and not snap.counted
        announced = progress.parse_size(*_split(uv_format_size(total)))
        assert snap.expected is not None and snap.expected >= finished + announced
        t += gap
        watch.line(f" Downloaded {name}", t)
        finished += announced
        assert watch.snapshot(t).done == finished
    watch.line(f"Prepared {len(spec)} packages in 2.02s", t)
    assert watch.snapshot(t).action == "installing"


def _split(text: str) -> Tuple[str, str]:
    i = len(text.rstrip("BKMGTi"))
    return text[:i], text[i:]


@given(st.lists(st.floats(0, 100), min_size=1, max_size=20), st.floats(0, 1000))
@settings(max_examples=examples(200))
def test_silence_is_the_time_since_the_last_line(steps, wait):
    watch = InstallWatch(0.0)
    t = 0.0
    for dt in steps:
        t += dt
        watch.line("some output the watch does not know", t)
    snap = watch.snapshot(t + wait)
    assert abs(snap.silent - wait) < 1e-6
    assert snap.is_silent == (wait >= progress.SILENT_AFTER)
    if snap.is_silent:
        assert f"({duration(wait)}, no output)" in progress_text(snap).plain


@given(st.integers(0, 10**13))
@settings(max_examples=examples(300))
def test_sizes_read_back_as_printed(n):
    """What pip and uv print reads back to the bytes, within the printed precision."""
    for text, tolerance in ((pip_format_size(n), 0.051), (uv_format_size(n), 0.051)):
        number, unit = text.split(" ") if " " in text else _split(text)
        got = progress.parse_size(number, unit)
        assert got is not None
        assert abs(got - n) <= max(1000, n * tolerance), (n, text, got)


@given(names, st.sampled_from(["1.0", "9.19.0.56", "2.11.0+cu130"]))
@settings(max_examples=examples(200))
def test_a_wheel_file_names_its_distribution(name, version):
    dist = name.replace("-", "_")
    for tag in ("py3-none-any", "cp312-cp312-manylinux_2_28_x86_64"):
        wheel = f"{dist}-{version}-{tag}.whl"
        assert progress.distribution_of(wheel) == name
        assert progress.distribution_of(f"https://h/p/{wheel}#sha256=00") == name
    assert progress.distribution_of(name) == name  # uv prints the name itself


@given(
    st.lists(st.text(min_size=0, max_size=12), max_size=6),
    st.one_of(st.none(), st.from_regex(r"\d{1,2}\.\d{1,2}(\.\d)?", fullmatch=True)),
    st.booleans(),
)
@settings(max_examples=examples(300))
def test_raw_progress_only_for_a_pip_install_that_knows_it(rest, version, user_set):
    base = {"PATH": "/usr/bin"}
    if user_set:
        base["PIP_PROGRESS_BAR"] = "off"
    for argv in (
        ["/p/python", "-m", "pip", "install", *rest],
        ["/p/python", "-m", "pip", "uninstall", *rest],
        ["/usr/bin/uv", "pip", "install", *rest],
        ["apt-get", "install", *rest],
    ):
        env = progress.installer_env(argv, version, base)
        wanted = (
            argv[1:4] == ["-m", "pip", "install"]
            and not user_set
            and version is not None
            and tuple(int(p) for p in version.split(".")[:2]) >= (24, 1)
        )
        assert (env is not None) == wanted
        if env is not None:
            assert env["PIP_PROGRESS_BAR"] == "raw" and env["PATH"] == "/usr/bin"


def test_pip_version_is_read_from_the_snapshot():
    before = {"dists": [{"name": "numpy", "version": "2.0"}, {"name": "pip", "version": "24.1.2"}]}
    assert progress.pip_version_in(before) == "24.1.2"
    assert progress.pip_version_in({"dists": "garbage"}) is None
    assert progress.pip_version_in(None) is None


snapshots = st.builds(
    Snapshot,
    action=st.sampled_from(["starting", "resolving", "downloading", "installing", "finishing"]),
    package=st.one_of(st.just(""), names),
    elapsed=st.floats(0, 10**6),
    silent=st.floats(0, 10**6),
    done=st.integers(0, 10**12),
    expected=st.one_of(st.none(), st.integers(0, 10**12)),
    file_done=st.integers(0, 10**12),
    file_total=st.one_of(st.none(), st.integers(0, 10**12)),
    rate=st.one_of(st.none(), st.floats(0, 10**10)),
    eta=st.one_of(st.none(), st.floats(0, 10**7)),
    unknown=st.lists(names, max_size=3).map(tuple),
    counted=st.booleans(),
    download_seconds=st.one_of(st.none(), st.floats(0, 10**6)),
)


@given(snapshots)
@settings(max_examples=examples(300))
def test_every_snapshot_draws_as_one_line(snap):
    line = progress_text(snap).plain
    assert "\n" not in line and line.strip()
    if snap.is_silent:
        assert "no output" in line
    elif snap.action == "downloading" and snap.counted and snap.eta is not None:
        assert "left" in line
    final = summary_text(snap)
    assert (final is None) == (snap.done == 0)
    assert len(bar(snap.done, snap.expected)) == 20
    assert size(snap.rate) and duration(snap.eta)


@given(
    st.lists(st.sampled_from(["torch", "jax", "cupy", "tensorflow"]), unique=True),
    st.floats(0, 10**5),
)
@settings(max_examples=examples(100))
def test_checking_names_every_framework(frameworks, seconds):
    line = checking_text(frameworks, seconds).plain
    assert "\n" not in line
    for f in frameworks:
        assert f in line
    if not frameworks:
        assert "installed frameworks" in line

#!/bin/bash
# Progress while apply installs a real cuDNN wheel, as a user sees it (issue 23 item 3, issue 25
# item 4): in a terminal and in a notebook kernel. scripts/device/progress_run.py does the work:
# it repacks the machine's nvidia-cudnn-cu13 (about 490 MB) and pip into a wheelhouse, serves it
# on 127.0.0.1 at PROGRESS_RATE bytes/s (default 100 MB/s, a good Colab download), and installs the
# wheel through apply_plan (journaled, --root in a temp folder) into throw-away venvs:
#   1. in a pseudo-terminal with the CLI's reporter (what `colab-cudnn-fix apply` shows in a
#      shell or a Colab `!` cell), printing every frame the terminal received;
#   2. in a Jupyter kernel (ipykernel + jupyter_client installed OFFLINE from .wheels-device/
#      into a venv that sees this python's packages), with the reporter fixer.apply() uses there.
# Nothing of the machine changes (temp venvs only; the temp folder is removed at the end).
#
# Must show:
#   1. "to download (dependencies included): 4xx.x MB" before the step; the live line redrawn in
#      place (carriage returns / erase-line, one line, not a line per update) reading
#      "downloading nvidia-cudnn-cu13: N MB of 4xx.x MB, R MB/s, T s left  [####....]" with N
#      growing; while pip unpacks the wheel (silent for more than 5 s) "still installing
#      nvidia-cudnn-cu13 (N s, no output)"; then "downloaded 4xx.x MB in T s (R MB/s)" and "ok".
#   2. "notebook: 1 output(s) in the cell (display_data), updated in place N times" with N well
#      above 3, and the same lines as in 1 in its updates; no stream output, no error.
# Needs: .wheels-device/ at the repo root (cp312 wheels of ipykernel, jupyter_client and their
# dependencies; made with
#   pip download --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
#     --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 -d .wheels-device \
#     ipykernel jupyter_client pip==24.1.2
# (pip 24.1.2 is Colab's pip in the 2026-08 image; the machine's own pip 24.0 predates pip's raw
# byte reports, so the throw-away venvs take Colab's)
# it is git-ignored: carry it to the GPU machine (run's carry: [".wheels-device"]), or point
# PROGRESS_WHEELS at a folder holding them).
# Usage (repo root, GPU machine, about 1-2 min): bash scripts/device/progress.sh
set -u
py=${PY:-/opt/torch/.venv/bin/python}
[ -x "$py" ] || py=$(command -v python3)
echo "python: $py"
"$py" -c 'import pip; print("pip", pip.__version__)'
ls .wheels-device 2>/dev/null | wc -l | sed 's/^/wheels in .wheels-device: /'
du -sh .wheels-device 2>/dev/null
timeout 170 "$py" scripts/device/progress_run.py
echo "exit $?"

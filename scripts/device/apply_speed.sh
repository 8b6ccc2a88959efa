#!/bin/bash
# On a freshly started GPU machine: a cuDNN-only repair from a local wheelhouse, end to
# end, split into backup, install, check and the rest, with its rollback checked byte for byte
# (scripts/bench_apply.py; the machine's pip cuDNN is put back at the end and compared). The
# first run is the one to quote (fresh machine); then the same with every backup zipped as before
# (--zip-backups), for the difference the linked backups make.
# Budgets: apply without the check < 10 s; the check (torch + JAX + CuPy) < 6 s; rollback exact.
# Usage, from the repo root on the GPU machine:  bash scripts/device/apply_speed.sh
set -u
py=${PY:-python3}
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader 2>/dev/null
df -h "$($py -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" /var/lib 2>/dev/null | tail -n +1
echo "## 1 linked backups (now), first run on this machine"
$py scripts/bench_apply.py --python "$(command -v $py)"
echo "## 2 every backup zipped (before issue 25)"
$py scripts/bench_apply.py --python "$(command -v $py)" --zip-backups

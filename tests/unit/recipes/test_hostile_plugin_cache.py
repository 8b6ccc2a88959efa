"""The plugin cache (cache_dir()/plugins/<key>.json, fixer.system.plugins._disk_read) is
untrusted data like the recipe cache (tests/unit/recipes/test_cache.py): with any field of an
entry, the entry or the whole file replaced by a hostile value (tests/helpers/hostile.py), the
read never raises, runs, imports or writes nothing, and answers either None (scan again) or
entries that discovery itself could have made: a known group, a location among the
directories searched, an importable-looking value, short strings."""

from __future__ import annotations

import copy
import json
import os
import sys
from typing import Any, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.system import plugins
from tests.helpers.examples import examples
from tests.helpers.hostile import nothing_happens, values

KEY: Tuple[Tuple[str, int], ...] = (("/opt/venv/lib/python3.12/site-packages", 1764200000),)
GOOD = {
    "group": plugins.RECIPES_GROUP,
    "name": "ctranslate2",
    "value": "ccf_ctranslate2.recipes",
    "distribution": "ccf-ctranslate2 1.0",
    "location": KEY[0][0],
}
FIELDS = (None, "entry", "group", "name", "value", "distribution", "location", "bogus")


def _write(data: Any) -> None:
    path = str(plugins._disk_path(KEY))
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh)
    os.chmod(path, 0o600)


@settings(
    max_examples=examples(400),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(field=st.sampled_from(FIELDS), hostile=values())
def test_a_hostile_plugin_cache_is_scanned_again_or_only_what_discovery_makes(field, hostile):
    entry = copy.deepcopy(GOOD)
    if field is None:
        data: Any = hostile
    elif field == "entry":
        data = [GOOD, hostile]
    else:
        entry[field] = hostile
        data = [entry]
    _write(data)
    modules = set(sys.modules)
    with nothing_happens() as happened:
        got = plugins._disk_read(KEY)
    assert happened == [] and set(sys.modules) == modules
    for p in got or ():
        assert p.group in (plugins.RECIPES_GROUP, plugins.CHECKS_GROUP)
        assert p.location in {d for d, _ in KEY}
        assert plugins._VALUE.fullmatch(p.value)
        assert all(isinstance(v, str) and len(v) <= 4096 for v in vars(p).values())


def test_the_good_entry_reads_back() -> None:
    _write([GOOD])
    assert plugins._disk_read(KEY) == (plugins.Plugin(**GOOD),)

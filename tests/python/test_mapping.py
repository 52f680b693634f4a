"""`benches/mapping/run.sh`, as docs/performance.md shows it in "Buffers
mapped instead of copied: a feasibility study" (issue 47): the prototype
that copies one call's buffers into a guest memory and maps them instead,
run in its quick mode (a few rounds), its table checked."""

from __future__ import annotations

import re

from support import ROOT, clean_env, documented_command, run

PERFORMANCE = ROOT / "docs" / "performance.md"
HEADING = "## Buffers mapped instead of copied: a feasibility study"


def test_the_mapping_command():
    command = documented_command(PERFORMANCE, HEADING, "benches/mapping/run.sh")
    r = run([*command, "--quick"], env=clean_env({}), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert re.search(r"^cpu: \S.*$", out, re.M), out
    rows = re.findall(
        r"^\| (\d+) MiB \| ([12]) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", out, re.M
    )
    sizes = {int(row[0]) for row in rows}
    assert sizes == {4, 64}, out
    # One thread at both sizes; two where the machine has a second CPU.
    assert {(int(row[0]), int(row[1])) for row in rows} >= {(4, 1), (64, 1)}, out
    for row in rows:
        copy, mapped, ratio, populated, populate_ratio = (float(x) for x in row[2:])
        assert copy > 0 and mapped > 0 and populated > 0, row
        assert ratio > 0 and populate_ratio > 0, row
        # The ratios are the table's own times divided (to 2 decimals).
        assert abs(ratio - mapped / copy) <= 0.01 + 0.01 * ratio, row
        assert abs(populate_ratio - populated / copy) <= 0.01 + 0.01 * populate_ratio, row

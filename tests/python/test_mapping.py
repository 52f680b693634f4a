"""`benches/mapping/run.sh`, as docs/performance.md shows it in "Buffers
mapped instead of copied: a feasibility study" (issue 47): the prototype
that copies one call's buffers into a guest memory and maps them instead,
run in its quick mode (a few rounds), its table checked."""

from __future__ import annotations

import re

from support import ROOT, clean_env, run

PERFORMANCE = (ROOT / "docs" / "performance.md").read_text()
HEADING = "## Buffers mapped instead of copied: a feasibility study"


def mapping_command() -> list[str]:
    """The section's benches/mapping/run.sh line, without its comment."""
    assert HEADING in PERFORMANCE, f"docs/performance.md has no section {HEADING!r}"
    section = PERFORMANCE[PERFORMANCE.index(HEADING) :]
    end = section.find("\n## ", 1)
    section = section if end < 0 else section[:end]
    lines = [line.split("#")[0].split() for block in re.findall(r"```sh\n(.*?)```", section, re.S)
             for line in block.splitlines()]
    found = [line for line in lines if line and line[0] == "benches/mapping/run.sh"]
    assert len(found) == 1, f"the section shows no single benches/mapping/run.sh line: {found}"
    return found[0]


def test_the_mapping_command():
    r = run([*mapping_command(), "--quick"], env=clean_env({}), timeout=120)
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

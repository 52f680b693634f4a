"""`scripts/mca.sh`, as docs/performance.md shows it: the matmul's inner loop
as a guest and natively, found in the machine code, and llvm-mca's
prediction for each of the four cores (goal P3)."""

from __future__ import annotations

import re

from support import ROOT, clean_env, documented_command, run

PERFORMANCE = ROOT / "docs" / "performance.md"
HEADING = "### The matmul's inner loop, by llvm-mca (goal P3)"
CPUS = ("icelake-server", "sapphirerapids", "znver4", "znver5")


def test_the_mca_command():
    command = documented_command(PERFORMANCE, HEADING, "scripts/mca.sh")
    r = run(command, env=clean_env({}), timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    # Both loops were found, each with its multiplies, and printed.
    guest = re.search(r"^guest: wasm\[0\]::function\[\d+\], innermost loop: (\d+) instructions, (\d+) multiplies$", out, re.M)
    native = re.search(r"^native: \S*MatmulImpl\S*, innermost loop: (\d+) instructions, (\d+) multiplies$", out, re.M)
    assert guest and native, out
    assert int(guest.group(2)) >= 1 and int(native.group(2)) >= 1, out
    # The guest's loop has its deadline check: a load from the poll page.
    guest_loop = out[guest.end() : out.index("native:")]
    assert re.search(r"^\s+movzb[lq] \(%r\w+\),%[re]\w+$", guest_loop, re.M), guest_loop
    # A row per core, each with a ratio llvm-mca computed.
    for cpu in CPUS:
        row = re.search(rf"^\| {cpu} \| ([\d.]+) \(\d+ multiplies\) \| ([\d.]+) \(\d+\) \| ([\d.]+) \|$", out, re.M)
        assert row, f"no row for {cpu}:\n{out}"
        g, n, ratio = (float(x) for x in row.groups())
        assert g > 0 and n > 0 and 0.3 < ratio < 3, row.group(0)

"""`scripts/callgrind.sh`, as docs/performance.md shows it: the instructions of one
sandboxed call, counted by callgrind, and the parts they go to (issue 34)."""

from __future__ import annotations

import re

from support import ROOT, clean_env, documented_command, run

PERFORMANCE = ROOT / "docs" / "performance.md"


def callgrind_command() -> list[str]:
    """docs/performance.md's callgrind command line, without its comment."""
    return documented_command(PERFORMANCE, "## Benchmarks", "scripts/callgrind.sh")


def parse(stdout: str) -> dict[str, tuple[int, dict[str, int]]]:
    """`{variant: (instructions per call, {part: instructions})}`."""
    out: dict[str, tuple[int, dict[str, int]]] = {}
    variant = None
    for line in stdout.splitlines():
        head = re.match(r"^(\S+): ([\d,]+) instructions per call \((\d+) calls\)$", line)
        part = re.match(r"^\s+([\d,]+)\s+(.+)$", line)
        if head:
            variant = head.group(1)
            out[variant] = (int(head.group(2).replace(",", "")), {})
        elif part and variant:
            out[variant][1][part.group(2)] = int(part.group(1).replace(",", ""))
    return out


def test_the_callgrind_command():
    argv = callgrind_command()
    assert "--host" in argv, argv
    # A hang bound only: the bench build of the example, if it is not there,
    # is slow on a shared machine; the count itself takes seconds.
    r = run(argv, env=clean_env({}), timeout=3600)
    assert r.returncode == 0, r.describe()
    variants = parse(r.stdout)
    assert sorted(variants) == ["host-copy16", "host-noop"], r.stdout
    for name, (total, parts) in variants.items():
        # The parts add up to the total (each rounded to an instruction).
        assert abs(sum(parts.values()) - total) <= len(parts), (name, r.stdout)
        # The call runs the guest (JIT code), wasmtime and the host's own
        # files, the dispatcher and the instance's call among them.
        assert parts.get("(JIT code: the guest and the trampolines)", 0) > 0, r.stdout
        assert parts.get("(wasmtime)", 0) > 0, r.stdout
        for file in ("host/src/dispatch.rs", "host/src/instance.rs", "host/src/layout.rs"):
            assert parts.get(file, 0) > 0, (name, file, r.stdout)
        assert 200 < total < 100_000, (name, total, r.stdout)
    # copy16 reads and writes 16 floats in the guest, noop nothing.
    assert variants["host-copy16"][0] > variants["host-noop"][0], r.stdout


def test_callgrind_refuses_a_bad_count():
    r = run(["scripts/callgrind.sh", "--host", "many"], env=clean_env({}))
    assert r.returncode == 2, r.describe()
    assert "CALLS must be a whole number > 0, got 'many'" in r.stderr, r.describe()

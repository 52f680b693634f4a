"""The innermost vector-multiply loop of a guest (a precompiled module) and of
the native build of the same source, and llvm-mca's prediction for each on
four server cores (scripts/mca.sh runs it).

Usage: python3 scripts/mca.py GUEST.cwasm NATIVE.so
"""

from __future__ import annotations

import re
import subprocess
import sys

CPUS = ("icelake-server", "sapphirerapids", "znver4", "znver5")
ITERATIONS = 1000
LINE = re.compile(r"^\s*([0-9a-f]+):\s+(.*?)\s*$")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.*)>:$")
JUMP = re.compile(r"^(j[a-z]+)\s+([0-9a-f]+)\b")
MULTIPLY = re.compile(r"^v?mulps\b")


def functions(binary: str) -> dict[str, list[tuple[int, str]]]:
    """Each function's instructions, (address, text), from objdump."""
    listing = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", binary], check=True, capture_output=True, text=True
    ).stdout
    found: dict[str, list[tuple[int, str]]] = {}
    current: list[tuple[int, str]] | None = None
    for line in listing.splitlines():
        if m := FUNCTION.match(line):
            current = found.setdefault(m.group(1), [])
        elif current is not None and (m := LINE.match(line)):
            text = re.sub(r"\s+#.*$", "", m.group(2))
            current.append((int(m.group(1), 16), text))
    return found


def innermost_multiply_loop(binary: str) -> tuple[str, list[str]]:
    """The shortest loop (a backward jump and what it jumps over) that holds
    a `mulps`: the function's name and the loop's instructions, nops left
    out, every jump's target written `.Lloop`."""
    best: tuple[int, str, list[tuple[int, str]]] | None = None
    for name, code in functions(binary).items():
        for at, text in code:
            jump = JUMP.match(text)
            if not jump or int(jump.group(2), 16) > at:
                continue
            body = [(a, t) for a, t in code if int(jump.group(2), 16) <= a <= at]
            if not any(MULTIPLY.match(t) for _, t in body):
                continue
            if best is None or at - int(jump.group(2), 16) < best[0]:
                best = (at - int(jump.group(2), 16), name, body)
    if best is None:
        sys.exit(f"scripts/mca.py: {binary} has no loop that multiplies vectors (mulps)")
    _, name, body = best
    loop = []
    for _, text in body:
        if text.startswith("nop") or text.startswith("data16"):
            continue
        if jump := JUMP.match(text):
            text = f"{jump.group(1)} .Lloop"
        loop.append(text)
    return name, loop


def cycles(loop: list[str], cpu: str) -> float:
    """llvm-mca's cycles per iteration of `loop` on `cpu`."""
    source = ".Lloop:\n" + "\n".join(loop) + "\n"
    out = subprocess.run(
        ["llvm-mca-19", f"-mcpu={cpu}", f"-iterations={ITERATIONS}"],
        input=source,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    m = re.search(r"^Total Cycles:\s+(\d+)", out, re.M)
    if not m:
        sys.exit(f"scripts/mca.py: llvm-mca printed no total for {cpu}:\n{out}")
    return int(m.group(1)) / ITERATIONS


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    loops = {"guest": innermost_multiply_loop(sys.argv[1]), "native": innermost_multiply_loop(sys.argv[2])}
    multiplies = {}
    for what, (name, loop) in loops.items():
        multiplies[what] = sum(1 for t in loop if MULTIPLY.match(t))
        print(f"{what}: {name}, innermost loop: {len(loop)} instructions, {multiplies[what]} multiplies")
        for text in loop:
            print(f"    {text}")
        print()
    print("| -mcpu | guest cycles/iteration | native cycles/iteration | guest / native per multiply |")
    print("|---|---|---|---|")
    for cpu in CPUS:
        g = cycles(loops["guest"][1], cpu)
        n = cycles(loops["native"][1], cpu)
        ratio = (g / multiplies["guest"]) / (n / multiplies["native"])
        print(f"| {cpu} | {g:.2f} ({multiplies['guest']} multiplies) | {n:.2f} ({multiplies['native']}) | {ratio:.3f} |")


if __name__ == "__main__":
    main()

"""Sums a `callgrind_annotate` listing of call_profile by part of a call.

Usage: callgrind_parts.py LISTING VARIANT CALLS (see scripts/callgrind.sh;
CALLS: the custom calls call_profile made, as it printed them).
Each function's own instructions go to its source file when the file is in
this repository, else to the library it is in; prints the instructions of
one call per part, most first.
"""

import re
import sys

OURS = ("host/", "plugin-glue/", "guest-sdk/", "abi/", "benches/")
# `  1,234 (12.3%)  FILE:FUNCTION [OBJECT]`; code inlined from another file
# has no `[OBJECT]`.
ROW = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*?):(.*?)(?: \[(.*)\])?$")


def part(file: str, function: str, obj: str) -> str:
    file = file.removeprefix("./")
    for ours in OURS:
        if file.startswith(ours):
            return file
        i = file.find("/" + ours)
        if i >= 0:
            return file[i + 1 :]
    if file == "???" and obj == "???":
        return "(JIT code: the guest and the trampolines)"
    name = (obj or "").rsplit("/", 1)[-1]
    if "/wasmtime" in file or "/cranelift" in file:
        return "(wasmtime)"
    if "/rustc/" in file and "cyxla" in function:
        return "(Rust std, inlined into this repository's functions)"
    if "/rustc/" in file or name.startswith(("libc.so", "ld-linux", "libm.so")):
        return "(Rust std, libc)"
    if name.endswith(".so") or ".so." in name:
        return f"(library {name})"
    return "(other Rust crates)"


def main() -> None:
    path, variant, per = sys.argv[1], sys.argv[2], int(sys.argv[3])
    total, parts = 0, {}
    with open(path) as listing:
        lines = listing.read().splitlines()
    # The function table: after its `Ir  file:function` heading, to the
    # first blank line.
    start = next(i for i, line in enumerate(lines) if line.split() == ["Ir", "file:function"])
    table = lines[start + 2 :]
    table = table[: next((i for i, line in enumerate(table) if not line.strip()), len(table))]
    for line in table:
        m = ROW.match(line)
        if m:
            n = int(m.group(1).replace(",", ""))
            total += n
            key = part(m.group(2), m.group(3), m.group(4) or "")
            parts[key] = parts.get(key, 0) + n
    print(f"{variant}: {total / per:,.0f} instructions per call ({per} calls)")
    for key, n in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {n / per:10,.0f}  {key}")
    files = sorted(k for k in parts if not k.startswith("("))
    print(f"  {len(files)} source files of this repository: {', '.join(files)}")


if __name__ == "__main__":
    main()

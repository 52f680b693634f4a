#!/usr/bin/env bash
# Checks every Cargo.lock the repository tracks (the root's, guests/'s and
# fuzz/'s; not those under vendor/, lockfiles of upstream crates that cargo
# ignores) against a copy of the RustSec advisory database, offline, with
# cargo-audit. Installs cargo-audit first when $CARGO_HOME/bin (~/.cargo/bin)
# does not have the pinned version (idempotent). Exits 1 when a lockfile
# fails. Needs git and python3 (3.11 or newer, for tomllib).
#
# The database: $CYXLA_ADVISORY_DB, else ../shared/rustsec-advisory-db
# beside the repository: the RustSec advisory-db as plain files (a snapshot,
# no git history). With fetching off, cargo-audit reads the folder as it is
# (no git repository needed, no git run) and opens no network connection.
#
# Policy and exceptions: .cargo/audit.toml. A vulnerability fails, and so
# does an `unsound` advisory; `unmaintained` and `notice` advisories and
# yanked versions are reported and do not fail. An advisory that does not
# apply to cyxla-host is excepted by its ID in .cargo/audit.toml, with a
# comment saying why; an exception that matches no lockfile any more is
# reported. Yanked versions are looked up in cargo's local copy of the
# crates.io index, never fetched: as fresh as the last cargo command that
# resolved those crates (a build), and a crate cargo has not looked up on
# this machine is reported as unknown.
#
# Prints, per lockfile, how many crates were checked and every advisory
# that matches one of them (excepted ones too), then cargo-audit's own
# report, with dependency trees, of each lockfile that fails.
set -euo pipefail

# cargo-audit rather than cargo-deny: it reads each Cargo.lock itself (every
# crate in it, with no `cargo metadata`, which needs the crates downloaded
# and fails on a lockfile its manifests would change) and the database as a
# plain folder (cargo-deny wants a git repository, to date the copy). This
# version reads all of the 2026-08-21 snapshot, CVSS 4.0 scores included.
# Built without its default feature (scanning binaries), which the check
# does not use, and unoptimized (--debug): half the build time of a release
# build on 2 cores, for a check that takes seconds either way.
version=0.22.2

# A relative $CYXLA_ADVISORY_DB is taken from the caller's directory.
if [[ -n "${CYXLA_ADVISORY_DB:-}" ]]; then
  if [[ ! -d "$CYXLA_ADVISORY_DB" ]]; then
    echo "scripts/advisories.sh: CYXLA_ADVISORY_DB=$CYXLA_ADVISORY_DB is not a directory;" \
      "set it to a copy of the RustSec advisory database (the folder that holds crates/)" >&2
    exit 1
  fi
  db="$(cd "$CYXLA_ADVISORY_DB" && pwd)"
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [[ -z "${db:-}" ]]; then
  if [[ ! -d ../shared/rustsec-advisory-db ]]; then
    echo "scripts/advisories.sh: no advisory database at ../shared/rustsec-advisory-db" \
      "(beside the repository); set CYXLA_ADVISORY_DB to a copy of the RustSec" \
      "advisory database (the folder that holds crates/)" >&2
    exit 1
  fi
  db="$(cd ../shared/rustsec-advisory-db && pwd)"
fi
if [[ ! -d "$db/crates" ]]; then
  echo "scripts/advisories.sh: $db has no crates/ folder, so it is not the RustSec" \
    "advisory database; set CYXLA_ADVISORY_DB to a copy of it" >&2
  exit 1
fi

cargo_home="${CARGO_HOME:-$HOME/.cargo}"
audit="$cargo_home/bin/cargo-audit"
if [[ "$("$audit" --version 2>/dev/null || true)" != "cargo-audit $version" ]]; then
  echo "advisories: installing cargo-audit $version into $cargo_home/bin" >&2
  started=$SECONDS
  cargo install --locked --debug --no-default-features --version "$version" \
    --root "$cargo_home" cargo-audit
  echo "advisories: installing cargo-audit took $((SECONDS - started)) s" >&2
fi

mapfile -t lockfiles < <(git ls-files -- '*Cargo.lock' ':(exclude)vendor/**')
if ((${#lockfiles[@]} == 0)); then
  echo "scripts/advisories.sh: git lists no Cargo.lock outside vendor/" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# A run from here lists every advisory that matches, exceptions included:
# an empty policy, which also keeps cargo-audit from reading one in
# ~/.cargo. Fetching off here too.
mkdir -p "$tmp/all/.cargo"
printf '[database]\nfetch = false\nstale = false\n' >"$tmp/all/.cargo/audit.toml"

runs=()
for i in "${!lockfiles[@]}"; do
  lockfile="${lockfiles[$i]}"
  # Everything that matches, as JSON, for the summary. Its exit status
  # says only whether something matched.
  (cd "$tmp/all" && "$audit" audit --no-fetch --db "$db" --file "$root/$lockfile" --json) \
    >"$tmp/$i.json" 2>"$tmp/$i.err" || true
  # The verdict: .cargo/audit.toml's policy and exceptions. Yanked versions
  # do not count in it, so they are looked up in the run above only.
  status=0
  "$audit" audit --no-fetch --no-yanked --db "$db" --file "$lockfile" \
    >"$tmp/$i.out" 2>&1 || status=$?
  runs+=("$lockfile" "$tmp/$i.json" "$tmp/$i.err" "$status")
done

python3 - "$db" "${runs[@]}" <<'EOF'
import json
import sys
import tomllib

db, args = sys.argv[1], sys.argv[2:]
with open(".cargo/audit.toml", "rb") as f:
    excepted = set(tomllib.load(f).get("advisories", {}).get("ignore", []))
matched = set()
advisories = None
for k in range(0, len(args), 4):
    lockfile, out, err, status = args[k : k + 4]
    verdict = "passes" if status == "0" else "FAILS"
    try:
        with open(out) as f:
            report = json.load(f)
    except ValueError:
        with open(err) as f:
            why = f.read().strip().splitlines()
        print(f"advisories: {lockfile}: cargo-audit could not check it"
              f" ({why[-1] if why else 'no output'}): {verdict}")
        continue
    advisories = report["database"]["advisory-count"]
    lines = []
    counts = {}
    for v in report["vulnerabilities"]["list"]:
        lines.append(("vulnerability", v))
    for kind, warnings in sorted(report["warnings"].items()):
        for w in warnings:
            lines.append((kind, w))
    for kind, _ in lines:
        counts[kind] = counts.get(kind, 0) + 1
    found = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "nothing found"
    crates = report["lockfile"]["dependency-count"]
    print(f"advisories: {lockfile}: {crates} crates checked: {found}: {verdict}")
    for kind, item in lines:
        pkg = item["package"]
        adv = item.get("advisory")
        text = f"  {kind}: {pkg['name']} {pkg['version']}"
        if adv:
            text += f" {adv['id']}: {adv['title']}"
            patched = (item.get("versions") or {}).get("patched") or []
            text += f" (fixed in {' or '.join(patched)})" if patched else " (no fixed version)"
            if adv["id"] in excepted:
                matched.add(adv["id"])
                text += ", excepted in .cargo/audit.toml"
        print(text)
    with open(err) as f:
        unknown = sum("couldn't check if the package is yanked" in l for l in f)
    if unknown:
        print(f"  not checked for being yanked: {unknown} crate(s) that cargo's"
              " local copy of the crates.io index does not have")
for stale in sorted(excepted - matched):
    print(f"advisories: exception {stale} in .cargo/audit.toml matches no"
          " lockfile any more: remove it")
print(f"advisories: database {db}: {advisories} advisories")
EOF

failed=0
for i in "${!lockfiles[@]}"; do
  if [[ "${runs[$((4 * i + 3))]}" != 0 ]]; then
    echo "advisories: ${lockfiles[$i]} fails; cargo-audit's report:" >&2
    cat "$tmp/$i.out" >&2
    failed=1
  fi
done
if ((failed)); then
  echo "scripts/advisories.sh: a lockfile has an advisory that is neither fixed nor" \
    "excepted: update the crate, or add its ID to .cargo/audit.toml with the reason" \
    "it does not apply" >&2
  exit 1
fi

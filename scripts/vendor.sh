#!/usr/bin/env bash
# Derives vendor/ from the crates of a wasmtime release as published on
# crates.io and the patch series of vendor/series (vendor/patches/), so that
# vendor/ is upstream plus our patches and nothing else.
#
#   scripts/vendor.sh              derive vendor/ at the series' version
#   scripts/vendor.sh 48.0.11      move the series to another wasmtime release
#   scripts/vendor.sh --check      derive into a scratch folder and fail,
#                                  naming each file, where vendor/, a patch
#                                  file or vendor/README.md's table differs
#   scripts/vendor.sh --list       print the series, a line per patch
#   scripts/vendor.sh --without P  derive without the patches whose path
#                                  contains P (to see which test catches a
#                                  reverted patch); rerun without it after
#   scripts/vendor.sh --record CRATE/NN-name.patch
#                                  write that patch (the last of its crate in
#                                  vendor/series; a new one starts as a file
#                                  holding only its header) from how
#                                  vendor/CRATE now differs from the crate
#                                  with the patches before it, then derive
#
# The crates come as cargo gets them: a scratch manifest that depends on
# `wasmtime = "=VERSION"` (outside this workspace and its [patch]) is
# resolved and fetched by cargo, which checks each .crate file against the
# registry's checksum; the .crate files are then unpacked from cargo's cache.
# wasmtime pins its cranelift crates exactly, so the version of
# wasmtime-internal-cranelift and cranelift-codegen follows from wasmtime's.
#
# Each crate is unpacked into a scratch git repository, committed, and each
# of its patches applied with `patch -p1` and committed in turn. A patch
# must apply exactly (no offset, no fuzz) under --check; otherwise one that
# applies with an offset or fuzz is rewritten from what it changed (its
# header, the text before the diff, is kept), and one that does not apply
# stops the script, naming the patch and printing its rejected hunks:
# edit that patch file for the new release and run the script again.
# CYXLA-PATCH.md in each vendor/<crate>/ is ours and kept as it is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf 'vendor: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

mode=write
without=()
record=
version=
while (($#)); do
  case "$1" in
    --check) mode=check ;;
    --list) mode=list ;;
    --without) [[ $# -ge 2 ]] || die "--without takes a part of a patch's path"; without+=("$2"); shift ;;
    --record) [[ $# -ge 2 ]] || die "--record takes a patch of vendor/series"; mode=record; record=$2; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see scripts/vendor.sh --help)" ;;
    *) [[ -z "$version" ]] || die "one version at most (got $version and $1)"; version=$1 ;;
  esac
  shift
done

series=vendor/series
[[ -f "$series" ]] || die "no $series"
series_version=$(sed -n 's/^version  *//p' "$series")
[[ -n "$series_version" ]] || die "$series has no 'version X.Y.Z' line"
patches=()
while read -r line; do
  [[ -z "$line" || "$line" == \#* || "$line" == version\ * || "$line" == crate\ * ]] && continue
  [[ -f "vendor/patches/$line" ]] || die "$series names vendor/patches/$line, which does not exist"
  patches+=("$line")
done <"$series"
if [[ $mode == record ]]; then
  last=
  for p in "${patches[@]}"; do [[ "${p%%/*}" == "${record%%/*}" ]] && last=$p; done
  [[ "$last" == "$record" ]] || die "--record $record: it must be in vendor/series and the last patch of its crate (that is ${last:-none})"
  without=("$record")
fi
crates=(wasmtime wasmtime-internal-cranelift cranelift-codegen)
# Our notes on each crate's patches, kept in vendor/<crate>/ as they are.
notes=CYXLA-PATCH.md
# Crates outside wasmtime's own tree, each at a version of its own
# (`crate NAME VERSION` lines of the series).
declare -A extra_version
while read -r name v; do
  crates+=("$name")
  extra_version[$name]=$v
done < <(sed -n 's/^crate  *//p' "$series")

# The diff of a patch file, and its header (what comes before the diff).
body() { sed -n '/^\(diff --git \|--- a\/\)/,$p' "$1"; }
header() { sed '/^\(diff --git \|--- a\/\)/,$d' "$1"; }
subject() { sed -n 's/^Subject: //p' "$1" | head -1; }
counts() { # lines added and removed by the diff on stdin
  awk '/^\+\+\+ |^--- /{next} /^\+/{a++} /^-/{d++} END{printf "+%d −%d", a, d}'
}
files_of() { body "$1" | sed -n 's#^+++ b/##p' | sed 's#^src/##' | paste -sd, - | sed 's/,/, /g'; }

table() {
  echo "| # | crate | patch | files (under src/) | lines | what it does |"
  echo "|---|---|---|---|---|---|"
  local n=0 p
  for p in "${patches[@]}"; do
    n=$((n + 1))
    echo "| $n | ${p%%/*} | [${p#*/}](patches/$p) | $(files_of "vendor/patches/$p") | $(body "vendor/patches/$p" | counts) | $(subject "vendor/patches/$p") |"
  done
}

if [[ $mode == list ]]; then
  echo "wasmtime $series_version, ${#patches[@]} patches:"
  table
  exit 0
fi

version=${version:-$series_version}
if [[ $mode == check && "$version" != "$series_version" ]]; then
  die "--check derives the series' own version ($series_version), not $version"
fi

# cargo outside this checkout finds no rust-toolchain.toml: use the same one.
if [[ -z "${RUSTUP_TOOLCHAIN:-}" ]]; then
  RUSTUP_TOOLCHAIN=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
  export RUSTUP_TOOLCHAIN
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# --- The pristine crates, as cargo fetches them --------------------------------
# One scratch manifest for wasmtime's tree, one for each crate outside it
# (whose own exact pins may not resolve beside this wasmtime).
scratch_manifest() { # dir, then dependency lines
  mkdir -p "$1/src"
  : >"$1/src/lib.rs"
  { printf '[package]\nname = "cyxla-vendor-fetch"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[dependencies]\n'
    printf '%s\n' "${@:2}"
    printf '\n[workspace]\n'
  } >"$1/Cargo.toml"
}
fetch() { # dir
  if ! cargo fetch --quiet --manifest-path "$1/Cargo.toml" 2>"$1/fetch.err"; then
    if cargo fetch --quiet --offline --manifest-path "$1/Cargo.toml" 2>>"$1/fetch.err"; then
      say "crates.io could not be reached; the crates came from cargo's cache (--offline)"
    else
      cat "$1/fetch.err" >&2
      die "cargo could not fetch $(sed -n '/^\[dependencies\]/{n;p}' "$1/Cargo.toml") (is it a published version?)"
    fi
  fi
}
locked() { # lockfile, name -> "version checksum"
  awk -v n="$2" '$1=="name" && $3=="\""n"\"" {f=1; next}
    f && $1=="version" {gsub(/"/,"",$3); v=$3}
    f && $1=="checksum" {gsub(/"/,"",$3); print v, $3; exit}
    f && /^\[\[package\]\]/ {f=0}' "$1"
}
scratch_manifest "$scratch/fetch/wasmtime" \
  "wasmtime = { version = \"=$version\", default-features = false, features = [\"cranelift\"] }"
fetch "$scratch/fetch/wasmtime"
cargo_home=${CARGO_HOME:-$HOME/.cargo}
declare -A crate_version
for c in "${crates[@]}"; do
  lock="$scratch/fetch/wasmtime/Cargo.lock"
  if [[ -n "${extra_version[$c]:-}" ]]; then
    scratch_manifest "$scratch/fetch/$c" "$c = \"=${extra_version[$c]}\""
    fetch "$scratch/fetch/$c"
    lock="$scratch/fetch/$c/Cargo.lock"
  fi
  read -r v sum < <(locked "$lock" "$c") || die "no $c in what cargo resolved for wasmtime $version"
  crate_version[$c]=$v
  file=
  for f in "$cargo_home"/registry/cache/*/"$c-$v.crate"; do
    [[ -f "$f" ]] || continue
    if [[ "$(sha256sum "$f" | cut -d' ' -f1)" == "$sum" ]]; then file=$f; break; fi
  done
  [[ -n "$file" ]] || die "cargo fetched no $c-$v.crate with the registry's checksum $sum"
  mkdir -p "$scratch/crates"
  tar -xzf "$file" -C "$scratch/crates"
  mv "$scratch/crates/$c-$v" "$scratch/crates/$c"
done

# --- The series, applied -----------------------------------------------------------
git_in() { # a scratch repository; no user configuration of this machine applies
  git -C "$1" -c user.name=cyxla-vendor -c user.email=vendor@cyxla.invalid \
    -c commit.gpgsign=false -c core.autocrlf=false -c core.hooksPath=/dev/null \
    -c diff.noprefix=false -c diff.mnemonicPrefix=false "${@:2}"
}
for c in "${crates[@]}"; do
  git_in "$scratch/crates/$c" init -q
  git_in "$scratch/crates/$c" add -A -f .
  git_in "$scratch/crates/$c" commit -q -m "$c ${crate_version[$c]} as published"
done

mkdir -p "$scratch/patches"
failed=0
for p in "${patches[@]}"; do
  c=${p%%/*}
  dir="$scratch/crates/$c"
  skip=
  for w in "${without[@]}"; do [[ "$p" == *"$w"* ]] && skip=1; done
  if [[ -n "$skip" ]]; then
    say "left out: $p"
    continue
  fi
  fuzz=2
  [[ $mode == check ]] && fuzz=0
  if ! out=$(patch -p1 --forward --no-backup-if-mismatch -F "$fuzz" -r "$scratch/rejects" -d "$dir" <"vendor/patches/$p" 2>&1); then
    say "vendor/patches/$p does not apply to $c ${crate_version[$c]}:"
    printf '%s\n' "$out" >&2
    [[ -f "$scratch/rejects" ]] && cat "$scratch/rejects" >&2
    die "edit vendor/patches/$p for $c ${crate_version[$c]} and run scripts/vendor.sh $version again"
  fi
  if grep -q 'with fuzz\|offset' <<<"$out"; then
    if [[ $mode == check ]]; then
      say "vendor/patches/$p applies only with an offset: $out"
      failed=1
    else
      say "vendor/patches/$p applied with an offset or fuzz; rewriting it from what it changes"
    fi
  fi
  git_in "$dir" add -A -f .
  git_in "$dir" commit -q --allow-empty -m "$p"
  # The patch as it applies now: its header, then the diff of its commit.
  mkdir -p "$scratch/patches/$c"
  { header "vendor/patches/$p"
    git_in "$dir" diff --no-color --no-ext-diff --no-renames --src-prefix=a/ --dst-prefix=b/ HEAD~1 HEAD |
      grep -v '^index '
  } >"$scratch/patches/$p"
done

# --- Written, or compared ---------------------------------------------------------
if [[ $mode == check ]]; then
  for p in "${patches[@]}"; do
    if ! cmp -s "$scratch/patches/$p" "vendor/patches/$p"; then
      say "vendor/patches/$p is not in the form the script writes (run scripts/vendor.sh):"
      diff -u "vendor/patches/$p" "$scratch/patches/$p" | head -20 >&2 || true
      failed=1
    fi
  done
  for c in "${crates[@]}"; do
    rm -rf "$scratch/crates/$c/.git"
    while read -r line; do
      say "vendor/$c differs from $c ${crate_version[$c]} plus the series: $line"
      failed=1
    done < <(diff -rq --exclude=CYXLA-PATCH.md "$scratch/crates/$c" "vendor/$c" 2>&1 |
      sed "s#$scratch/crates/$c#(derived)#g" || true)
  done
  expected=$(table)
  actual=$(sed -n '/<!-- series:begin -->/,/<!-- series:end -->/p' vendor/README.md | sed '1d;$d')
  if [[ "$expected" != "$actual" ]]; then
    say "vendor/README.md's table of the series is stale (run scripts/vendor.sh):"
    diff <(printf '%s\n' "$actual") <(printf '%s\n' "$expected") >&2 || true
    failed=1
  fi
  ((failed == 0)) || die "vendor/ is not wasmtime $version plus the series; scripts/vendor.sh rewrites it"
  say "vendor/ is wasmtime $version (wasmtime-internal-cranelift ${crate_version[wasmtime-internal-cranelift]}, cranelift-codegen ${crate_version[cranelift-codegen]}) plus ${#patches[@]} patches"
  exit 0
fi

if [[ $mode == record ]]; then
  c=${record%%/*}
  dir="$scratch/crates/$c"
  find "$dir" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
  cp -a "vendor/$c/." "$dir/"
  rm -f "$dir/$notes"
  git_in "$dir" add -A -f .
  { header "vendor/patches/$record"
    git_in "$dir" diff --cached --no-color --no-ext-diff --no-renames --src-prefix=a/ --dst-prefix=b/ HEAD |
      grep -v '^index '
  } >"$scratch/recorded.patch"
  cp "$scratch/recorded.patch" "vendor/patches/$record"
  say "recorded vendor/patches/$record ($(body "vendor/patches/$record" | counts) lines); deriving vendor/ with it"
  exec "$0"
fi
for c in "${crates[@]}"; do
  rm -rf "$scratch/crates/$c/.git"
  if [[ -f "vendor/$c/$notes" ]]; then
    cp "vendor/$c/$notes" "$scratch/crates/$c/"
  fi
  # Only files whose content changed are written (and files gone removed),
  # so that cargo rebuilds only what changed. A written file gets the time
  # of writing, not the crate's: cargo sees a source as changed only when
  # it is newer than the last build, and a crate's files carry their
  # release's times, so a patch left out (--without) or a file put back
  # would otherwise leave the build patched.
  mkdir -p "vendor/$c"
  (cd "vendor/$c" && find . -type f ! -name CYXLA-PATCH.md) | while read -r f; do
    [[ -e "$scratch/crates/$c/$f" ]] || rm -f "vendor/$c/$f"
  done
  (cd "$scratch/crates/$c" && find . -type f) | while read -r f; do
    if ! cmp -s "$scratch/crates/$c/$f" "vendor/$c/$f"; then
      mkdir -p "$(dirname "vendor/$c/$f")"
      cp --preserve=mode "$scratch/crates/$c/$f" "vendor/$c/$f"
    fi
  done
  find "vendor/$c" -type d -empty -delete
done
if ((${#without[@]})); then
  say "vendor/ is wasmtime $version with patches left out: run scripts/vendor.sh to restore it"
  exit 0
fi
cp -a "$scratch/patches/." vendor/patches/
sed -i "s/^version .*/version $version/" "$series"
{
  sed '/<!-- series:begin -->/q' vendor/README.md
  table
  sed -n '/<!-- series:end -->/,$p' vendor/README.md
} >"$scratch/readme"
cp "$scratch/readme" vendor/README.md
say "vendor/ is wasmtime $version (wasmtime-internal-cranelift ${crate_version[wasmtime-internal-cranelift]}, cranelift-codegen ${crate_version[cranelift-codegen]}) plus ${#patches[@]} patches"
if [[ "$version" != "$series_version" ]]; then
  say "now pin wasmtime and wasmtime-wasi to =$version and the cranelift crates to ${crate_version[cranelift-codegen]} in Cargo.toml and fuzz/Cargo.toml, then: cargo update -p wasmtime; scripts/test.sh"
fi

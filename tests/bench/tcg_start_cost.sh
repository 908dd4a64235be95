#!/usr/bin/env bash
# Issue 13's overhead budget against what a process start costs in the emulated-hardware lab (QEMU TCG):
# the goal is afdisk's whole NVMe switch (preflight, tool, re-probe, rescan) within 20% of the bare
# `nvme format`. Under TCG that budget (about 20 ms) can be smaller than the start of a static Rust program
# that does nothing; this script measures both in one boot so the claim can be checked.
#   1. Builds, in a temporary cargo project (no dependencies, offline), three static binaries with the same
#      flags as the lab's afdisk (-C target-feature=+crt-static, so static-pie): tcg-time (the timer,
#      tests/bench/tcg_time.rs: busybox's date has no sub-second field), hello (fn main(){println!("hi")})
#      and hello-nopie (the same with -C relocation-model=static: linked at a fixed address).
#   2. Boots the lab once (tests/lab/lab.sh) with tests/lab/start-cost-guest.sh, which times over N rounds
#      (median, min, max in ms, from spawn to exit): busybox true, hello, hello-nopie, afdisk --version,
#      nvme version, afdisk sector-size (status), and interleaved: the bare nvme format 512 -> 4096 -> 512
#      and afdisk's whole switch both ways; one AFDISK_TRACE_TIMING switch each way; then the budget
#      arithmetic. All of it twice: as booted (address-space randomisation on, as on any Linux system) and,
#      as a diagnostic, with randomisation off (under QEMU 7.2's TCG a program loaded at a random address
#      costs far more per start than at a fixed one: its translated code is evidently not reused).
#   3. Prints the budget sections; the whole output stays in OUT (default target/lab/start-cost.out).
# Not a cargo test (a benchmark: about a minute of TCG guest time at N=20, two runs of the lab's cores).
# Usage: tests/bench/tcg_start_cost.sh [STATIC_AFDISK] [N] [OUT] [BEFORE]
#   BEFORE: an earlier static afdisk, timed in the same rounds (before-version, before-status, before.to4096,
#   before.to512), for a change's before/after figures. E.g. what the random load address costs afdisk
#   itself: build it linked at a fixed address outside the repo,
#     RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static" cargo build --release \
#       --target x86_64-unknown-linux-gnu --bin afdisk --target-dir /tmp/afdisk-nopie
#   and pass it as STATIC_AFDISK with the usual static-pie build as BEFORE (a diagnostic only: the shipped
#   build stays position-independent, so that its addresses are randomised).
#   STATIC_AFDISK defaults to target/x86_64-unknown-linux-gnu/release/afdisk, built by
#   RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --target x86_64-unknown-linux-gnu --bin afdisk
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/target/x86_64-unknown-linux-gnu/release/afdisk}
n=${2:-20}
out=${3:-$root/target/lab/start-cost.out}
before=${4:-}
[ -x "$bin" ] || { echo "tcg_start_cost: no static afdisk at $bin (build it as this script's header says)" >&2; exit 1; }
case $n in '' | *[!0-9]*) echo "tcg_start_cost: N must be a number, not $n" >&2; exit 1 ;; esac
command -v cargo >/dev/null || { echo "tcg_start_cost: cargo is missing" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/afdisk-tcg-start.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/proj/src/bin" "$work/files" "$(dirname "$out")"
cat >"$work/proj/Cargo.toml" <<'EOF'
[package]
name = "hello"
version = "0.0.0"
edition = "2021"

[[bin]]
name = "tcg-time"
path = "src/bin/tcg-time.rs"

[profile.release]
opt-level = 3

[workspace]
EOF
echo 'fn main() { println!("hi"); }' >"$work/proj/src/main.rs"
cp "$root/tests/bench/tcg_time.rs" "$work/proj/src/bin/tcg-time.rs"
build() { # build TARGET_DIR RUSTFLAGS
    (cd "$work/proj" && CARGO_BUILD_JOBS=1 RUSTFLAGS="$2" cargo build --quiet --release --offline \
        --target x86_64-unknown-linux-gnu --target-dir "$1")
}
build "$work/t-pie" "-C target-feature=+crt-static"
build "$work/t-nopie" "-C target-feature=+crt-static -C relocation-model=static"
cp "$work/t-pie/x86_64-unknown-linux-gnu/release/hello" "$work/files/hello"
cp "$work/t-pie/x86_64-unknown-linux-gnu/release/tcg-time" "$work/files/tcg-time"
cp "$work/t-nopie/x86_64-unknown-linux-gnu/release/hello" "$work/files/hello-nopie"
echo "$n" >"$work/files/start-cost.n"
extra=()
if [ -n "$before" ]; then
    [ -x "$before" ] || { echo "tcg_start_cost: no earlier afdisk at $before" >&2; exit 1; }
    cp "$before" "$work/files/afdisk-before"
    extra=(--file "$work/files/afdisk-before")
fi

echo "host: $(qemu-system-x86_64 --version | head -1); CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); accel ${LAB_ACCEL:-tcg}, -cpu ${LAB_CPU:-max}"
echo "afdisk: $bin ($(file -b "$bin" | cut -d, -f1-2)); $n rounds"
rc=0
"$root/tests/lab/lab.sh" --binary "$bin" --script "$root/tests/lab/start-cost-guest.sh" --out "$out" \
    --timeout 900 --file "$work/files/tcg-time" --file "$work/files/hello" --file "$work/files/hello-nopie" \
    --file "$work/files/start-cost.n" "${extra[@]}" || rc=$?
for kind in aslr fixed; do
    case $kind in
        aslr) echo "== as booted (address-space randomisation on)" ;;
        fixed) echo "== diagnostic: address-space randomisation off" ;;
    esac
    "$root/tests/lab/sections.sh" "$out" "budget.$kind" || rc=1
done
echo "(all figures, runs and traces: $out)"
exit "$rc"

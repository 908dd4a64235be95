#!/usr/bin/env bash
# Benchmark: the cost of libblkid probing in `afdisk list --json` on 32 loop devices, against the peers
#   afdisk list --json (each binary given)   vs   lsblk -J -O   vs   fdisk -l
# The disks vary: GPT (sgdisk), dos with logicals (sfdisk), fdisk's Sun and SGI labels, parted's atari and mac
# labels, ext4 and swap on the whole disk, and empty ones; every 4th is a 4Kn loop device.
# Each command runs RUNS times (default 15) after 2 warm-up runs, interleaved (A B C D, A B C D, ...) so that a
# busy machine slows them alike; the median and the minimum wall time are printed in milliseconds.
# Usage: tests/bench/list_32_loops.sh AFDISK [AFDISK_BEFORE]     (root; attaches its loop devices and detaches
#        them on exit, also on Ctrl-C)
set -euo pipefail
after=${1:?usage: list_32_loops.sh AFDISK [AFDISK_BEFORE]}
before=${2:-}
runs=${RUNS:-15}
for t in losetup sgdisk sfdisk fdisk parted mkfs.ext4 mkswap lsblk python3; do
  command -v "$t" >/dev/null || { echo "list_32_loops: $t is missing (see .ci/run)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "list_32_loops: needs root (loop devices)" >&2; exit 1; }
work=$(mktemp -d)
loops=()
cleanup() { for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
for i in $(seq 0 31); do
  f=$work/d$i.img; truncate -s 256M "$f"
  case $((i % 8)) in
    0) sgdisk -n 1:0:+64M -n 2:0:+64M -n 3:0:0 "$f" >/dev/null ;;
    1) printf 'label: dos\n,64M,83\n,,5\n,32M,83\n,32M,82\n' | sfdisk -q "$f" >/dev/null ;;
    2) printf 's\nw\n' | fdisk "$f" >/dev/null 2>&1 ;;
    3) printf 'G\nw\n' | fdisk "$f" >/dev/null 2>&1 ;;
    4) parted -s -a none "$f" mklabel atari mkpart primary 1MiB 64MiB ;;
    5) parted -s -a none "$f" mklabel mac mkpart p1 1MiB 64MiB ;;
    6) if [ $((i % 16)) -eq 6 ]; then mkfs.ext4 -q -F "$f"; else mkswap -q "$f" >/dev/null; fi ;;
    7) ;;
  esac
  ss=512; [ $((i % 4)) -eq 3 ] && ss=4096
  # 4Kn loop devices: a label written for 512-byte sectors reads differently there, as on real hardware.
  l=$(losetup -f --show --sector-size "$ss" "$f"); loops+=("$l")
done
n=$("$after" list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')
echo "afdisk lists $n disks (32 of them this rig's loop devices)"
cmds=("$after list --json")
[ -n "$before" ] && cmds+=("$before list --json")
cmds+=("lsblk -J -O" "fdisk -l")
python3 - "$runs" "${cmds[@]}" <<'PY'
import statistics, subprocess, sys, time
runs, cmds = int(sys.argv[1]), sys.argv[2:]
times = {c: [] for c in cmds}
for r in range(runs + 2):
    for c in cmds:
        t0 = time.perf_counter()
        subprocess.run(c.split(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if r >= 2:
            times[c].append((time.perf_counter() - t0) * 1000)
print(f"{'command':60} {'median ms':>10} {'min ms':>8}")
for c in cmds:
    print(f"{c:60} {statistics.median(times[c]):10.1f} {min(times[c]):8.1f}")
PY

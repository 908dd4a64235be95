#!/usr/bin/env bash
# Benchmark rig: 32 loop devices with GPT tables (made by sgdisk), then times
#   afdisk list --json   vs   lsblk -J -O   vs   fdisk -l
# with hyperfine, and the TUI's time to first complete frame (device list of all disks) in tmux.
# Usage: tests/bench/loops32.sh [path/to/afdisk]   (root; detaches its loop devices on exit)
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/afdisk}
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
work=$(mktemp -d)
loops=()
cleanup() { for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
for i in $(seq 1 32); do
  f=$work/d$i.img; truncate -s 256M "$f"
  ss=512; [ $((i % 4)) -eq 0 ] && ss=4096
  l=$(losetup -f --show --sector-size "$ss" "$f"); loops+=("$l")
  if [ $((i % 3)) -eq 0 ]; then
    sgdisk -a 1 -n 1:63:+64M -n 2:0:+64M -n 3:0:0 "$l" >/dev/null
  else
    sgdisk -n 1:0:+64M -n 2:0:+64M -n 3:0:0 "$l" >/dev/null
  fi
done
n=$("$bin" list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')
echo "afdisk lists $n disks"
hyperfine -N --warmup 3 --runs 30 --export-markdown "$work/list.md" \
  "$bin list --json" "lsblk -J -O" "fdisk -l" >/dev/null
cat "$work/list.md"
# TUI: start to the first frame that shows every disk.
s=afdisk-bench-$$
total=0
for r in 1 2 3 4 5; do
  t0=$(date +%s%N)
  tmux new-session -d -s "$s" -x 120 -y 50 "$bin"
  until tmux capture-pane -p -t "$s" | grep -q "Disks ($n)"; do sleep 0.005; done
  t1=$(date +%s%N)
  tmux kill-session -t "$s"
  total=$((total + (t1 - t0) / 1000000))
done
echo "TUI: start to first complete device list ($n disks): $((total / 5)) ms (mean of 5, includes tmux start-up and 5 ms polling)"

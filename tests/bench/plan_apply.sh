#!/usr/bin/env bash
# Benchmark rig for `plan` and `apply` (issue 5): a 4Kn loop device (losetup --sector-size 4096) with a GPT of
# 128 used entries, every one misaligned by one 4 KiB sector (made by sgdisk -a 1). Times, with hyperfine:
#   afdisk plan --realign -o FILE                      (read table + probe 128 partitions + encode + self-check)
#   afdisk apply --plan FILE --yes --confirm loopN     (checks, backup with fsync, 4 phases with flush, verify)
#   sgdisk --load-backup FILE                          (the peer writing the same table back, for scale)
# Each apply run starts from the misaligned table (restored by sgdisk in --prepare, not timed).
# Usage: tests/bench/plan_apply.sh [path/to/afdisk]   (root; detaches its loop device on exit)
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/afdisk}
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
work=$(mktemp -d)
loop=
cleanup() { [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
truncate -s 2G "$work/d.img"
loop=$(losetup -f --show --sector-size 4096 "$work/d.img")
args=()
for i in $(seq 1 128); do
  # 2 MiB slots; each partition starts one 4 KiB sector past its 1 MiB boundary.
  start=$(( i * 512 + 1 ))
  args+=(-n "$i:$start:+1M" -c "$i:p$i")
done
sgdisk -a 1 "${args[@]}" "$loop" >/dev/null
sgdisk --backup="$work/orig.sgdisk" "$loop" >/dev/null
echo "rig: $loop (4096-byte sectors), $(sgdisk -p "$loop" | grep -c '^ *[0-9]') partitions"
export AFDISK_BACKUP_DIR=$work/bk
name=$(basename "$loop")
hyperfine -N --warmup 2 --runs 20 --export-markdown "$work/plan.md" \
  "$bin plan --realign $loop -o $work/p.json" >/dev/null
"$bin" plan --realign "$loop" -o "$work/p.json" >/dev/null
hyperfine -N --warmup 2 --runs 20 --export-markdown "$work/apply.md" \
  --prepare "sgdisk --load-backup=$work/orig.sgdisk $loop" \
  "$bin apply $loop --plan $work/p.json --yes --confirm $name" \
  "sgdisk --load-backup=$work/orig.sgdisk $loop" >/dev/null
cat "$work/plan.md" "$work/apply.md"
sgdisk --load-backup="$work/orig.sgdisk" "$loop" >/dev/null
"$bin" apply "$loop" --plan "$work/p.json" --yes --confirm "$name"
sgdisk -v "$loop" | head -3

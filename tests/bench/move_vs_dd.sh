#!/usr/bin/env bash
# Throughput of afdisk's data move (issue 14) against the peers, on a loop device with --direct-io=on over a
# fully written file on a real disk (not tmpfs: flushes must cost what they cost), caches dropped before each run:
#   A. right move: MBR (sfdisk) partition of SIZE MiB at sector 63 holding ext4 → 2048 (a shift of 1985 sectors:
#      journaled windows of 32 MiB). afdisk plan --realign + apply (marking, copy, verification, new table, e2fsck -fn) against
#      dd iflag=direct oflag=direct conv=notrunc,fsync copying the same bytes to a non-overlapping place (dd cannot
#      copy toward the end in place), and against `sfdisk --move-data` making the same move (1 : start=2048).
#   B. left move: GPT (sgdisk) partition at 2049 → 2048 (journaled mode): against dd copying in place 512 bytes
#      toward the start (bs=1M, byte offsets) and sfdisk --move-data.
# Every run's result is checked: the moved bytes' sha256 equals the source's.
# afdisk runs twice per case, with its journal (AFDISK_BACKUP_DIR) in two places:
#   - "journal on the same disk": $work on /var/tmp, the same physical disk as the image (here both on /dev/vda),
#     so each journal commit competes with the copy on one device. Real use never does this (afdisk refuses a
#     journal on the moved disk itself; it is normally on the system disk).
#   - "journal on another device": an ext4 on a second loop device over a file in /dev/shm, mounted, standing for
#     a separate fast disk (the system disk's SSD): what real use looks like. Its flushes cost next to nothing,
#     so this variant is the favourable bound; the truth for a real system disk lies between the two.
# Usage: tests/bench/move_vs_dd.sh [path/to/afdisk] [SIZE_MIB]   (root; default target/release/afdisk, 1024 MiB)
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/afdisk}
size_mib=${2:-1024}
for t in losetup sfdisk sgdisk mkfs.ext4 dd sha256sum python3; do
  command -v "$t" >/dev/null || { echo "move_vs_dd: $t is missing" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "move_vs_dd: needs root (loop devices, drop_caches)" >&2; exit 1; }
[ -x "$bin" ] || { echo "move_vs_dd: no afdisk binary at $bin" >&2; exit 1; }

work=$(mktemp -d "${MOVE_BENCH_DIR:-/var/tmp}/afdisk-move-bench.XXXXXX")
loop=""
jloop=""
jdir=$work/journal-dev
cleanup() {
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
  mountpoint -q "$jdir" && umount "$jdir" || true
  [ -n "$jloop" ] && losetup -d "$jloop" 2>/dev/null || true
  rm -f "/dev/shm/afdisk-move-bench-journal.$$"
  rm -rf "$work"
}
trap cleanup EXIT
export AFDISK_BACKUP_DIR=$work/backups
# The separate journal device: ext4 on a loop device over a file in /dev/shm (stands for a separate fast disk).
jimg=/dev/shm/afdisk-move-bench-journal.$$
truncate -s 256M "$jimg"
jloop=$(losetup -f --show "$jimg")
mkfs.ext4 -q -F "$jloop" >/dev/null
mkdir -p "$jdir"
mount "$jloop" "$jdir"
mkdir -p "$jdir/backups"
# afdisk prints its time per kind of I/O (read, write, flush, journal commit, verify) on stderr.
export AFDISK_MOVE_TRACE=1
mkdir -p "$AFDISK_BACKUP_DIR"

bytes=$((size_mib * 1024 * 1024))
secs=$((bytes / 512))
img=$work/disk.img
# Room for the partition, its move, and a non-overlapping copy for dd.
total_mib=$((2 * size_mib + 16))

now() { date +%s.%N; }
dropc() { sync; echo 3 > /proc/sys/vm/drop_caches; }
rate() { python3 -c "import sys; b,t=float(sys.argv[1]),float(sys.argv[2]); print(f'{t:8.2f} s {b/t/1e6:8.1f} MB/s')" "$1" "$2"; }
sha() { dd if="$loop" bs=1M iflag=skip_bytes,count_bytes,direct skip="$1" count="$2" status=none | sha256sum | cut -c1-16; }

fresh() { # $1 = label script for sfdisk (stdin), $2 = partition start sector
  losetup -d "$loop" 2>/dev/null || true
  rm -f "$img"
  # Fully written, so reads are real reads (unwritten extents read as zeros without I/O).
  dd if=/dev/urandom of="$img" bs=4M count=$((total_mib / 4)) status=none
  loop=$(losetup -f --show --direct-io=on "$img")
  wipefs -q -a "$loop" >/dev/null 2>&1 || true
  dd if=/dev/zero of="$loop" bs=1M count=1 conv=notrunc status=none
  printf '%s' "$1" | sfdisk -q "$loop" >/dev/null
  mkfs.ext4 -q -F -E offset=$(($2 * 512)),lazy_itable_init=1 "$loop" $((bytes / 1024)) >/dev/null
  sync
}

report() {
  if [ "$2" = nan ]; then printf '%-44s %s\n' "$1" "refused"; else printf '%-44s %s\n' "$1" "$(rate "$bytes" "$2")"; fi
}

run_afdisk() { # $1 = old start sector, $2 = new start, $3 = journal directory (AFDISK_BACKUP_DIR)
  local want got t0 t1 name
  local AFDISK_BACKUP_DIR=$3
  export AFDISK_BACKUP_DIR
  want=$(sha $(($1 * 512)) "$bytes")
  name=$(basename "$loop")
  "$bin" plan "$loop" --realign -o "$work/plan.json" >"$work/plan.txt"
  local planned
  planned=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['changes'][0]['new_start'])" "$work/plan.json")
  [ "$planned" = "$2" ] || { echo "afdisk planned start $planned, the benchmark expects $2" >&2; exit 1; }
  dropc; t0=$(now)
  "$bin" apply "$loop" --plan "$work/plan.json" --yes --confirm "$name" --json >"$work/apply.json"
  t1=$(now)
  got=$(sha $(($2 * 512)) "$bytes")
  [ "$want" = "$got" ] || { echo "afdisk: moved bytes differ ($want vs $got)" >&2; exit 1; }
  sfdisk --verify "$loop" >/dev/null
  python3 - "$work/apply.json" "$3" >&2 <<'PY'
import json, sys
t = open(sys.argv[1]).read()
i = t.rfind("\n{\n")
o = json.loads(t[i + 1:] if i >= 0 else t)
m = o["moved"]
print(f"    afdisk's own figure (journal in {sys.argv[2]}): {m['seconds']:.2f} s from marking to the new table, {m['bytes_per_sec']/1e6:.1f} MB/s; mode {m['moves'][0]['mode']}")
PY
  python3 -c "print($t1 - $t0)"
}

run_sfdisk() { # $1 = old start, $2 = new start, $3.. extra sfdisk options
  local want got t0 t1 a b
  a=$1; b=$2; shift 2
  want=$(sha $((a * 512)) "$bytes")
  dropc; t0=$(now)
  if ! echo "$b,$secs" | sfdisk -q --no-reread --no-tell-kernel --move-data "$@" -N 1 "$loop" >"$work/sfdisk.log" 2>&1; then
    echo "sfdisk refused the move: $(grep -v Re-reading "$work/sfdisk.log" | head -1)" >&2
    echo nan
    return
  fi
  sync; t1=$(now)
  got=$(sha $((b * 512)) "$bytes")
  [ "$want" = "$got" ] || { echo "sfdisk: moved bytes differ" >&2; exit 1; }
  python3 -c "print($t1 - $t0)"
}

run_dd() { # $1 = from byte, $2 = to byte
  local t0 t1
  dropc; t0=$(now)
  dd if="$loop" of="$loop" bs=1M iflag=skip_bytes,count_bytes,direct oflag=seek_bytes,direct \
     skip="$1" seek="$2" count="$bytes" conv=notrunc,fsync status=none
  t1=$(now)
  python3 -c "print($t1 - $t0)"
}

echo "move_vs_dd: $size_mib MiB, loop --direct-io=on over $(df --output=source,fstype "$work" | tail -1), afdisk $bin"
echo "  journal on the same disk: $work/backups; on another device: $jdir/backups ($jloop over $jimg, tmpfs)"
mbr="label: dos
start=63, size=$secs, type=83
"
fresh "$mbr" 63
t_af=$(run_afdisk 63 2048 "$work/backups")
fresh "$mbr" 63
t_aj=$(run_afdisk 63 2048 "$jdir/backups")
fresh "$mbr" 63
t_dd=$(run_dd $((63 * 512)) $(((63 + secs + 4096) * 512)))
fresh "$mbr" 63
t_sf=$(run_sfdisk 63 2048)
echo "A. 63 -> 2048 (toward the end by 1985 sectors)"
report "  afdisk apply, journal on the same disk" "$t_af"
report "  afdisk apply, journal on another device" "$t_aj"
report "  dd direct, same bytes, non-overlapping" "$t_dd"
report "  sfdisk --move-data" "$t_sf"
python3 -c "import math; a,j,d,s=$t_af,$t_aj,$t_dd,float('$t_sf'); print(f'  afdisk/dd throughput {d/a:.2f}x (journal on another device {d/j:.2f}x), ' + ('sfdisk refused' if math.isnan(s) else f'sfdisk time / afdisk time {s/a:.2f} ({s/j:.2f})'))"

# Partition 2 right behind partition 1: the move cannot go forward, so it is the 1-sector shift.
gpt="label: gpt
start=2049, size=$secs, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4
start=$((2049 + secs)), size=2048, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4
"
fresh "$gpt" 2049
t_af=$(run_afdisk 2049 2048 "$work/backups")
fresh "$gpt" 2049
t_aj=$(run_afdisk 2049 2048 "$jdir/backups")
fresh "$gpt" 2049
t_dd=$(run_dd $((2049 * 512)) $((2048 * 512)))
fresh "$gpt" 2049
t_sf=$(run_sfdisk 2049 2048)
echo "B. 2049 -> 2048 (toward the start by 1 sector)"
report "  afdisk apply, journal on the same disk" "$t_af"
report "  afdisk apply, journal on another device" "$t_aj"
report "  dd direct in place" "$t_dd"
report "  sfdisk --move-data" "$t_sf"
python3 -c "import math; a,j,d,s=$t_af,$t_aj,$t_dd,float('$t_sf'); print(f'  afdisk/dd throughput {d/a:.2f}x (journal on another device {d/j:.2f}x), ' + ('sfdisk refused' if math.isnan(s) else f'sfdisk time / afdisk time {s/a:.2f} ({s/j:.2f})'))"

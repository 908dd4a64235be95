#!/usr/bin/env bash
# Throughput of afdisk's data move (issue 14) against the peers, on a loop device with --direct-io=on over a
# fully written file on a real disk (not tmpfs: flushes must cost what they cost), caches dropped before each run:
#   A. right move: MBR (sfdisk) partition of SIZE MiB at sector 63 holding ext4, partition 2 where the move to
#      2048 ends (so the realign cannot go further) → 2048 (a shift of 1985 sectors: journaled windows of 32 MiB). afdisk plan --realign + apply (marking, copy, verification, new table, e2fsck -fn) against
#      dd iflag=direct oflag=direct conv=notrunc,fsync copying the same bytes to a non-overlapping place (dd cannot
#      copy toward the end in place; the whole footprint), and against e2image (below).
#   B. left move: GPT (sgdisk) partition at 2049 → 2048 (journaled mode): against dd copying in place 512 bytes
#      toward the start (bs=1M, byte offsets; the whole footprint) and e2image.
#   C. far move (issue 24): case A without partition 2: the realign places it one window (32 MiB) further than
#      2048, at 33 MiB (sector 67584), so it moves in shift mode (no window copied through the journal): against
#      the same dd and e2image to 67584.
# Each afdisk run also prints the plan's time estimate (from its probe of the disk and of the journal's
# directory) beside the apply's wall time, for the ±30 % the issue asks of it.
# Fill levels (issue 24): each case runs with the ext4 10 %, 50 % and 90 % full (files of random bytes put in
# by mkfs.ext4 -d), since afdisk copies only the blocks the filesystem uses (its used-block map) while dd copies the
# whole footprint. `e2image -ra -p -o SRC -O DST DEV` (GParted's in-place ext move: used blocks only, no journal,
# no verification, backup superblocks left stale) is timed beside them on the same layouts.
# Every run's result is checked: e2fsck -fn clean at the new place and every file's sha256 equal to the one
# written (read through a read-only mount of the moved partition); dd's copy by the moved bytes' sha256.
# afdisk runs twice per case, with its journal (AFDISK_BACKUP_DIR) in two places:
#   - "journal on the same disk": $work on /var/tmp, the same physical disk as the image (here both on /dev/vda),
#     so each journal commit competes with the copy on one device. Real use never does this (afdisk refuses a
#     journal on the moved disk itself; it is normally on the system disk).
#   - "journal on another device": an ext4 on a second loop device over a file in /dev/shm, mounted, standing for
#     a separate fast disk (the system disk's SSD): what real use looks like. Its flushes cost next to nothing,
#     so this variant is the favourable bound; the truth for a real system disk lies between the two.
# Filesystems (issue 24): --fs ext4 (default), xfs, vfat (FAT32) or ntfs. ext4 is made at its offset by
# mkfs.ext4 -d; the others on a loop device over the partition, filled through a mount (ntfs-3g for NTFS; mtools
# for FAT32, which needs no kernel module), and
# checked after the move by their checker (xfs_repair -n, fsck.fat -n, ntfsfix -n) and every file's sha256.
# e2image runs for ext4 only. --cases picks the cases (default ABC).
# Usage: tests/bench/move_vs_dd.sh [--fs FS] [--cases ABC] [path/to/afdisk] [SIZE_MIB] [FILL%...]
#   (root; default target/release/afdisk, 1024 MiB, fills 10 50 90)
set -euo pipefail
shopt -s inherit_errexit
fs=ext4
cases=ABC
while [ $# -gt 0 ]; do
  case $1 in
    --fs) fs=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    *) break ;;
  esac
done
case $fs in
  ext4) tools="mkfs.ext4 e2fsck e2image" ;;
  xfs) tools="mkfs.xfs xfs_repair" ;;
  vfat) tools="mkfs.fat fsck.fat mcopy" ;;
  ntfs) tools="mkntfs ntfsfix ntfs-3g" ;;
  *) echo "move_vs_dd: --fs takes ext4, xfs, vfat or ntfs" >&2; exit 2 ;;
esac
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/afdisk}
size_mib=${2:-1024}
shift $(( $# > 2 ? 2 : $# ))
fills=${*:-10 50 90}
# shellcheck source=tests/bench/move_common.sh
. "$(dirname "$0")/move_common.sh"
# shellcheck disable=SC2086 # $tools is a list of words
bench_needs move_vs_dd "$bin" losetup sfdisk sgdisk mkfs.ext4 $tools dd sha256sum python3

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

fill=0
filesdir=$work/files
make_files() { # $1 = percent of the filesystem's room to fill (the partition less 1/16 for ext4's metadata): files of 1-8 MiB
  fill_files "$filesdir" "$bytes" "$1"
  (cd "$filesdir" && sha256sum f* >"$work/files.sha")
}

fresh() { # $1 = label script for sfdisk (stdin), $2 = partition start sector
  losetup -d "$loop" 2>/dev/null || true
  rm -f "$img"
  # Fully written, so reads are real reads (unwritten extents read as zeros without I/O).
  dd if=/dev/urandom of="$img" bs=4M count=$((total_mib / 4)) status=none
  # Past the partition the free space holds zeros (written, so still real reads): afdisk places a move further
  # than the nearest start (case C) only over free sectors that hold no data.
  dd if=/dev/zero of="$img" bs=1M seek="$size_mib" count=$((total_mib - size_mib)) conv=notrunc status=none
  loop=$(losetup -f --show --direct-io=on "$img")
  wipefs -q -a "$loop" >/dev/null 2>&1 || true
  dd if=/dev/zero of="$loop" bs=1M count=1 conv=notrunc status=none
  printf '%s' "$1" | sfdisk -q "$loop" >/dev/null
  if [ "$fs" = ext4 ]; then
    # No reserved blocks (-m 0): 90 % of the partition in files fits beside the metadata.
    mkfs.ext4 -q -F -E offset=$(($2 * 512)),lazy_itable_init=1 -m 0 -d "$filesdir" "$loop" $((bytes / 1024)) >/dev/null
  else
    make_other "$2"
  fi
  sync
}

# The filesystem $fs (not ext4) at sector $1, filled through a mount of a loop device over the partition.
make_other() {
  local lo mnt=$work/mnt
  lo=$(losetup -f --show -o $(($1 * 512)) --sizelimit "$bytes" "$loop")
  case $fs in
    xfs) mkfs.xfs -q -f "$lo" ;;
    vfat) mkfs.fat -F 32 -h "$1" "$lo" >/dev/null ;;
    ntfs) mkntfs -Q -F -q -p "$1" -H 255 -S 63 "$lo" >/dev/null ;;
  esac
  if [ "$fs" = vfat ]; then
    # mtools: no kernel vfat module needed.
    mcopy -i "$lo" "$filesdir"/f* ::/
    losetup -d "$lo"; return
  fi
  mkdir -p "$mnt"
  if [ "$fs" = ntfs ]; then ntfs-3g "$lo" "$mnt"; else mount "$lo" "$mnt"; fi
  cp "$filesdir"/f* "$mnt"/
  umount "$mnt"; losetup -d "$lo"
}

# The checker of $fs on the loop device $1: its exit status.
fsck_of() {
  case $fs in
    ext4) e2fsck -fn "$1" ;;
    xfs) xfs_repair -n "$1" ;;
    vfat) fsck.fat -n "$1" ;;
    ntfs) ntfsfix -n "$1" ;;
  esac
}

# The filesystem at sector $1: its checker clean and every file as written (read-only mount of a loop over it).
check_fs() {
  local lo mnt=$work/mnt
  lo=$(losetup -f --show -r -o $(($1 * 512)) --sizelimit "$bytes" "$loop")
  fsck_of "$lo" >"$work/fsck.log" 2>&1 || { losetup -d "$lo"; echo "$fs check at sector $1: $(tail -3 "$work/fsck.log")" >&2; exit 1; }
  mkdir -p "$mnt"
  if [ "$fs" = vfat ]; then
    # mtools copies the files out (no kernel vfat module needed), compared as the mount's would be.
    rm -rf "$mnt"/*; mcopy -n -i "$lo" '::/*' "$mnt"/
    (cd "$mnt" && sha256sum --quiet -c "$work/files.sha") || { losetup -d "$lo"; echo "files differ at sector $1" >&2; exit 1; }
    rm -rf "$mnt"/*; losetup -d "$lo"; return
  fi
  if [ "$fs" = ntfs ]; then ntfs-3g -o ro "$lo" "$mnt"; else mount -o ro "$lo" "$mnt"; fi
  (cd "$mnt" && sha256sum --quiet -c "$work/files.sha") || { umount "$mnt"; losetup -d "$lo"; echo "files differ at sector $1" >&2; exit 1; }
  umount "$mnt"; losetup -d "$lo"
}

report() {
  if [ "$2" = nan ]; then printf '%-44s %s\n' "$1" "refused"; else printf '%-44s %s\n' "$1" "$(rate "$bytes" "$2")"; fi
}

run_afdisk() { # $1 = old start sector, $2 = new start, $3 = journal directory (AFDISK_BACKUP_DIR)
  local want got t0 t1 name
  local AFDISK_BACKUP_DIR=$3
  export AFDISK_BACKUP_DIR
  name=$(basename "$loop")
  # Caches dropped before the plan too: its probe must read the disk, not the page cache fresh() filled.
  dropc
  "$bin" plan "$loop" --realign -o "$work/plan.json" >"$work/plan.txt"
  local planned estimate
  planned=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['changes'][0]['new_start'])" "$work/plan.json")
  estimate=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['changes'][0]['data_move']['estimate_ms'] or 0)" "$work/plan.json")
  [ "$planned" = "$2" ] || { echo "afdisk planned start $planned, the benchmark expects $2" >&2; exit 1; }
  dropc; t0=$(now)
  "$bin" apply "$loop" --plan "$work/plan.json" --yes --confirm "$name" --json >"$work/apply.json"
  t1=$(now)
  # Each move's retired journal is removed: the next one gets the journal directory's room again.
  rm -f "$3"/*.move-journal*
  check_fs "$2"
  sfdisk --verify "$loop" >/dev/null
  python3 - "$work/apply.json" "$3" >&2 <<'PY'
import json, sys
t = open(sys.argv[1]).read()
i = t.rfind("\n{\n")
o = json.loads(t[i + 1:] if i >= 0 else t)
m = o["moved"]
print(f"    afdisk's own figure (journal in {sys.argv[2]}): {m['seconds']:.2f} s from marking to the new table; mode {m['moves'][0]['mode']}, copied {m['moves'][0]['copied_bytes']} of {m['moves'][0]['bytes']} bytes")
PY
  python3 -c "import sys; e, t = $estimate / 1000, $t1 - $t0; print(f'    plan estimate {e:.2f} s, apply {t:.2f} s: estimate/actual {e / t:.2f}', file=sys.stderr)"
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

run_e2image() { # $1 = from sector, $2 = to sector: GParted's in-place ext move (one device argument)
  local t0 t1
  dropc; t0=$(now)
  e2image -ra -p -o $(($1 * 512)) -O $(($2 * 512)) "$loop" >/dev/null 2>&1
  sync; t1=$(now)
  check_fs "$2"
  python3 -c "print($t1 - $t0)"
}

ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }

echo "move_vs_dd: $size_mib MiB $fs, fills $fills %, cases $cases, loop --direct-io=on over $(df --output=source,fstype "$work" | tail -1), afdisk $bin"
echo "  journal on the same disk: $work/backups; on another device: $jdir/backups ($jloop over $jimg, tmpfs)"
case $fs in
  ext4|xfs) mbr_type=83; gpt_type=0FC63DAF-8483-4772-8E79-3D69D8477DE4 ;;
  vfat) mbr_type=c; gpt_type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7 ;;
  ntfs) mbr_type=7; gpt_type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7 ;;
esac
mbr="label: dos
start=63, size=$secs, type=$mbr_type
start=$((2048 + secs)), size=2048, type=83
"
mbr_far="label: dos
start=63, size=$secs, type=$mbr_type
"
far=67584
# Partition 2 right behind partition 1: the move cannot go forward, so it is the 1-sector shift.
gpt="label: gpt
start=2049, size=$secs, type=$gpt_type
start=$((2049 + secs)), size=2048, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4
"
# One case: $1 = title, $2 = label script, $3 = old start, $4 = new start, $5 = dd's from byte, $6 = dd's to byte,
# $7 = what dd copies.
one_case() {
  local t_af t_aj t_dd t_e2=""
  fresh "$2" "$3"; t_af=$(run_afdisk "$3" "$4" "$work/backups")
  fresh "$2" "$3"; t_aj=$(run_afdisk "$3" "$4" "$jdir/backups")
  fresh "$2" "$3"; t_dd=$(run_dd "$5" "$6")
  if [ "$fs" = ext4 ]; then fresh "$2" "$3"; t_e2=$(run_e2image "$3" "$4"); fi
  echo "$1, $fs $fill % full"
  report "  afdisk apply, journal on the same disk" "$t_af"
  report "  afdisk apply, journal on another device" "$t_aj"
  report "  $7" "$t_dd"
  if [ -n "$t_e2" ]; then
    report "  e2image -ra -p -o -O (in place)" "$t_e2"
    echo "  afdisk vs dd: $(ratio "$t_dd" "$t_af") (journal on another device $(ratio "$t_dd" "$t_aj")); vs e2image: $(ratio "$t_e2" "$t_af") ($(ratio "$t_e2" "$t_aj"))"
  else
    echo "  afdisk vs dd: $(ratio "$t_dd" "$t_af") (journal on another device $(ratio "$t_dd" "$t_aj"))"
  fi
}
for fill in $fills; do
  make_files "$fill"
  case $cases in *A*)
    one_case "A. 63 -> 2048 (toward the end by 1985 sectors)" "$mbr" 63 2048 $((63 * 512)) $(((63 + secs + 4096) * 512)) \
      "dd direct, whole footprint, non-overlapping" ;;
  esac
  case $cases in *B*)
    one_case "B. 2049 -> 2048 (toward the start by 1 sector)" "$gpt" 2049 2048 $((2049 * 512)) $((2048 * 512)) \
      "dd direct in place, whole footprint" ;;
  esac
  case $cases in *C*)
    one_case "C. 63 -> $far (toward the end by one window: shift mode)" "$mbr_far" 63 "$far" $((63 * 512)) \
      $(((63 + secs + 4096) * 512)) "dd direct, whole footprint, non-overlapping" ;;
  esac
done

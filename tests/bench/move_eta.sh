#!/usr/bin/env bash
# How soon a data move's time left (the ETA of its progress reports) holds (issue 24: "the progress ETA
# converging within the first 10 %"), and the plan's estimate beside the apply's wall time.
# One realign of an ext4 of SIZE MiB that is FILL % full (files of 1-8 MiB of random bytes put in by
# mkfs.ext4 -d), at sector 63 of an MBR disk with a partition right behind it (so the move is the journaled
# 63 -> 2048), on a loop device with --direct-io=on over a sparse file in $MOVE_BENCH_DIR (default /var/tmp).
# `apply --json` prints one progress line per report; each is stamped as it arrives, and for every report the
# ETA it shows is set against the time the copy actually still took (its last report's stamp); the worst miss
# from 5, 10, 20 and 50 % of the copy to 90 % is printed.
# Checked after the move: e2fsck -fn clean at the new place and sfdisk --verify clean.
# Usage: tests/bench/move_eta.sh [path/to/afdisk] [SIZE_MIB] [FILL%]   (root; default target/release/afdisk,
#   4096 MiB, 50 %)
set -euo pipefail
shopt -s inherit_errexit
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/afdisk}
size_mib=${2:-4096}
fill=${3:-50}
# shellcheck source=tests/bench/move_common.sh
. "$(dirname "$0")/move_common.sh"
bench_needs move_eta "$bin" losetup sfdisk mkfs.ext4 e2fsck python3

work=$(mktemp -d "${MOVE_BENCH_DIR:-/var/tmp}/afdisk-move-eta.XXXXXX")
loop=""
cleanup() {
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export AFDISK_BACKUP_DIR=$work/backups
mkdir -p "$AFDISK_BACKUP_DIR"

bytes=$((size_mib * 1024 * 1024))
secs=$((bytes / 512))
fill_files "$work/files" "$bytes" "$fill"
truncate -s $((2 * size_mib + 16))M "$work/disk.img"
loop=$(losetup -f --show --direct-io=on "$work/disk.img")
printf 'label: dos\nstart=63, size=%s, type=83\nstart=%s, size=8192, type=83\n' "$secs" $((2048 + secs)) |
  sfdisk -q "$loop" >/dev/null 2>&1 || true
mkfs.ext4 -q -F -E offset=$((63 * 512)),lazy_itable_init=1 -m 0 -d "$work/files" "$loop" $((bytes / 1024)) >/dev/null
sync
name=$(basename "$loop")

dropc() { sync; echo 3 > /proc/sys/vm/drop_caches; }
dropc
"$bin" plan "$loop" --realign -o "$work/plan.json" >/dev/null
estimate=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['changes'][0]['data_move']['estimate_ms'] or 0)" "$work/plan.json")
dropc
t0=$(date +%s.%N)
"$bin" apply "$loop" --plan "$work/plan.json" --yes --confirm "$name" --json |
  while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$work/stamped"
t1=$(date +%s.%N)
lo=$(losetup -f --show -r -o $((2048 * 512)) --sizelimit "$bytes" "$loop")
e2fsck -fn "$lo" >/dev/null 2>&1 || { losetup -d "$lo"; echo "move_eta: e2fsck at the new place is not clean" >&2; exit 1; }
losetup -d "$lo"
sfdisk --verify "$loop" >/dev/null 2>&1 || { echo "move_eta: sfdisk --verify is not clean" >&2; exit 1; }

python3 - "$work/stamped" "$estimate" "$t0" "$t1" "$size_mib" "$fill" <<'PY'
import json, sys
path, estimate, t0, t1, size, fill = sys.argv[1], int(sys.argv[2]) / 1000, float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
rows = []
for line in open(path):
    stamp, _, text = line.partition(" ")
    try:
        d = json.loads(text)
    except ValueError:
        continue
    if isinstance(d, dict) and d.get("phase") == "copying" and d.get("bytes_total"):
        rows.append((float(stamp), d["bytes_done"] / d["bytes_total"], d.get("eta_seconds")))
if not rows:
    sys.exit("move_eta: the apply printed no copying reports")
end = rows[-1][0]
print(f"move_eta: {size} MiB ext4 {fill} % full, 63 -> 2048; {len(rows)} copying reports over {end - rows[0][0]:.2f} s")
print(f"  plan estimate {estimate:.2f} s, apply {t1 - t0:.2f} s: estimate/actual {estimate / (t1 - t0):.2f}")
first = next((f for _, f, e in rows if e is not None), None)
print(f"  first time left shown at {first * 100:.1f} % of the copy" if first is not None else "  no time left shown")
worst_after = {}
for t, frac, eta in rows:
    left = end - t
    # The last tenth is left out: seconds from the end, a small absolute miss is a large part of what is left.
    if eta is None or left <= 0 or frac > 0.9:
        continue
    err = (eta - left) / left
    for tenth in (5, 10, 20, 50):
        if frac * 100 >= tenth:
            worst_after[tenth] = max(worst_after.get(tenth, 0.0), abs(err))
for tenth, worst in sorted(worst_after.items()):
    print(f"  from {tenth:2d} % to 90 % of the copy: time left within {worst * 100:5.1f} % of the time the copy still took")
PY

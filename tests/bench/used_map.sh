#!/usr/bin/env bash
# How long reading the used-block map takes (issue 24), on a 1 GiB ext4 and a 1 GiB FAT32 image, each about 30%
# full, with the page cache dropped before each read (cold) and again warm; partclone's domain map
# (`partclone.<fs> -D`) is timed beside it, cold, as the peer.
# Usage: tests/bench/used_map.sh [debug|release]   (root: loop mount, drop_caches; default release)
set -euo pipefail
profile=${1:-release}
for t in losetup mkfs.ext4 mkfs.vfat mcopy partclone.ext4 partclone.fat32 mount; do
  command -v "$t" >/dev/null || { echo "used_map: $t is missing" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "used_map: needs root (loop mount, drop_caches)" >&2; exit 1; }
cd "$(dirname "$0")/../.."
flag=(); [ "$profile" = release ] && flag=(--release)
cargo test "${flag[@]}" --test used_blocks --no-run >/dev/null 2>&1

work=$(mktemp -d "${USED_MAP_BENCH_DIR:-/var/tmp}/afdisk-used-map.XXXXXX")
loop=""
cleanup() {
  mountpoint -q "$work/mnt" && umount "$work/mnt"
  [ -n "$loop" ] && losetup -d "$loop"
  rm -rf "$work"
}
trap cleanup EXIT

# ext4: 1 GiB, 300 files of 1 MiB written through a loop mount.
truncate -s 1G "$work/ext4.img"
mkfs.ext4 -q -F "$work/ext4.img"
mkdir "$work/mnt"
loop=$(losetup -f --show "$work/ext4.img")
mount "$loop" "$work/mnt"
for i in $(seq 1 300); do head -c 1M /dev/urandom >"$work/mnt/f$i"; done
umount "$work/mnt"; losetup -d "$loop"; loop=""

# FAT32: 1 GiB, the same files through mtools (no vfat driver needed).
truncate -s 1G "$work/fat32.img"
mkfs.vfat -F 32 "$work/fat32.img" >/dev/null
head -c 1M /dev/urandom >"$work/one"
for i in $(seq 1 300); do mcopy -i "$work/fat32.img" "$work/one" "::/f$i"; done

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
for fs in ext4 fat32; do
  img="$work/$fs.img"
  drop
  cold=$(AFDISK_USED_MAP_IMAGE="$img" cargo test "${flag[@]}" -q --test used_blocks time_map_of_image -- --ignored --nocapture 2>/dev/null | grep '^used_map:')
  warm=$(AFDISK_USED_MAP_IMAGE="$img" cargo test "${flag[@]}" -q --test used_blocks time_map_of_image -- --ignored --nocapture 2>/dev/null | grep '^used_map:')
  drop
  t0=$(date +%s.%N)
  partclone."$fs" -D -s "$img" -o "$work/$fs.map" -L "$work/$fs.log" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "$fs 1 GiB ($profile): afdisk cold: ${cold#used_map: }; warm: ${warm#used_map: }; partclone -D cold: $(python3 -c "print(f'{($t1-$t0)*1000:.0f} ms')")"
done

#!/usr/bin/env bash
# Builds afdisk's bootable rescue image: OUTDIR/afdisk-live.iso, a hybrid ISO that boots as a CD or, written with
# dd to a USB stick, on BIOS and UEFI machines. See assets/live/README.md.
#
#   bash assets/live/build.sh OUTDIR [--afdisk STATIC_BIN] [--with-tools DIR] [--kernel VMLINUZ] [--data-size 8M]
#
# Terms:
#   tree      the ISO 9660 file tree (GRUB's files, boot/vmlinuz, boot/initrd.img, licenses/)
#   initrd    the root filesystem the kernel unpacks into RAM: busybox, the kernel modules, the tools, afdisk
#   data      the small FAT partition (label AFDATA) appended after the ISO, where backups and journals go
#   live id   the ISO's volume modification date (what blkid calls its UUID); /init finds the boot disk by it
#   epoch     SOURCE_DATE_EPOCH (reproducible-builds.org): every date in the image (file times, the FAT volumes,
#             the live id) is this time, so that the same inputs give the same bytes. Default: the time of this
#             repository's last commit (else of this script); set it to override.
# Inputs: Debian packages (linux-image-amd64, busybox-static, grub-pc-bin, grub-efi-amd64-bin, xorriso, mtools,
# dosfstools, zstd, kmod, and the tools' packages) and this repository. The static afdisk comes from --afdisk,
# else $AFDISK_STATIC_BIN. --with-tools DIR: every executable file in DIR (openSeaChest_Format, SeaChest_Lite, …)
# goes into /usr/local/sbin on the image, with the libraries it links.
# Also writes OUTDIR/sizes.txt (bytes by part) and OUTDIR/build-info.txt.
set -euo pipefail

PROG=build.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
note() { printf '%s: %s\n' "$PROG" "$*" >&2; }

OUTDIR= AFDISK=${AFDISK_STATIC_BIN:-} TOOLS_DIR= KERNEL= DATA_SIZE=8M
while [[ $# -gt 0 ]]; do
    case $1 in
        --afdisk) AFDISK=${2:?}; shift 2 ;;
        --with-tools) TOOLS_DIR=${2:?}; shift 2 ;;
        --kernel) KERNEL=${2:?}; shift 2 ;;
        --data-size) DATA_SIZE=${2:?}; shift 2 ;;
        -h|--help) sed -n '2,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        -*) die "unknown option '$1' (see --help)" ;;
        *) [[ -z $OUTDIR ]] || die "one OUTDIR only"; OUTDIR=$1; shift ;;
    esac
done
[[ -n $OUTDIR ]] || die "usage: build.sh OUTDIR [--afdisk BIN] [--with-tools DIR]"
[[ -n $AFDISK && -x $AFDISK ]] || die "no static afdisk: give --afdisk BIN or set AFDISK_STATIC_BIN"
[[ -z $TOOLS_DIR || -d $TOOLS_DIR ]] || die "--with-tools '$TOOLS_DIR' is not a directory"
[[ $DATA_SIZE =~ ^[0-9]+M$ ]] || die "--data-size must look like 8M"

for c in grub-mkrescue:grub-common xorriso:xorriso mformat:mtools mkfs.fat:dosfstools zstd:zstd \
         depmod:kmod cpio:cpio busybox:busybox-static ldd:libc-bin blkid:util-linux; do
    command -v "${c%%:*}" >/dev/null || die "'${c%%:*}' is missing (apt-get install ${c#*:})"
done
[[ -d /usr/lib/grub/i386-pc ]] || die "GRUB's BIOS files are missing (apt-get install grub-pc-bin)"
[[ -d /usr/lib/grub/x86_64-efi ]] || die "GRUB's UEFI files are missing (apt-get install grub-efi-amd64-bin)"
if [[ -z $KERNEL ]]; then
    KERNEL=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -rV | head -n1) || true
fi
[[ -n $KERNEL && -r $KERNEL ]] || die "no readable kernel /boot/vmlinuz-* (apt-get install linux-image-amd64)"
KVER=${KERNEL##*/vmlinuz-}
MODDIR=/lib/modules/$KVER
[[ -r $MODDIR/modules.dep ]] || die "$MODDIR/modules.dep is missing"

if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
    SOURCE_DATE_EPOCH=$(git -C "$HERE" log -1 --format=%ct 2>/dev/null || stat -c %Y "${BASH_SOURCE[0]}")
fi
[[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH must be seconds since 1970, not '$SOURCE_DATE_EPOCH'"
export SOURCE_DATE_EPOCH
# Every file of a tree at the epoch (cpio and xorriso record modification times).
at_epoch() { find "$@" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +; }

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
WORK=$OUTDIR/work
rm -rf "$WORK"
mkdir -p "$WORK"
ROOT=$WORK/root
TREE=$WORK/tree
START=$(date +%s)

# 1. GRUB: grub-mkrescue on a tree holding only grub.cfg makes the BIOS and UEFI boot files; its ISO's UUID is
#    the live id (the GRUB images it made search for it), the epoch, kept when the image is mastered again in
#    step 5.
mkdir -p "$WORK/grubsrc/boot/grub"
cp "$HERE/grub.cfg" "$WORK/grubsrc/boot/grub/grub.cfg"
GRUB_MODULES="linux normal iso9660 serial terminal all_video search echo test configfile fat part_gpt part_msdos"
GRUB_MODULES+=" part_apple part_acorn part_amiga part_bsd part_dfly part_dvh part_plan part_sun part_sunpc"
grub-mkrescue -o "$WORK/grub.iso" --locales= --fonts= --themes= --install-modules="$GRUB_MODULES" \
    "$WORK/grubsrc" -- -volid AFDISK_LIVE -volume_date uuid "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S00)" \
    >"$WORK/grub-mkrescue.log" 2>&1 ||
    { cat "$WORK/grub-mkrescue.log" >&2; die "grub-mkrescue failed"; }
LIVE_ID=$(blkid -p -s UUID -o value "$WORK/grub.iso")
[[ $LIVE_ID =~ ^[0-9]{4}(-[0-9]{2}){6}$ ]] || die "unexpected ISO UUID '$LIVE_ID' from grub-mkrescue"
xorriso -osirrox on -indev "$WORK/grub.iso" -extract / "$TREE" >/dev/null 2>&1 || die "cannot extract GRUB's tree"
chmod -R u+w "$TREE"
rm -f "$TREE/boot.catalog"
# GRUB's EFI image is a FAT volume whose serial mformat draws at random: the epoch's instead (FAT12/16 boot
# sector: extended boot signature 0x29 at byte 0x26, then the 4-byte serial).
[[ $(od -An -tx1 -j 38 -N 1 "$TREE/efi.img" | tr -d ' ') == 29 ]] || die "GRUB's efi.img has no FAT serial at 0x27"
VOLID=$(printf '%08x' $((SOURCE_DATE_EPOCH & 0xffffffff)))
printf "\\x${VOLID:6:2}\\x${VOLID:4:2}\\x${VOLID:2:2}\\x${VOLID:0:2}" |
    dd of="$TREE/efi.img" bs=1 seek=39 conv=notrunc status=none

# 2. The initrd.
# shellcheck source=assets/live/root.sh
. "$HERE/root.sh"
build_root "$ROOT"

# 3. Licenses: the copyright file of every Debian package a file of the image came from, on the ISO (not in RAM).
mkdir -p "$TREE/licenses"
cp "$HERE/../../LICENSE"* "$TREE/licenses/" 2>/dev/null || true
while IFS= read -r pkg; do
    f=/usr/share/doc/${pkg%%:*}/copyright
    [[ -r $f ]] && cp "$f" "$TREE/licenses/${pkg%%:*}.copyright"
done < <(sort -u "$WORK/packages.txt")
if [[ -n $TOOLS_DIR ]]; then
    find "$TOOLS_DIR" -maxdepth 1 -type f \( -iname '*license*' -o -iname '*copying*' -o -iname '*eula*' \) \
        -exec cp {} "$TREE/licenses/" \;
fi

# 4. Kernel and compressed initrd (zstd: the kernel decompresses it fast; xz would need --check=crc32). Level 12:
#    11 s against 85 s for level 19 (measured on a loaded 2-core machine), which saves only 1.7 MB of about 16 MB.
cp "$KERNEL" "$TREE/boot/vmlinuz"
at_epoch "$ROOT"
(cd "$ROOT" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
    cpio --null -o -H newc -R 0:0 --reproducible --quiet) |
    zstd -q -12 -T0 > "$TREE/boot/initrd.img"

# 5. The hybrid image: MBR only (p1 the ISO, p2 a copy of GRUB's EFI image, p3 the FAT data partition), the
#    partitions on 1 MiB boundaries (cylinders of 64 heads x 32 sectors).
truncate -s "$DATA_SIZE" "$WORK/data.img"
# The volume id from the epoch, the label's date fixed (--invariant), the files copied with their epoch times.
mkfs.fat --invariant -n AFDATA -i "$VOLID" "$WORK/data.img" >/dev/null
mkdir -p "$WORK/data/afdisk/backups"
printf 'afdisk rescue stick: backups and move journals are kept in afdisk/backups.\r\n' > "$WORK/data/README.TXT"
at_epoch "$WORK/data"
mcopy -s -m -i "$WORK/data.img" "$WORK/data/afdisk" "$WORK/data/README.TXT" ::/
ISO=$OUTDIR/afdisk-live.iso
rm -f "$ISO"
at_epoch "$TREE"
xorriso -as mkisofs -r -V AFDISK_LIVE --modification-date="${LIVE_ID//-/}" -o "$ISO" \
    -b boot/grub/i386-pc/eltorito.img -no-emul-boot -boot-load-size 4 -boot-info-table --grub2-boot-info \
    --grub2-mbr /usr/lib/grub/i386-pc/boot_hybrid.img -partition_offset 16 \
    -partition_cyl_align all -partition_hd_cyl 64 -partition_sec_hd 32 \
    -eltorito-alt-boot -e efi.img -no-emul-boot \
    -append_partition 2 0xef "$TREE/efi.img" -append_partition 3 0x0c "$WORK/data.img" \
    "$TREE" >"$WORK/xorriso.log" 2>&1 || { cat "$WORK/xorriso.log" >&2; die "xorriso failed"; }
got=$(blkid -p -s UUID -o value "$ISO")
[[ $got == "$LIVE_ID" ]] || die "the ISO's UUID is '$got', not the live id '$LIVE_ID'"

# 6. Sizes by part.
sz() { du -sb --apparent-size "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
{
    printf 'iso %s\n' "$(stat -c %s "$ISO")"
    printf 'kernel %s\n' "$(stat -c %s "$TREE/boot/vmlinuz")"
    printf 'initrd_zstd %s\n' "$(stat -c %s "$TREE/boot/initrd.img")"
    printf 'initrd_raw %s\n' "$(sz "$ROOT")"
    printf 'modules_raw %s\n' "$(sz "$ROOT/lib/modules")"
    printf 'tools_raw %s\n' "$(sz "$ROOT/usr/sbin" "$ROOT/usr/lib" "$ROOT/lib/x86_64-linux-gnu" "$ROOT/lib64" \
        "$ROOT/usr/local/sbin")"
    printf 'busybox_raw %s\n' "$(stat -c %s "$ROOT/bin/busybox")"
    printf 'afdisk_raw %s\n' "$(stat -c %s "$ROOT/usr/local/bin/afdisk")"
    printf 'grub %s\n' "$(sz "$TREE/boot/grub" "$TREE/efi.img")"
    printf 'data_partition %s\n' "$(stat -c %s "$WORK/data.img")"
} > "$OUTDIR/sizes.txt"
{
    printf 'live_id %s\nkernel %s\n' "$LIVE_ID" "$KVER"
    printf 'afdisk %s\n' "$("$AFDISK" --version 2>/dev/null || echo unknown)"
    printf 'vendor_tools %s\n' "$(cat "$WORK/vendor-tools.txt" 2>/dev/null | tr '\n' ' ')"
} > "$OUTDIR/build-info.txt"
(( $(stat -c %s "$ISO") <= 48 * 1024 * 1024 )) ||
    note "warning: $ISO is larger than the 48 MiB budget (see $OUTDIR/sizes.txt)"
rm -rf "$WORK"
note "built $ISO ($(stat -c %s "$ISO") bytes, live id $LIVE_ID) in $(( $(date +%s) - START ))s"

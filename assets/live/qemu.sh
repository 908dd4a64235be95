#!/usr/bin/env bash
# Boots afdisk's rescue image under QEMU (TCG) with the emulated-hardware lab's drives, the guest's first serial
# port on this terminal. Used by tests/live_image.rs and tests/bench/live_boot.sh; handy to try an image by hand.
#
#   bash assets/live/qemu.sh --iso ISO --disks DIR [--firmware bios|uefi] [--media cd|usb] [--stick IMG]
#                            [--image DISK=FILE]... [--mem MiB]
#
# Terms: the *stick* is a raw image file holding the ISO as written by dd (made from ISO, padded to 128 MiB, when
# IMG does not exist; kept across boots, so what the guest wrote to its FAT partition survives a reboot); the
# *drives* are the lab's: SATA 512e (AHCI), SCSI 512e and SCSI 4Kn (virtio-scsi), NVMe (512-byte LBAs), kept in
# DIR as sata512e.img, scsi512e.img, scsi4kn.img, nvme.img (256 MiB sparse files made when missing, or copies of
# --image DISK=FILE). --media cd boots the ISO as an IDE CD (a stick given as well is attached, not booted).
# QEMU reboots when the guest does; the serial line has no QEMU monitor and Ctrl-C goes to the guest.
set -euo pipefail
die() { printf 'qemu.sh: error: %s\n' "$*" >&2; exit 2; }

ISO= DISKS= FIRMWARE=bios MEDIA=cd STICK= MEM=768
declare -A IMAGES=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --iso) ISO=${2:?}; shift 2 ;;
        --disks) DISKS=${2:?}; shift 2 ;;
        --firmware) FIRMWARE=${2:?}; shift 2 ;;
        --media) MEDIA=${2:?}; shift 2 ;;
        --stick) STICK=${2:?}; shift 2 ;;
        --mem) MEM=${2:?}; shift 2 ;;
        --image) IMAGES[${2%%=*}]=${2#*=}; shift 2 ;;
        -h|--help) sed -n '2,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "unknown argument '$1'" ;;
    esac
done
[[ -r $ISO ]] || die "--iso '$ISO' is not readable"
[[ -n $DISKS ]] || die "--disks DIR is required"
case $MEDIA in cd|usb) ;; *) die "--media is cd or usb" ;; esac
mkdir -p "$DISKS"
if [[ $MEDIA == usb && -z $STICK ]]; then STICK=$DISKS/stick.img; fi
if [[ -n $STICK && ! -e $STICK ]]; then
    cp --sparse=always "$ISO" "$STICK"
    truncate -s 128M "$STICK"
fi
for d in sata512e scsi512e scsi4kn nvme; do
    [[ -e $DISKS/$d.img ]] && continue
    if [[ -n ${IMAGES[$d]:-} ]]; then cp --sparse=always "${IMAGES[$d]}" "$DISKS/$d.img"
    else truncate -s 256M "$DISKS/$d.img"; fi
done

qesc() { printf '%s' "${1//,/,,}"; }
drive() { printf 'if=none,id=%s,file=%s,format=raw,cache=unsafe' "$1" "$(qesc "$2")"; }
ARGS=(
    -nodefaults -no-user-config -display none -machine pc -accel tcg -cpu max -m "$MEM" -smp 1
    -chardev stdio,id=s0,signal=off -serial chardev:s0
    -device ahci,id=ahci
    -drive "$(drive dsata "$DISKS/sata512e.img")"
    -device "ide-hd,bus=ahci.0,drive=dsata,logical_block_size=512,physical_block_size=4096,model=AFLAB SATA 512e,serial=AFLAB-SATA-512E"
    -device virtio-scsi-pci,id=scsi0
    -drive "$(drive dscsi512 "$DISKS/scsi512e.img")"
    -device "scsi-hd,bus=scsi0.0,channel=0,scsi-id=0,lun=0,drive=dscsi512,logical_block_size=512,physical_block_size=4096,vendor=AFLAB,product=SCSI 512e,serial=AFLAB-SCSI-512E"
    -drive "$(drive dscsi4k "$DISKS/scsi4kn.img")"
    -device "scsi-hd,bus=scsi0.0,channel=0,scsi-id=1,lun=0,drive=dscsi4k,logical_block_size=4096,physical_block_size=4096,vendor=AFLAB,product=SCSI 4Kn,serial=AFLAB-SCSI-4KN"
    -drive "$(drive dnvme "$DISKS/nvme.img")"
    -device "nvme,id=nvme0,serial=AFLAB-NVME"
    -device "nvme-ns,bus=nvme0,drive=dnvme,nsid=1,logical_block_size=512,physical_block_size=512"
    -device qemu-xhci,id=xhci
)
if [[ $FIRMWARE == uefi ]]; then
    fw=
    for f in /usr/share/ovmf/OVMF.fd /usr/share/OVMF/OVMF.fd /usr/share/qemu/OVMF.fd; do
        [[ -r $f ]] && { fw=$f; break; }
    done
    [[ -n $fw ]] || die "no OVMF firmware (apt-get install ovmf)"
    ARGS+=(-bios "$fw")
elif [[ $FIRMWARE != bios ]]; then
    die "--firmware is bios or uefi"
fi
if [[ $MEDIA == cd ]]; then
    ARGS+=(-drive "if=none,id=cd,file=$(qesc "$ISO"),format=raw,media=cdrom,readonly=on"
           -device ide-cd,bus=ide.1,drive=cd,bootindex=0)
fi
if [[ -n $STICK ]]; then
    boot=
    [[ $MEDIA == usb ]] && boot=,bootindex=0
    ARGS+=(-drive "$(drive stick "$STICK")" -device "usb-storage,bus=xhci.0,drive=stick,serial=AFLIVE-STICK$boot")
fi
exec qemu-system-x86_64 "${ARGS[@]}"

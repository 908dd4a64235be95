# Guest script of the sector-size lab test (tests/lab.rs, lab_sector_size_switch): switches the emulated drives
# with the real tools (nvme-cli, sg_format, hdparm) and records what afdisk reports. Sections: status.*, nvme.*,
# mounted.*, scsi.*, hdparm.*, usb.*. openSeaChest_Format has its own script (openseachest-guest.sh); the
# timings of a switch against the bare tool are a benchmark (tests/bench/tcg_start_cost.sh), not part of a test.
. /lab/lib.sh
export AFDISK_BACKUP_DIR=/tmp/bk
lbs() { cat "/sys/block/${1#/dev/}/queue/logical_block_size"; }
# afj NAME CMD...: like lab_run, but stdout (the JSON) and stderr (plan, streamed tool output) in two sections.
afj() {
    _n=$1; shift
    lab_section "$_n"
    "$@" 2>/tmp/afj.err
    _rc=$?
    lab_section "$_n.rc"; echo "$_rc"
    lab_section "$_n.stderr"; cat /tmp/afj.err
}

lab_run status.nvme /bin/afdisk sector-size "$LAB_NVME" --json
lab_run status.sata /bin/afdisk sector-size "$LAB_SATA_512E" --json
lab_run status.scsi /bin/afdisk sector-size "$LAB_SCSI_512E" --json

# afdisk with nvme-cli: 512 -> 4096 -> 512, each re-probed.
afj nvme.to4096 /bin/afdisk sector-size "$LAB_NVME" --set 4096 --tool nvme --yes --confirm AFLAB-NVME --json
lab_section nvme.kernel4096; lbs "$LAB_NVME"
lab_run nvme.status4096 /bin/afdisk sector-size "$LAB_NVME" --json
afj nvme.to512 /bin/afdisk sector-size "$LAB_NVME" --set 512 --tool nvme --yes --confirm AFLAB-NVME --json
lab_section nvme.kernel512; lbs "$LAB_NVME"

# A mounted namespace is refused, nothing run.
lab_run mounted.mkfs mkdosfs "$LAB_NVME"
mkdir -p /mnt/n
lab_run mounted.mount mount -t vfat -o iocharset=utf8 "$LAB_NVME" /mnt/n
# Only with the namespace mounted: otherwise the switch would run.
if grep -q " /mnt/n " /proc/mounts; then
    lab_run mounted.set /bin/afdisk sector-size "$LAB_NVME" --set 4096 --yes --confirm AFLAB-NVME
    lab_section mounted.kernel; lbs "$LAB_NVME"
    umount /mnt/n
fi

# The SATA disk's own report says it has no SET SECTOR CONFIGURATION, so a plain --set is refused (exit 3);
# with --let-tool-decide, hdparm runs and fails, reported as such, nothing else changed.
lab_run sata.refused /bin/afdisk sector-size "$LAB_SATA_512E" --set 4096 --tool hdparm --yes --confirm AFLAB-SATA-512E
afj hdparm.sata /bin/afdisk sector-size "$LAB_SATA_512E" --set 4096 --tool hdparm --let-tool-decide --yes --confirm AFLAB-SATA-512E --json
lab_section hdparm.kernel; lbs "$LAB_SATA_512E"

# sg_format on the SCSI 512e disk: 512 -> 4096 (QEMU then reports a 32768-byte physical sector).
afj scsi.to4096 /bin/afdisk sector-size "$LAB_SCSI_512E" --set 4096 --tool sg_format --yes --confirm AFLAB-SCSI-512E --json
lab_section scsi.kernel; lbs "$LAB_SCSI_512E"
lab_run scsi.status /bin/afdisk sector-size "$LAB_SCSI_512E" --json

# The USB disk (usb-storage on xHCI) is refused.
usb=
i=0
while [ -z "$usb" ] && [ $i -lt 100 ]; do
    for b in /sys/block/sd*; do
        case "$(readlink -f "$b")" in */usb*) usb=/dev/${b##*/} ;; esac
    done
    [ -n "$usb" ] || { usleep 200000; i=$((i + 1)); }
done
lab_section usb.dev; echo "$usb"
if [ -n "$usb" ]; then
    lab_run usb.set /bin/afdisk sector-size "$usb" --set 4096 --yes --confirm AFLAB-USB
fi
exit 0

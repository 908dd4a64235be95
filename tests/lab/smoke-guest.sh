# afdisk lab smoke test (guest side, busybox sh).  Run with:
#   tests/lab/lab.sh --binary /bin/busybox --script tests/lab/smoke-guest.sh --out /tmp/smoke.out
# Prints named sections (=== name ===), see tests/lab/README.md.
. /lab/lib.sh

# First section: serial -> device mapping.
lab_run disks lab_disk_map

lab_section versions
uname -r
nvme version 2>&1 | head -n 1
hdparm -V 2>&1
sg_readcap -V 2>&1
sfdisk --version 2>&1

# The binary under test arrived intact (the host compares the checksum).
lab_run binary.sha256 sha256sum /bin/afdisk

for tag in sata-512e:$LAB_SATA_512E scsi-512e:$LAB_SCSI_512E scsi-4kn:$LAB_SCSI_4KN nvme:$LAB_NVME; do
    name=${tag%%:*}; dev=${tag#*:}
    lab_section "$name.dev";    echo "$dev"
    lab_section "$name.serial"; lab_serial "${dev#/dev/}"; echo
    lab_run "$name.queue" lab_queue "$dev"
done

# SATA: IDENTIFY DEVICE word 106/117 via ATA pass-through.
lab_section sata-512e.hdparm
hdparm -I "$LAB_SATA_512E" 2>&1 | grep -i 'sector size'

# SCSI: READ CAPACITY(16).
lab_run scsi-512e.readcap sg_readcap -l "$LAB_SCSI_512E"
lab_run scsi-4kn.readcap sg_readcap -l "$LAB_SCSI_4KN"

# NVMe: LBA formats, then switch the namespace to the 4096-byte format.
lab_section nvme.lbaf.before
nvme id-ns -H "$LAB_NVME" | grep '^LBA Format'
lbaf=$(nvme id-ns -H "$LAB_NVME" |
    awk '/^LBA Format/ && /Metadata Size: 0 / && /Data Size: 4096 bytes/ { sub(/^LBA Format +/, ""); sub(/ .*/, ""); print; exit }')
lab_section nvme.lbaf.4096-index; echo "${lbaf:=4}"
# nvme-cli 2.x: --force skips the 10 s "are you sure" countdown.
lab_run nvme.format nvme format "$LAB_NVME" --lbaf="$lbaf" --force
lab_section nvme.lbaf.after
nvme id-ns -H "$LAB_NVME" | grep '^LBA Format'
lab_run nvme.queue.after lab_queue "$LAB_NVME"

# sfdisk: deliberately misaligned partition (start 63 on a 4096-physical disk).
sfdisk_misaligned() { echo 'start=63, size=100000' | sfdisk "$1"; }
lab_run sata-512e.sfdisk-write sfdisk_misaligned "$LAB_SATA_512E"
lab_run sata-512e.sfdisk-json sfdisk --json "$LAB_SATA_512E"
lab_section sata-512e.part1.alignment_offset
cat "/sys/block/${LAB_SATA_512E#/dev/}/${LAB_SATA_512E#/dev/}1/alignment_offset"

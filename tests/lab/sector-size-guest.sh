# Guest script of the sector-size lab test (tests/lab.rs, lab_sector_size_switch): switches the emulated drives
# with the real tools (nvme-cli, sg_format, hdparm, and openSeaChest_Format when passed with --file) and records
# what afdisk reports. Sections: status.*, bare.* (bare nvme format timing), nvme.*, mounted.*, osc.*, scsi.*,
# hdparm.*, usb.*, time.*
. /lab/lib.sh
export AFDISK_BACKUP_DIR=/tmp/bk
nv=${LAB_NVME#/dev/}
up() { cut -d' ' -f1 /proc/uptime; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", b - a }'; }
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

# The bare tool, for the overhead figure: 512 -> 4096 -> 512 (the first pair, kept for its output).
t0=$(up)
lab_run bare.to4096 nvme format "$LAB_NVME" -n 1 --lbaf=4 --force
t1=$(up)
lab_run bare.to512 nvme format "$LAB_NVME" -n 1 --lbaf=0 --force
t2=$(up)
lab_section time.bare
echo "$(secs "$t0" "$t1") $(secs "$t1" "$t2")"

# afdisk with nvme-cli: 512 -> 4096 -> 512, each re-probed.
t0=$(up)
afj nvme.to4096 /bin/afdisk sector-size "$LAB_NVME" --set 4096 --tool nvme --yes --confirm AFLAB-NVME --json
t1=$(up)
lab_section nvme.kernel4096; lbs "$LAB_NVME"
lab_run nvme.status4096 /bin/afdisk sector-size "$LAB_NVME" --json
t2=$(up)
afj nvme.to512 /bin/afdisk sector-size "$LAB_NVME" --set 512 --tool nvme --yes --confirm AFLAB-NVME --json
t3=$(up)
lab_section nvme.kernel512; lbs "$LAB_NVME"
lab_section time.afdisk
echo "$(secs "$t0" "$t1") $(secs "$t2" "$t3")"

# Repetitions for the overhead figure (issue 13): bare and afdisk interleaved, both directions, each timed the
# same way (the command alone, output to a file). time.rep.KIND.DIR: one wall time per repetition.
[ -f /lab/files/afdisk-before ] && chmod 0755 /lab/files/afdisk-before
bt4= ; bt5= ; at4= ; at5= ; ot4= ; ot5= ; bad=
for i in 1 2 3 4 5; do
    t0=$(up); nvme format "$LAB_NVME" -n 1 --lbaf=4 --force >/tmp/r.out 2>&1 || bad="$bad bare4:$i"; t1=$(up)
    bt4="$bt4 $(secs "$t0" "$t1")"
    t0=$(up); nvme format "$LAB_NVME" -n 1 --lbaf=0 --force >/tmp/r.out 2>&1 || bad="$bad bare512:$i"; t1=$(up)
    bt5="$bt5 $(secs "$t0" "$t1")"
    t0=$(up); /bin/afdisk sector-size "$LAB_NVME" --set 4096 --tool nvme --yes --confirm AFLAB-NVME --json >/tmp/r.out 2>&1 || bad="$bad afdisk4:$i"; t1=$(up)
    at4="$at4 $(secs "$t0" "$t1")"
    t0=$(up); /bin/afdisk sector-size "$LAB_NVME" --set 512 --tool nvme --yes --confirm AFLAB-NVME --json >/tmp/r.out 2>&1 || bad="$bad afdisk512:$i"; t1=$(up)
    at5="$at5 $(secs "$t0" "$t1")"
    # An earlier afdisk passed with --file (afdisk-before), timed the same way: the change in the same run.
    if [ -x /lab/files/afdisk-before ]; then
        t0=$(up); /lab/files/afdisk-before sector-size "$LAB_NVME" --set 4096 --tool nvme --yes --confirm AFLAB-NVME --json >/tmp/r.out 2>&1 || bad="$bad before4:$i"; t1=$(up)
        ot4="$ot4 $(secs "$t0" "$t1")"
        t0=$(up); /lab/files/afdisk-before sector-size "$LAB_NVME" --set 512 --tool nvme --yes --confirm AFLAB-NVME --json >/tmp/r.out 2>&1 || bad="$bad before512:$i"; t1=$(up)
        ot5="$ot5 $(secs "$t0" "$t1")"
    fi
done
if [ -x /lab/files/afdisk-before ]; then
    lab_section time.rep.before.to4096; echo $ot4
    lab_section time.rep.before.to512; echo $ot5
fi
lab_section time.rep.bare.to4096; echo $bt4
lab_section time.rep.bare.to512; echo $bt5
lab_section time.rep.afdisk.to4096; echo $at4
lab_section time.rep.afdisk.to512; echo $at5
lab_section time.rep.failed; echo $bad
lab_section time.rep.kernel; lbs "$LAB_NVME"
# Where afdisk's time goes: its start alone, the read-only status, and each step of a switch (AFDISK_TRACE_TIMING).
t0=$(up); /bin/afdisk --version >/dev/null; t1=$(up)
/bin/afdisk sector-size "$LAB_NVME" --tool nvme >/dev/null 2>&1; t2=$(up)
lab_section time.breakdown
echo "start=$(secs "$t0" "$t1") status=$(secs "$t1" "$t2")"
lab_section time.trace.to4096
AFDISK_TRACE_TIMING=1 /bin/afdisk sector-size "$LAB_NVME" --set 4096 --tool nvme --yes --confirm AFLAB-NVME --json 2>&1 >/dev/null | grep afdisk-timing
lab_section time.trace.to512
AFDISK_TRACE_TIMING=1 /bin/afdisk sector-size "$LAB_NVME" --set 512 --tool nvme --yes --confirm AFLAB-NVME --json 2>&1 >/dev/null | grep afdisk-timing
lab_section time.trace.status
AFDISK_TRACE_TIMING=1 /bin/afdisk sector-size "$LAB_NVME" --tool nvme 2>&1 >/dev/null | grep afdisk-timing

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

# openSeaChest_Format 3.4.0 (static, from ../shared/tools), when the host passed it.
if [ -f /lab/files/openSeaChest_Format ]; then
    cp /lab/files/openSeaChest_Format /usr/local/sbin/openSeaChest_Format
    chmod 0755 /usr/local/sbin/openSeaChest_Format
    afj osc.nvme.to4096 /bin/afdisk sector-size "$LAB_NVME" --set 4096 --tool openseachest --yes --confirm AFLAB-NVME --json
    lab_section osc.nvme.kernel4096; lbs "$LAB_NVME"
    afj osc.nvme.to512 /bin/afdisk sector-size "$LAB_NVME" --set 512 --tool openseachest --yes --confirm AFLAB-NVME --json
    lab_section osc.nvme.kernel512; lbs "$LAB_NVME"
    afj osc.sata /bin/afdisk sector-size "$LAB_SATA_512E" --set 4096 --tool openseachest --let-tool-decide --yes --confirm AFLAB-SATA-512E --json
    afj osc.scsi4kn /bin/afdisk sector-size "$LAB_SCSI_4KN" --set 512 --tool openseachest --yes --confirm AFLAB-SCSI-4KN --json
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

# Guest script of the opt-in lab test lab_openseachest_format_switch (tests/lab.rs): openSeaChest_Format, the real
# binary the host passed with --file (AFDISK_OPENSEACHEST), switches the NVMe namespace 512 -> 4096 -> 512 by
# format index, and says "not supported" (exit 4) on the SATA and SCSI disks. Sections: osc.present, osc.*
. /lab/lib.sh
export AFDISK_BACKUP_DIR=/tmp/bk
lbs() { cat "/sys/block/${1#/dev/}/queue/logical_block_size"; }
# afj NAME CMD...: stdout (the JSON) and stderr (plan, streamed tool output) in two sections, and the exit status.
afj() {
    _n=$1; shift
    lab_section "$_n"
    "$@" 2>/tmp/afj.err
    _rc=$?
    lab_section "$_n.rc"; echo "$_rc"
    lab_section "$_n.stderr"; cat /tmp/afj.err
}
lab_section osc.present
if [ ! -f /lab/files/openSeaChest_Format ]; then
    echo "no /lab/files/openSeaChest_Format"
    exit 1
fi
echo yes
cp /lab/files/openSeaChest_Format /usr/local/sbin/openSeaChest_Format
chmod 0755 /usr/local/sbin/openSeaChest_Format
afj osc.nvme.to4096 /bin/afdisk sector-size "$LAB_NVME" --set 4096 --tool openseachest --yes --confirm AFLAB-NVME --json
lab_section osc.nvme.kernel4096; lbs "$LAB_NVME"
afj osc.nvme.to512 /bin/afdisk sector-size "$LAB_NVME" --set 512 --tool openseachest --yes --confirm AFLAB-NVME --json
lab_section osc.nvme.kernel512; lbs "$LAB_NVME"
afj osc.sata /bin/afdisk sector-size "$LAB_SATA_512E" --set 4096 --tool openseachest --let-tool-decide --yes --confirm AFLAB-SATA-512E --json
afj osc.scsi4kn /bin/afdisk sector-size "$LAB_SCSI_4KN" --set 512 --tool openseachest --yes --confirm AFLAB-SCSI-4KN --json
exit 0

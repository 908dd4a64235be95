# Guest script of the lab test (tests/lab.rs): runs the static afdisk against the emulated drives.
# Sections: map, inspect.<serial>, list, part.sata, inspect.sata-part, check.sata-part, plan/apply/restore on the SATA
# drive (apply.sata-held: BLKPG fallback), plan/apply on the 4Kn SCSI drive, realign.* (the data move on the SCSI
# 512e drive, when the host passed its image and /lab/files/realign.sums), tui
. /lab/lib.sh
lab_section map
lab_disk_map
for v in SATA_512E SCSI_512E SCSI_4KN NVME; do
    eval dev=\$LAB_$v
    lab_run "inspect.$v" /bin/afdisk inspect "$dev" --json
done
lab_run list /bin/afdisk list --json
# A 512e SATA drive partitioned by sfdisk with an XP-style start at 63.
printf 'label: dos\nstart=63, size=100000, type=83\nstart=102400, size=100000, type=83\n' > /tmp/t
lab_run part.sata sfdisk -q "$LAB_SATA_512E" < /tmp/t
lab_run inspect.sata-part /bin/afdisk inspect "$LAB_SATA_512E" --json
lab_run text.sata-part /bin/afdisk inspect "$LAB_SATA_512E"
lab_run check.sata-part /bin/afdisk check "$LAB_SATA_512E"
# Apply on a real (emulated) drive, confirmed by its serial. Partition 2 is held open, so the kernel refuses a
# whole-table re-read (BLKRRPART: EBUSY) and afdisk must update partition 1 alone (BLKPG).
sata=${LAB_SATA_512E#/dev/}
export AFDISK_BACKUP_DIR=/tmp/bk
lab_run plan.sata /bin/afdisk plan "$LAB_SATA_512E" --realign -o /tmp/p.json --json
lab_run apply.sata-wrong /bin/afdisk apply "$LAB_SATA_512E" --plan /tmp/p.json --yes --confirm AFLAB-SCSI-4KN
exec 3<"/dev/${sata}2"
lab_run apply.sata-held /bin/afdisk apply "$LAB_SATA_512E" --plan /tmp/p.json --yes --confirm AFLAB-SATA-512E --json
lab_section kernel.after-apply
cat "/sys/block/$sata/${sata}1/start" "/sys/block/$sata/${sata}1/size" "/sys/block/$sata/${sata}2/start"
exec 3<&-
backup=$(ls /tmp/bk/*)
# Nothing is held now: the undo goes through a full re-read.
lab_run restore.sata /bin/afdisk restore "$LAB_SATA_512E" "$backup" --yes --confirm AFLAB-SATA-512E --json
lab_section kernel.after-restore
cat "/sys/block/$sata/${sata}1/start" "/sys/block/$sata/${sata}1/size"
# A fresh GPT layout on the 4Kn SCSI drive: the kernel must see it at once, and sfdisk must accept it.
k4=${LAB_SCSI_4KN#/dev/}
printf '[[partition]]\nname = "a"\ntype = "linux"\nsize = "64MiB"\n[[partition]]\nname = "b"\ntype = "linux"\nsize = "rest"\n' > /tmp/two.toml
lab_run plan.4kn /bin/afdisk plan "$LAB_SCSI_4KN" --preset-file /tmp/two.toml -o /tmp/f.json --json
lab_run apply.4kn /bin/afdisk apply "$LAB_SCSI_4KN" --plan /tmp/f.json --yes --confirm AFLAB-SCSI-4KN --json
lab_section kernel.4kn
for p in /sys/block/$k4/${k4}[0-9]*; do echo "${p##*/} $(cat "$p/start") $(cat "$p/size")"; done
lab_run verify.4kn sfdisk --verify "$LAB_SCSI_4KN"
# Issue 14's realign with a data move on the SCSI 512e drive: the host made its MBR (sfdisk) with ext4 at sector
# 63 holding files whose checksums are in realign.sums. Plan, apply (confirmed by the serial), then the moved ext4
# must mount with the same files, pass e2fsck -fn, and the table sfdisk --verify.
if [ -f /lab/files/realign.sums ]; then
    r=${LAB_SCSI_512E#/dev/}
    export AFDISK_BACKUP_DIR=/tmp/bk-realign
    lab_run realign.before sfdisk -d "$LAB_SCSI_512E"
    lab_run realign.plan /bin/afdisk plan "$LAB_SCSI_512E" --realign -o /tmp/rp.json --json
    t0=$(cut -d' ' -f1 /proc/uptime)
    afj_rc=0
    lab_section realign.apply
    /bin/afdisk apply "$LAB_SCSI_512E" --plan /tmp/rp.json --yes --confirm AFLAB-SCSI-512E --json 2>/tmp/ra.err || afj_rc=$?
    lab_section realign.apply.rc; echo "$afj_rc"
    lab_section realign.apply.stderr; cat /tmp/ra.err
    t1=$(cut -d' ' -f1 /proc/uptime)
    lab_section realign.seconds; awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
    lab_section realign.kernel; cat "/sys/block/$r/${r}1/start" "/sys/block/$r/${r}1/size"
    lab_run realign.verify sfdisk --verify "$LAB_SCSI_512E"
    lab_run realign.after sfdisk -d "$LAB_SCSI_512E"
    if command -v e2fsck >/dev/null; then
        lab_run realign.fsck e2fsck -fn "/dev/${r}1"
    fi
    mkdir -p /mnt/r
    lab_run realign.mount mount -t ext4 -o ro "/dev/${r}1" /mnt/r
    lab_section realign.sums
    (cd /mnt/r && sha256sum -c /lab/files/realign.sums 2>&1)
    lab_section realign.sums.rc; (cd /mnt/r && sha256sum -c /lab/files/realign.sums >/dev/null 2>&1); echo $?
    umount /mnt/r 2>/dev/null
    export AFDISK_BACKUP_DIR=/tmp/bk
fi
# The TUI on the 512e drive, through a pty: open the disk view, zoom into partition 1, quit. `script -e` exits
# with afdisk's status. tui.text is the terminal output with every byte outside printable ASCII and newline made
# a space (a range: busybox tr reads `[:print:]` as a literal set of characters); tui.hex the raw bytes.
tui_rc=0
(sleep 4; printf z; sleep 3; printf q) | SHELL=/bin/sh TERM=linux NO_COLOR=1 \
    script -q -e -c "stty cols 80 rows 24; /bin/afdisk $LAB_SATA_512E" /dev/null > /tmp/tui.out 2>&1 || tui_rc=$?
lab_section tui.rc
echo "$tui_rc"
lab_section tui.text
tr -c '\n -~' ' ' < /tmp/tui.out
echo  # the capture ends without a newline: the next section header must start a line
# The raw bytes, in hex: the host replays them on an 80x24 screen (ratatui redraws only the cells that change, so
# the text above has words broken where a cell kept its character).
lab_section tui.hex
od -An -tx1 -v /tmp/tui.out
exit 0

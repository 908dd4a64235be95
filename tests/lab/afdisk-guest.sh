# Guest script of the lab test (tests/lab.rs): runs the static afdisk against the emulated drives.
# Sections: map, inspect.<serial>, list, part.sata, inspect.sata-part, check.sata-part
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
# The TUI on the 512e drive, through a pty: open the disk view, zoom into partition 1, quit.
(sleep 4; printf z; sleep 3; printf q) | SHELL=/bin/sh TERM=linux NO_COLOR=1 \
    script -q -c "stty cols 80 rows 24; /bin/afdisk $LAB_SATA_512E" /dev/null > /tmp/tui.out 2>&1
lab_section tui.rc
echo $?
lab_section tui.text
tr -c '[:print:]\n' ' ' < /tmp/tui.out
exit 0

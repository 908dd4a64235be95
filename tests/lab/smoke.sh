#!/usr/bin/env bash
# Host side of the lab smoke test: boots the lab with a static busybox as the
# "binary under test", runs smoke-guest.sh and checks the results.
#   tests/lab/smoke.sh [--workdir DIR] [--out FILE]   (extra args go to lab.sh)
set -euo pipefail
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${TMPDIR:-/tmp}/afdisk-lab-smoke.out
args=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --out) OUT=$2; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
BUSYBOX=${LAB_BUSYBOX:-/bin/busybox}

rc=0
"$LAB_DIR/lab.sh" --binary "$BUSYBOX" --script "$LAB_DIR/smoke-guest.sh" --out "$OUT" \
    ${args[@]+"${args[@]}"} || rc=$?
if ((rc > 1)); then echo "smoke: lab.sh failed (exit $rc)" >&2; exit "$rc"; fi

fails=0
sec() { "$LAB_DIR/sections.sh" "$OUT" "$1"; }
expect() { # expect SECTION EXTENDED-REGEX [description]
    if sec "$1" | grep -Eq -- "$2"; then
        printf 'ok    %-34s %s\n' "$1" "$2"
    else
        printf 'FAIL  %-34s %s\n' "$1" "$2"; fails=$((fails + 1))
        sec "$1" | sed 's/^/        | /' || echo "        (section missing)"
    fi
}
for s in AFLAB-SATA-512E AFLAB-SCSI-512E AFLAB-SCSI-4KN AFLAB-NVME; do
    expect disks "^$s /dev/(sd[a-z]+|nvme[0-9]+n[0-9]+)$"
done
expect binary.sha256 "^$(sha256sum < "$BUSYBOX" | cut -c1-64) "
for d in sata-512e scsi-512e; do
    expect "$d.queue" '^logical_block_size=512$'
    expect "$d.queue" '^physical_block_size=4096$'
done
expect scsi-4kn.queue '^logical_block_size=4096$'
expect scsi-4kn.queue '^physical_block_size=4096$'
expect nvme.queue '^logical_block_size=512$'
for d in sata-512e scsi-512e scsi-4kn nvme; do
    expect "$d.serial" "^AFLAB-$(tr a-z A-Z <<< "$d")$"
done
expect sata-512e.hdparm 'Logical +Sector size: +512 bytes'
expect sata-512e.hdparm 'Physical +Sector size: +4096 bytes'
expect scsi-512e.readcap 'Logical block length=512 bytes'
expect scsi-512e.readcap 'physical block length=4096 bytes'
expect scsi-4kn.readcap 'Logical block length=4096 bytes'
expect nvme.lbaf.before 'Data Size: 512 bytes.*\(in use\)'
expect nvme.format.rc '^0$'
expect nvme.lbaf.after 'Data Size: 4096 bytes.*\(in use\)'
expect nvme.queue.after '^logical_block_size=4096$'
expect sata-512e.sfdisk-write.rc '^0$'
expect sata-512e.sfdisk-json '"start": 63,'
expect sata-512e.part1.alignment_offset '^512$'
expect sata-512e.sfdisk-write 'does not start on physical sector boundary'

if ((fails)); then echo "smoke: $fails check(s) failed; output in $OUT" >&2; exit 1; fi
if ((rc)); then echo "smoke: guest script exited $(cat "$OUT.rc")" >&2; exit 1; fi
echo "smoke: all checks passed (output in $OUT)"

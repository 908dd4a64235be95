# afdisk lab: helpers for guest scripts.  Source with:   . /lab/lib.sh
# (busybox ash; POSIX sh only).  See tests/lab/README.md.

LAB_SERIALS="AFLAB-SATA-512E AFLAB-SCSI-512E AFLAB-SCSI-4KN AFLAB-NVME"

# lab_section NAME  -- start a named result section ("=== NAME ===").
# NAME: letters, digits and . _ - : + @ only.
lab_section() {
    case "$1" in
        ''|.|..|*[!A-Za-z0-9._:+@-]*) echo "lab_section: bad section name '$1'" >&2; return 2 ;;
    esac
    printf '=== %s ===\n' "$1"
}

# lab_run NAME CMD [ARGS...] -- section NAME holding CMD's stdout+stderr,
# followed by section NAME.rc holding its exit status.  Returns that status.
lab_run() {
    _lab_name=$1; shift
    lab_section "$_lab_name" || return 2
    "$@" 2>&1
    _lab_rc=$?
    lab_section "$_lab_name.rc"
    echo "$_lab_rc"
    return "$_lab_rc"
}

# lab_serial BLOCKNAME -- serial number of /sys/block/BLOCKNAME (or nothing).
#   NVMe: controller attribute device/serial;  SCSI/SATA: VPD page 0x80
#   (device/vpd_pg80, 4-byte header); fallback: last word of device/wwid.
lab_serial() {
    _d=/sys/block/$1/device
    if [ -r "$_d/serial" ]; then
        cat "$_d/serial"
    elif [ -r "$_d/vpd_pg80" ]; then
        tail -c +5 "$_d/vpd_pg80"
    elif [ -r "$_d/wwid" ]; then
        sed 's/.* //' "$_d/wwid"
    fi 2>/dev/null | tr -d '\000\n' | sed 's/^ *//; s/ *$//'
}

# lab_dev SERIAL -- /dev/NAME of the whole disk with that serial (or nothing).
lab_dev() {
    for _b in /sys/block/*; do
        _b=${_b##*/}
        case "$_b" in loop*|ram*|zram*|dm-*|md*|sr*) continue ;; esac
        if [ "$(lab_serial "$_b")" = "$1" ]; then echo "/dev/$_b"; return 0; fi
    done
    return 1
}

# lab_disk_map -- "SERIAL /dev/NAME" for each lab disk.
lab_disk_map() {
    for _s in $LAB_SERIALS; do
        echo "$_s $(lab_dev "$_s")"
    done
}

# lab_queue DEV -- key=value lines from /sys/block/<dev>/queue and the size.
lab_queue() {
    _n=${1#/dev/}
    for _k in logical_block_size physical_block_size minimum_io_size optimal_io_size; do
        echo "$_k=$(cat "/sys/block/$_n/queue/$_k")"
    done
    echo "alignment_offset=$(cat "/sys/block/$_n/alignment_offset")"
    echo "size_512=$(cat "/sys/block/$_n/size")"
}

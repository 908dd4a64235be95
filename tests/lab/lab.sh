#!/usr/bin/env bash
# afdisk emulated-hardware lab: boot a QEMU guest with four emulated Advanced
# Format drives and run a guest script against them.  See tests/lab/README.md.
#
#   tests/lab/lab.sh --binary PATH --script GUEST_SCRIPT --out OUTPUT_FILE
#                    [--workdir DIR] [--timeout SECS] [--disk-size SIZE]
#                    [--file PATH]... [--image DISK=IMAGE]... [--kernel VMLINUZ]
#                    [--keep] [--verbose]
#   tests/lab/lab.sh --prepare [--workdir DIR] [--kernel VMLINUZ]
#
# Exit status: 0 guest script exited 0 | 1 guest script exited non-zero
#              2 usage error | 3 missing prerequisite | 4 lab/guest failure
# Files written: OUTPUT_FILE (script output), OUTPUT_FILE.rc (its exit status,
# or "timeout"/"error"), OUTPUT_FILE.console (guest serial console log).
set -euo pipefail

readonly PROG=lab.sh
readonly EX_SCRIPT=1 EX_USAGE=2 EX_MISSING=3 EX_LAB=4
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly LAB_DIR
# Vendor tools live in sbin on Debian; a CI user's PATH may not have it.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

QEMU=${LAB_QEMU:-qemu-system-x86_64}
ACCEL=${LAB_ACCEL:-tcg}
MEM=${LAB_MEM:-512}
SMP=${LAB_SMP:-1}
if [[ $ACCEL == kvm* ]]; then CPU=${LAB_CPU:-host}; else CPU=${LAB_CPU:-max}; fi
KERNEL_APPEND=${LAB_KERNEL_APPEND:-}
# QEMU 7.2 AHCI quirk: after an ATA pass-through command that QEMU aborts
# (hdparm -I sends one), the next NCQ read completes with a stale ABRT, libata
# EH retries it and fail-fast readahead logs "I/O error, dev sda, sector 0".
# Without NCQ this does not happen.  guest/init hands it to insmod libata.
ATA_PARAMS=${LAB_ATA_PARAMS-libata.force=noncq}

# Serial numbers (also in guest/lib.sh) -------------------------------------
readonly SER_SATA=AFLAB-SATA-512E SER_SCSI512=AFLAB-SCSI-512E
readonly SER_SCSI4K=AFLAB-SCSI-4KN SER_NVME=AFLAB-NVME

# Kernel modules: required ones must exist (or be built in); their
# dependencies come from modules.dep.  Names use '_' for '-'.
readonly REQUIRED_MODULES=(scsi_mod sd_mod sg libata libahci ahci
    virtio virtio_ring virtio_pci virtio_scsi nvme_core nvme)
# crc*_generic: soft dependencies of crc-t10dif/crc64-rocksoft (sd_mod, nvme).
# xhci_pci and usb_storage: the USB disk (sector-size refuses USB-attached drives).
readonly OPTIONAL_MODULES=(crct10dif_generic crc64_rocksoft_generic
    loop fat vfat msdos nls_cp437 nls_iso8859_1 nls_utf8 xhci_pci usb_storage
    crc32c_generic ext4)

# Vendor tools: "command:apt-package".  Copied with their ldd libraries.
readonly REQUIRED_TOOLS=(nvme:nvme-cli hdparm:hdparm sg_readcap:sg3-utils
    sg_inq:sg3-utils sg_format:sg3-utils sfdisk:fdisk script:bsdutils)
readonly OPTIONAL_TOOLS=(sg_vpd sg_sat_identify sg_turs fdisk lsblk blkid
    blockdev partx wipefs e2fsck)

usage() {
    sed -n '2,13s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit "${1:-$EX_USAGE}"
}
die_code() { local c=$1; shift; printf '%s: error: %s\n' "$PROG" "$*" >&2; exit "$c"; }
die() { die_code "$EX_LAB" "$@"; }
note() { printf '%s: %s\n' "$PROG" "$*" >&2; }
MISSING=()
missing() { MISSING+=("$1"); }
check_missing() {
    if ((${#MISSING[@]})); then
        printf '%s: error: missing prerequisites:\n' "$PROG" >&2
        printf '  - %s\n' "${MISSING[@]}" >&2
        printf '  (install e.g.: apt-get install -y qemu-system-x86 linux-image-amd64 busybox-static nvme-cli hdparm sg3-utils fdisk cpio)\n' >&2
        exit "$EX_MISSING"
    fi
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Arguments -------------------------------------------------------------------
BINARY= SCRIPT= OUT= WORKDIR= KERNEL= TIMEOUT=300 DISK_SIZE=256M
KEEP=0 VERBOSE=0 PREPARE=0
EXTRA_FILES=()
declare -A IMAGES=()
need_arg() { [[ $# -ge 2 ]] || die_code "$EX_USAGE" "option $1 needs an argument"; }
while [[ $# -gt 0 ]]; do
    case $1 in
        --binary) need_arg "$@"; BINARY=$2; shift 2 ;;
        --script) need_arg "$@"; SCRIPT=$2; shift 2 ;;
        --out) need_arg "$@"; OUT=$2; shift 2 ;;
        --workdir) need_arg "$@"; WORKDIR=$2; shift 2 ;;
        --kernel) need_arg "$@"; KERNEL=$2; shift 2 ;;
        --timeout) need_arg "$@"; TIMEOUT=$2; shift 2 ;;
        --disk-size) need_arg "$@"; DISK_SIZE=$2; shift 2 ;;
        --file) need_arg "$@"; EXTRA_FILES+=("$2"); shift 2 ;;
        --image) need_arg "$@"
            case ${2%%=*} in sata512e|scsi512e|scsi4kn|nvme) ;;
                *) die_code "$EX_USAGE" "--image '$2': the disk must be one of sata512e, scsi512e, scsi4kn, nvme (--image scsi512e=FILE)" ;;
            esac
            [[ $2 == *=?* ]] || die_code "$EX_USAGE" "--image '$2': give DISK=IMAGE (e.g. --image scsi512e=disk.img)"
            IMAGES[${2%%=*}]=${2#*=}; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --verbose) VERBOSE=1; shift ;;
        --prepare) PREPARE=1; shift ;;
        -h|--help) usage 0 ;;
        *) die_code "$EX_USAGE" "unknown argument '$1' (see --help)" ;;
    esac
done
if ((!PREPARE)); then
    [[ -n $BINARY && -n $SCRIPT && -n $OUT ]] || usage
    [[ -f $BINARY && -x $BINARY ]] || die_code "$EX_USAGE" "--binary '$BINARY' is not an executable file"
    [[ -f $SCRIPT && -r $SCRIPT ]] || die_code "$EX_USAGE" "--script '$SCRIPT' is not a readable file"
    for f in ${EXTRA_FILES[@]+"${EXTRA_FILES[@]}"}; do
        [[ -f $f && -r $f ]] || die_code "$EX_USAGE" "--file '$f' is not a readable file"
    done
    for d in "${!IMAGES[@]}"; do
        [[ -f ${IMAGES[$d]} && -r ${IMAGES[$d]} ]] || die_code "$EX_USAGE" "--image $d='${IMAGES[$d]}' is not a readable file"
    done
fi
[[ $TIMEOUT =~ ^[0-9]+$ ]] && ((TIMEOUT >= 60)) || die_code "$EX_USAGE" "--timeout must be an integer >= 60"
[[ $DISK_SIZE =~ ^[0-9]+[MG]$ ]] || die_code "$EX_USAGE" "--disk-size must look like 256M or 1G"
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/afdisk-lab-$(id -u)}
mkdir -p "$WORKDIR"
WORKDIR=$(cd "$WORKDIR" && pwd)

T_START=$(now)

# Prerequisites ---------------------------------------------------------------
for c in cpio:cpio timeout:coreutils sha256sum:coreutils truncate:coreutils \
         ldd:libc-bin awk:mawk od:coreutils; do
    command -v "${c%%:*}" >/dev/null || missing "command '${c%%:*}' (apt package ${c#*:})"
done
command -v "$QEMU" >/dev/null || missing "QEMU '$QEMU' (apt package qemu-system-x86)"

# Kernel: --kernel, $LAB_KERNEL, or the newest /boot/vmlinuz-* that has modules.
KERNEL=${KERNEL:-${LAB_KERNEL:-}}
if [[ -z $KERNEL ]]; then
    while IFS= read -r k; do
        [[ -e /lib/modules/${k#/boot/vmlinuz-}/modules.dep ]] && { KERNEL=$k; break; }
    done < <(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -rV)
fi
if [[ -z $KERNEL ]]; then
    missing "a guest kernel /boot/vmlinuz-<version> with /lib/modules/<version>/modules.dep (apt package linux-image-amd64)"
    check_missing
fi
[[ -f $KERNEL ]] || { missing "kernel image '$KERNEL' (apt package linux-image-amd64)"; check_missing; }
[[ -r $KERNEL ]] || die_code "$EX_MISSING" "kernel image '$KERNEL' is not readable by uid $(id -u) (Ubuntu installs it mode 0600: sudo chmod 0644 $KERNEL)"
KVER=${LAB_KERNEL_VERSION:-$(basename "$KERNEL")}
KVER=${KVER#vmlinuz-}
MODDIR=${LAB_MODDIR:-/lib/modules/$KVER}
[[ -r $MODDIR/modules.dep ]] || { missing "$MODDIR/modules.dep for kernel $KERNEL (apt package linux-image-$KVER or linux-image-amd64; set LAB_KERNEL_VERSION if the file name is not vmlinuz-<version>)"; check_missing; }

# Static busybox.
BUSYBOX=
for b in "${LAB_BUSYBOX:-}" /bin/busybox /usr/bin/busybox "$(command -v busybox || true)"; do
    [[ -n $b && -x $b ]] && { BUSYBOX=$b; break; }
done
is_static() { ! ldd "$1" >/dev/null 2>&1 || ldd "$1" 2>&1 | grep -q 'statically linked'; }
if [[ -z $BUSYBOX ]]; then
    missing "busybox (apt package busybox-static)"
elif ! is_static "$BUSYBOX"; then
    missing "a statically linked busybox; '$BUSYBOX' is dynamic (apt package busybox-static)"
fi

# Vendor tools.
TOOL_PATHS=()
for t in "${REQUIRED_TOOLS[@]}"; do
    if p=$(command -v "${t%%:*}"); then TOOL_PATHS+=("$p")
    else missing "command '${t%%:*}' (apt package ${t#*:})"; fi
done
for t in "${OPTIONAL_TOOLS[@]}"; do
    if p=$(command -v "$t"); then TOOL_PATHS+=("$p"); fi
done

# Modules: parse modules.dep / modules.builtin once.
declare -A MOD_REL=() MOD_DEPS=() MOD_BUILTIN=()
modname() { local b=${1##*/}; b=${b%%.ko*}; REPLY=${b//-/_}; }  # sets REPLY (no fork)
while IFS= read -r line; do
    rel=${line%%:*}; modname "$rel"
    MOD_REL[$REPLY]=$rel; MOD_DEPS[$REPLY]=${line#*:}
done < "$MODDIR/modules.dep"
if [[ -r $MODDIR/modules.builtin ]]; then
    while IFS= read -r line; do modname "$line"; MOD_BUILTIN[$REPLY]=1; done < "$MODDIR/modules.builtin"
fi
MOD_ORDER=()
declare -A MOD_SEEN=()
add_module() { # add_module NAME required(0/1)
    local n=$1 req=$2 d deps i
    [[ -n ${MOD_SEEN[$n]:-} ]] && return 0
    if [[ -n ${MOD_BUILTIN[$n]:-} ]]; then MOD_SEEN[$n]=1; return 0; fi
    if [[ -z ${MOD_REL[$n]:-} ]]; then
        ((req)) && missing "kernel module '$n' for $KVER: not in $MODDIR/modules.dep nor modules.builtin (apt package linux-image-$KVER / linux-image-amd64)"
        return 0
    fi
    if [[ ! -r $MODDIR/${MOD_REL[$n]} ]]; then
        missing "kernel module file $MODDIR/${MOD_REL[$n]} (apt package linux-image-$KVER / linux-image-amd64)"
        return 0
    fi
    # modules.dep lists the transitive dependencies; modprobe loads them last-first.
    read -r -a deps <<< "${MOD_DEPS[$n]}"
    for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
        modname "${deps[i]}"; d=$REPLY
        [[ -n ${MOD_SEEN[$d]:-} ]] && continue
        MOD_SEEN[$d]=1; MOD_ORDER+=("$d")
        [[ -r $MODDIR/${deps[i]} ]] || missing "kernel module file $MODDIR/${deps[i]} (apt package linux-image-$KVER)"
    done
    MOD_SEEN[$n]=1; MOD_ORDER+=("$n")
}
for m in "${OPTIONAL_MODULES[@]:0:2}"; do add_module "$m" 0; done  # crc providers first
for m in "${REQUIRED_MODULES[@]}"; do add_module "$m" 1; done
for m in "${OPTIONAL_MODULES[@]:2}"; do add_module "$m" 0; done
for m in "${MOD_ORDER[@]}"; do
    case ${MOD_REL[$m]} in
        *.ko.xz) command -v xz >/dev/null || { missing "xz to decompress kernel modules (apt package xz-utils)"; break; } ;;
        *.ko.zst) command -v zstd >/dev/null || { missing "zstd to decompress kernel modules (apt package zstd)"; break; } ;;
        *.ko.gz) command -v gzip >/dev/null || { missing "gzip to decompress kernel modules (apt package gzip)"; break; } ;;
    esac
done
check_missing

# Shared libraries (and the dynamic loader) that a binary needs, one per line.
ldd_libs() {
    local out
    is_static "$1" && return 0
    out=$(ldd "$1") || die_code "$EX_MISSING" "ldd failed on $1"
    if grep -q 'not found' <<< "$out"; then
        die_code "$EX_MISSING" "libraries of $1 not found: $(grep 'not found' <<< "$out" | tr -s ' \t\n' ' ')"
    fi
    awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }' <<< "$out"
}
# copy_into STAGE SRC [DEST] -- copy a file (dereferenced) to STAGE/DEST.
copy_into() {
    local dest=$1/${3:-$2}
    mkdir -p "$(dirname "$dest")"
    cp -L "$2" "$dest"
}
make_cpio() { # make_cpio STAGE OUTFILE
    (cd "$1" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
        cpio --null -o -H newc -R 0:0 --quiet) > "$2"
}

# Base initramfs (cached) ------------------------------------------------------
LIB_PATHS=()
for p in "${TOOL_PATHS[@]}"; do
    mapfile -t -O "${#LIB_PATHS[@]}" LIB_PATHS < <(ldd_libs "$p")
done
mapfile -t LIB_PATHS < <(printf '%s\n' "${LIB_PATHS[@]}" | LC_ALL=C sort -u)

manifest() {
    local files=("${BASH_SOURCE[0]}" "$LAB_DIR/guest/init" "$LAB_DIR/guest/lib.sh"
                 "$BUSYBOX" "${TOOL_PATHS[@]}" "${LIB_PATHS[@]}") m
    for m in "${MOD_ORDER[@]}"; do files+=("$MODDIR/${MOD_REL[$m]}"); done
    printf 'kernel %s\nmodules %s\n' "$KVER" "${MOD_ORDER[*]}"
    sha256sum -- "${files[@]}"
}
KEY=$(manifest | sha256sum | cut -c1-16)
CACHE=$WORKDIR/cache/$KVER-$KEY
BASE_CPIO=$CACHE/base.cpio

build_base() {
    local stage tmp m rel src dst a
    tmp=$(mktemp -d "$WORKDIR/build.XXXXXX")
    stage=$tmp/root
    mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,usr/local/sbin,lib/modules/lab,lab/files,proc,sys,dev,tmp,run,root,mnt,etc}
    cp "$LAB_DIR/guest/init" "$stage/init"; chmod 0755 "$stage/init"
    cp "$LAB_DIR/guest/lib.sh" "$stage/lab/lib.sh"
    cp "$BUSYBOX" "$stage/bin/busybox"; chmod 0755 "$stage/bin/busybox"
    while IFS= read -r a; do           # e.g. "sbin/insmod", "usr/bin/awk"
        [[ $a == */* && $a != bin/busybox && ! -e $stage/$a ]] || continue
        ln -s /bin/busybox "$stage/$a"
    done < <("$BUSYBOX" --list-full)
    for p in "${TOOL_PATHS[@]}"; do copy_into "$stage" "$p" "usr/local/sbin/$(basename "$p")"; done
    for p in "${LIB_PATHS[@]}"; do copy_into "$stage" "$p"; done
    : > "$stage/lab/modules.order"
    for m in "${MOD_ORDER[@]}"; do
        rel=${MOD_REL[$m]}; src=$MODDIR/$rel; dst=$stage/lib/modules/lab/$m.ko
        case $rel in
            *.ko.xz) xz -dc "$src" > "$dst" ;;
            *.ko.zst) zstd -qdc "$src" > "$dst" ;;
            *.ko.gz) gzip -dc "$src" > "$dst" ;;
            *) cp "$src" "$dst" ;;
        esac
        printf '%s\n' "$m" >> "$stage/lab/modules.order"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\n' > "$stage/etc/passwd"
    printf 'root:x:0:\n' > "$stage/etc/group"
    manifest > "$stage/lab/manifest"
    mkdir -p "$CACHE"
    make_cpio "$stage" "$tmp/base.cpio"
    mv -f "$tmp/base.cpio" "$BASE_CPIO"     # atomic; safe against parallel builds
    rm -rf "$tmp"
}
if [[ -s $BASE_CPIO ]]; then
    note "initramfs cache hit: $BASE_CPIO"
    touch "$CACHE"
else
    note "building base initramfs for kernel $KVER ($CACHE)"
    build_base
    note "base initramfs built in $(elapsed "$T_START")s ($(du -h "$BASE_CPIO" | cut -f1))"
fi
# Prune cache entries and run directories unused for more than two days.
find "$WORKDIR/cache" "$WORKDIR/runs" -mindepth 1 -maxdepth 1 -type d -mtime +1 \
    ! -path "$CACHE" -exec rm -rf {} + 2>/dev/null || true
if ((PREPARE)); then
    note "prepared: kernel $KERNEL, initramfs $BASE_CPIO"
    exit 0
fi

# Per-run directory, overlay initramfs, disk images ----------------------------
mkdir -p "$WORKDIR/runs"
RUN=$(mktemp -d "$WORKDIR/runs/run.XXXXXX")
cleanup() { if ((KEEP)); then note "kept run directory $RUN"; else rm -rf "$RUN"; fi; }
trap cleanup EXIT

NONCE=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
# The guest kills the script this long after it starts, leaving time for the
# boot (~10 s under TCG) and for delivering the output before QEMU is killed.
SCRIPT_TIMEOUT=$((TIMEOUT - 40))
OV=$RUN/overlay
mkdir -p "$OV/bin" "$OV/lab/files"
cp "$BINARY" "$OV/bin/afdisk"; chmod 0755 "$OV/bin/afdisk"
while IFS= read -r p; do copy_into "$OV" "$p"; done < <(ldd_libs "$BINARY")
cp "$SCRIPT" "$OV/lab/script"
for f in ${EXTRA_FILES[@]+"${EXTRA_FILES[@]}"}; do cp "$f" "$OV/lab/files/"; done
printf 'LAB_NONCE=%s\nLAB_SCRIPT_TIMEOUT=%d\nLAB_DISK_TIMEOUT=%d\n' \
    "$NONCE" "$SCRIPT_TIMEOUT" 60 > "$OV/lab/run.conf"
make_cpio "$OV" "$RUN/overlay.cpio"
# The kernel unpacks concatenated newc archives in order (later files win).
cat "$BASE_CPIO" "$RUN/overlay.cpio" > "$RUN/initrd.cpio"

# A disk given with --image starts as a (sparse) copy of that image; the others start empty.
for d in sata512e scsi512e scsi4kn nvme; do
    if [[ -n ${IMAGES[$d]:-} ]]; then cp --sparse=always "${IMAGES[$d]}" "$RUN/$d.img"
    else truncate -s "$DISK_SIZE" "$RUN/$d.img"; fi
done
truncate -s 64M "$RUN/usb.img"

qesc() { printf '%s' "${1//,/,,}"; }   # QEMU option strings escape ',' as ',,'
drive() { printf 'if=none,id=%s,file=%s,format=raw,cache=unsafe' "$1" "$(qesc "$2")"; }
QEMU_ARGS=(
    -nodefaults -no-user-config -display none -monitor none -no-reboot
    -machine pc -accel "$ACCEL" -cpu "$CPU" -m "$MEM" -smp "$SMP"
    -kernel "$KERNEL" -initrd "$RUN/initrd.cpio"
    -append "console=ttyS0,115200 rdinit=/init panic=-1 quiet loglevel=4 mitigations=off nokaslr $ATA_PARAMS${KERNEL_APPEND:+ $KERNEL_APPEND}"
    -chardev "file,id=con,path=$(qesc "$RUN/console.log")" -serial chardev:con
    -chardev "file,id=res,path=$(qesc "$RUN/results.log")" -serial chardev:res
    # SATA (AHCI) 512e: IDENTIFY reports logical 512 / physical 4096
    -device ahci,id=ahci
    -drive "$(drive dsata "$RUN/sata512e.img")"
    -device "ide-hd,bus=ahci.0,drive=dsata,logical_block_size=512,physical_block_size=4096,model=AFLAB SATA 512e,serial=$SER_SATA"
    # SCSI (virtio-scsi) 512e and 4Kn
    -device virtio-scsi-pci,id=scsi0
    -drive "$(drive dscsi512 "$RUN/scsi512e.img")"
    -device "scsi-hd,bus=scsi0.0,channel=0,scsi-id=0,lun=0,drive=dscsi512,logical_block_size=512,physical_block_size=4096,vendor=AFLAB,product=SCSI 512e,serial=$SER_SCSI512"
    -drive "$(drive dscsi4k "$RUN/scsi4kn.img")"
    -device "scsi-hd,bus=scsi0.0,channel=0,scsi-id=1,lun=0,drive=dscsi4k,logical_block_size=4096,physical_block_size=4096,vendor=AFLAB,product=SCSI 4Kn,serial=$SER_SCSI4K"
    # NVMe, namespace 1 formatted with 512-byte LBAs (LBA format 0)
    -drive "$(drive dnvme "$RUN/nvme.img")"
    -device "nvme,id=nvme0,serial=$SER_NVME"
    -device "nvme-ns,bus=nvme0,drive=dnvme,nsid=1,logical_block_size=512,physical_block_size=512"
    # USB mass storage on xHCI (not one of the four waited-for disks; find it by its /usb sysfs path)
    -device qemu-xhci,id=xhci
    -drive "$(drive dusb "$RUN/usb.img")"
    -device "usb-storage,bus=xhci.0,drive=dusb,serial=AFLAB-USB"
)

note "booting guest (accel=$ACCEL, timeout ${TIMEOUT}s)"
T_BOOT=$(now)
qrc=0
timeout -k 10 "$TIMEOUT" "$QEMU" "${QEMU_ARGS[@]}" </dev/null >"$RUN/qemu.log" 2>&1 || qrc=$?
T_GUEST=$(elapsed "$T_BOOT")

mkdir -p "$(dirname "$OUT")"
cp "$RUN/console.log" "$OUT.console" 2>/dev/null || : > "$OUT.console"
((VERBOSE)) && cat "$OUT.console" >&2

# Extract the script output between the markers.  The guest writes
#   @@AFLAB-BEGIN n@@ \n <output> \n @@AFLAB-END n rc=N@@
# so the line just before END is dropped if empty (it is the separator).
status=$(LAB_OUT=$OUT awk -v begin="@@AFLAB-BEGIN $NONCE@@" -v end="@@AFLAB-END $NONCE rc=" \
            -v err="@@AFLAB-ERROR $NONCE " '
    BEGIN { out = ENVIRON["LAB_OUT"] }
    state == 0 && index($0, err) { sub(/.*@@AFLAB-ERROR [0-9a-f]+ /, ""); sub(/@@\r?$/, ""); print "error " $0; done = 1; exit }
    state == 0 { if (index($0, begin)) state = 1; next }
    state == 1 && index($0, end) == 1 {
        rc = substr($0, length(end) + 1); sub(/@@\r?$/, "", rc)
        if (n > 0 && line[n] == "") n--
        printf "" > out
        for (i = 1; i <= n; i++) print line[i] > out
        print "rc " rc; done = 1; exit
    }
    state == 1 { line[++n] = $0 }
    END {
        if (done) exit
        if (state == 1) { printf "" > out; for (i = 1; i <= n; i++) print line[i] > out; print "noend" }
        else print "nobegin"
    }' "$RUN/results.log" 2>/dev/null || echo nobegin)

report_console() {
    note "last lines of the guest console ($OUT.console):"
    tail -n 40 "$OUT.console" >&2 || true
    [[ -s $RUN/qemu.log ]] && { note "qemu said:"; cat "$RUN/qemu.log" >&2; }
    return 0
}
case $status in
    rc\ *)
        rc=${status#rc }
        printf '%s\n' "$rc" > "$OUT.rc"
        note "guest script exited $rc; guest ran ${T_GUEST}s, total $(elapsed "$T_START")s; output in $OUT"
        [[ $rc == 0 ]] && exit 0
        exit "$EX_SCRIPT" ;;
    error\ *)
        echo error > "$OUT.rc"; : > "$OUT"
        report_console
        die "guest init failed: ${status#error }" ;;
    *)
        if ((qrc == 124 || qrc == 137)); then
            echo timeout > "$OUT.rc"
            report_console
            die "QEMU killed after the ${TIMEOUT}s timeout ($status); partial output (if any) in $OUT"
        fi
        echo error > "$OUT.rc"
        [[ $status == nobegin ]] && : > "$OUT"
        report_console
        grep -q 'Kernel panic' "$OUT.console" && die "the guest kernel panicked (see $OUT.console)"
        die "no complete result from the guest ($status, qemu exit status $qrc)" ;;
esac

#!/usr/bin/env bash
# Benchmark of afdisk's rescue image (issue 26): its size by part, and the boot time to afdisk's first frame under
# QEMU (software emulation, TCG) for SeaBIOS and OVMF, CD and USB stick. Reported, never asserted.
#
#   tests/bench/live_boot.sh [ISO] [N]      (defaults: target/live/afdisk-live.iso, 2 boots per combination)
#
# Terms: *to menu* is seconds from QEMU's start to GRUB's countdown on the serial line (firmware, GRUB loading);
# *to frame* is seconds from QEMU's start to afdisk's first full device-list frame on the serial console (the
# serial entry is chosen as soon as the menu shows, so the menu's 5 s timeout is not counted). The size parts are
# the ISO's files (kernel, compressed initrd, GRUB) and, inside the initrd, modules, tools with their libraries,
# busybox and afdisk, raw and compressed alone with the initrd's zstd -12. GParted Live 1.6.0-3 amd64 is about
# 600 MB (third-party catalog figure, see ../shared/notes/live-image.md §7). Needs tmux, qemu-system-x86, ovmf,
# xorriso, zstd, cpio. Each boot uses a full core: run it on an otherwise idle machine for figures worth quoting.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ISO=${1:-$ROOT/target/live/afdisk-live.iso}
N=${2:-2}
[[ -r $ISO ]] || { echo "live_boot.sh: no ISO at $ISO (bash assets/live/build.sh target/live)" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/afdisk-live-bench.XXXXXX")
SESSION=afdisk-live-bench-$$
cleanup() { tmux kill-session -t "$SESSION" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# Size by part ------------------------------------------------------------------------------------------------
mb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1000000 }'; }
bytes() { du -sb --apparent-size "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
zbytes() { tar -C "$WORK/root" -cf - "$@" 2>/dev/null | zstd -q -12 -T0 | wc -c; }
xorriso -osirrox on -indev "$ISO" -extract /boot "$WORK/boot" -extract /efi.img "$WORK/efi.img" >/dev/null 2>&1
mkdir -p "$WORK/root"
zstd -qdc "$WORK/boot/initrd.img" | (cd "$WORK/root" && cpio -id --quiet)
iso=$(stat -c %s "$ISO")
kernel=$(stat -c %s "$WORK/boot/vmlinuz")
initrd=$(stat -c %s "$WORK/boot/initrd.img")
grub=$(( $(bytes "$WORK/boot/grub") + $(stat -c %s "$WORK/efi.img") ))
(cd "$WORK/root" && ls -d usr/sbin usr/local/sbin lib/x86_64-linux-gnu usr/lib lib64 2>/dev/null || true) > "$WORK/tools.list"
mapfile -t TOOLS < "$WORK/tools.list"
echo "== size by part (MB = 10^6 bytes) =="
printf '%-28s %10s %12s\n' part raw "zstd -12"
printf '%-28s %10s %12s\n' "ISO (whole image)" "$(mb "$iso")" -
printf '%-28s %10s %12s\n' "  kernel (vmlinuz)" "$(mb "$kernel")" -
printf '%-28s %10s %12s\n' "  initrd" "$(mb "$(bytes "$WORK/root")")" "$(mb "$initrd")"
printf '%-28s %10s %12s\n' "    modules" "$(mb "$(bytes "$WORK/root/lib/modules")")" "$(mb "$(zbytes lib/modules)")"
printf '%-28s %10s %12s\n' "    tools + libraries" "$(mb "$(cd "$WORK/root" && bytes "${TOOLS[@]}")")" \
    "$(mb "$(zbytes "${TOOLS[@]}")")"
printf '%-28s %10s %12s\n' "    busybox" "$(mb "$(stat -c %s "$WORK/root/bin/busybox")")" "$(mb "$(zbytes bin/busybox)")"
printf '%-28s %10s %12s\n' "    afdisk" "$(mb "$(stat -c %s "$WORK/root/usr/local/bin/afdisk")")" \
    "$(mb "$(zbytes usr/local/bin/afdisk)")"
printf '%-28s %10s %12s\n' "  GRUB (BIOS + UEFI)" "$(mb "$grub")" -
data=$(sfdisk -d "$ISO" 2>/dev/null | awk -F'size=' '/3 : start=/ { split($2, a, ","); print a[1] * 512 }')
printf '%-28s %10s %12s\n' "  FAT data partition (p3)" "$(mb "${data:-0}")" -
printf 'GParted Live 1.6.0-3 amd64: about 600 MB; this image: %s MB (%.1f%% of it)\n' "$(mb "$iso")" \
    "$(awk -v a="$iso" 'BEGIN { print a / 6000000 }')"

# Boot time -----------------------------------------------------------------------------------------------------
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
plain() { tr -d '\r' < "$1" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g'; }
wait_for() { # wait_for FILE TEXT SECONDS
    local t0; t0=$(now)
    until plain "$1" | grep -qF "$2"; do
        awk -v a="$t0" -v b="$(now)" -v m="$3" 'BEGIN { exit !(b - a > m) }' && return 1
        sleep 0.1
    done
}
echo "== boot time to afdisk's first frame (QEMU TCG, seconds; goal <= 30) =="
printf '%-12s %-4s %8s %9s\n' firmware media "to menu" "to frame"
for combo in "bios cd" "uefi cd" "bios usb" "uefi usb"; do
    read -r fw media <<< "$combo"
    for ((i = 1; i <= N; i++)); do
        run=$WORK/run-$fw-$media-$i
        mkdir -p "$run"
        : > "$run/serial.log"
        t0=$(now)
        tmux new-session -d -s "$SESSION" -x 132 -y 40 \
            "bash '$ROOT/assets/live/qemu.sh' --iso '$ISO' --disks '$run' --firmware $fw --media $media; sleep 60"
        tmux pipe-pane -t "$SESSION" -o "cat >> '$run/serial.log'"
        menu=- frame=-
        if wait_for "$run/serial.log" "automatically in" 300; then
            menu=$(since "$t0")
            tmux send-keys -t "$SESSION" Down Enter
            t_wait=$(now)
            until tmux capture-pane -p -t "$SESSION" | grep -q "Disks ("; do
                awk -v a="$t_wait" -v b="$(now)" 'BEGIN { exit !(b - a > 300) }' && break
                sleep 0.1
            done
            tmux capture-pane -p -t "$SESSION" | grep -q "Disks (" && frame=$(since "$t0")
        fi
        printf '%-12s %-4s %8s %9s\n' "$fw" "$media" "$menu" "$frame"
        tmux kill-session -t "$SESSION" 2>/dev/null || true
        rm -rf "$run"
    done
done

#!/bin/sh
# Time from start to the first complete frame, in the same terminal multiplexer (tmux, 80x24): afdisk on one
# image, afdisk on the device list, and cfdisk on the same image (the reference). Each figure is the median of
# RUNS runs, in milliseconds; the start is taken just before `tmux new-session`, the end when capture-pane
# first shows the frame's last piece (afdisk: the findings panel of the disk view / the finished device list;
# cfdisk: its menu bar). The image is made by sgdisk (a peer), never by afdisk.
# Usage: tests/bench/first_frame.sh [AFDISK_BINARY] [RUNS]
set -eu
BIN=${1:-target/debug/afdisk}
RUNS=${2:-9}
DIR=$(mktemp -d)
# One session lives for the whole script, so the tmux server does not exit (and restart) between runs.
KEEP="ff-keep-$$"
tmux new-session -d -s "$KEEP" -x 80 -y 24 "sleep 600"
trap 'tmux kill-session -t "$KEEP" 2>/dev/null; rm -rf "$DIR"' EXIT
IMG=$DIR/ff.img
truncate -s 256M "$IMG"
sgdisk -a 1 -n 1:2049:+64M -c 1:root -n 2:264192:+32M "$IMG" >/dev/null

now_ms() { date +%s%3N; }

# once NAME MARKER CMD...: prints the milliseconds from start to the first screen holding MARKER.
once() {
    name=$1 marker=$2
    shift 2
    s="ff-$$-$name"
    t0=$(now_ms)
    tmux new-session -d -s "$s" -x 80 -y 24 "$@"
    while :; do
        if tmux capture-pane -p -t "$s" 2>/dev/null | grep -qF -- "$marker"; then
            t1=$(now_ms)
            break
        fi
        if [ $(( $(now_ms) - t0 )) -gt 10000 ]; then
            t1=timeout
            break
        fi
    done
    tmux kill-session -t "$s" 2>/dev/null || true
    if [ "$t1" = timeout ]; then echo 99999; else echo $((t1 - t0)); fi
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

measure() {
    label=$1
    shift
    i=0
    out=""
    while [ "$i" -lt "$RUNS" ]; do
        out="$out $(once "$@")"
        i=$((i + 1))
    done
    printf '%-22s median %4s ms  runs:%s\n' "$label" "$(printf '%s\n' $out | median)" "$out"
}

export TERM=screen NO_COLOR=1
measure "cfdisk IMG" cfdisk "Quit" cfdisk "$IMG"
measure "afdisk IMG" afdisk "Findings (" "$BIN" "$IMG"
measure "afdisk (device list)" list " Disks (" "$BIN"

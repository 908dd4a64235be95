#!/usr/bin/env bash
# Makes the README screenshots from real runs of the binary: a peer-made fixture (sgdisk) opened in tmux,
# each view captured with `tmux capture-pane -e` and rendered to SVG by pane2svg.py.
# Usage: assets/screenshots/make.sh [path/to/afdisk]   (needs root for the loop devices of the list view)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../target/release/afdisk}
work=$(mktemp -d)
s=afdisk-shots-$$
cleanup() { tmux kill-session -t "$s" 2>/dev/null || true; for l in ${loops:-}; do losetup -d "$l"; done; rm -rf "$work"; }
trap cleanup EXIT
img=$work/server-disk.img
truncate -s 2G "$img"
sgdisk -a 1 -n 1:34:2047 -t 1:ef02 -c 1:grub -n 2:2049:+512M -c 2:root -n 3:1052672:+256M -t 3:8200 -c 3:swap \
  -n 4:0:0 -c 4:data "$img" >/dev/null
loops=""
for ss in 512 4096; do
  f=$work/lo$ss.img; truncate -s 1G "$f"
  l=$(losetup -f --show --sector-size "$ss" "$f"); loops="$loops $l"
  sgdisk -n 1:0:+256M -n 2:0:0 "$l" >/dev/null
done
shot() { sleep 1; tmux capture-pane -e -p -t "$s" | python3 "$here/pane2svg.py" > "$here/$1.svg"; }
tmux new-session -d -s "$s" -x 80 -y 24 "$bin" "$img" --physical-sector-size 4096
shot disk-view
tmux send-keys -t "$s" z; shot sector-zoom
tmux send-keys -t "$s" l; shot sector-zoom-end
tmux send-keys -t "$s" '?'; shot help
tmux kill-session -t "$s"
tmux new-session -d -s "$s" -x 80 -y 24 "$bin"
shot device-list
echo "screenshots written to $here"

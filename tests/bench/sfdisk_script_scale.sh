#!/usr/bin/env bash
# Scale of `afdisk plan --from-sfdisk` with the script's length, beside `sfdisk --no-act` reading the same script
# (neither writes; each reads the script and plans the table on a 1 GiB sparse image). Two kinds of script of
# N = 1,000 / 10,000 / 100,000 lines:
#  - read:    `label: gpt`, N-129 comment lines, then 128 partition lines (`size=1MiB`): both tools read every
#             line and make the 128 partitions. The time must grow linearly with N.
#  - refused: `label: gpt` and N partition lines: afdisk refuses at line 130 (a GPT holds 128), sfdisk writes
#             the first 128 and drops the rest ("All partitions used."). Neither reads past the capacity.
# Each figure is the median of RUNS runs (default 3), in seconds.
# Usage: tests/bench/sfdisk_script_scale.sh [path/to/afdisk] [runs]
#        (default: target/release/afdisk, else target/debug/afdisk)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-}
if [ -z "$bin" ]; then
  bin=$root/target/release/afdisk
  [ -x "$bin" ] || bin=$root/target/debug/afdisk
fi
runs=${2:-3}
for t in sfdisk python3; do
  command -v "$t" >/dev/null || { echo "sfdisk_script_scale: $t is missing (see .ci/run)" >&2; exit 1; }
done
[ -x "$bin" ] || { echo "sfdisk_script_scale: no afdisk binary at $bin (cargo build --release)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
img=$work/disk.img
truncate -s 1G "$img"

# make_script KIND N FILE
make_script() {
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "w") as f:
    f.write("label: gpt\n")
    if kind == "read":
        f.write("".join("# comment line %d of the script\n" % i for i in range(n - 129)))
        f.write("size=1MiB\n" * 128)
    else:
        f.write("size=1MiB\n" * n)
EOF
}

# median_time CMD... : the median wall time of $runs runs of CMD (its output and status ignored).
median_time() {
  python3 - "$runs" "$@" <<'EOF'
import subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
stdin_file = cmd.pop() if cmd[-1].startswith("<") else None
times = []
for _ in range(runs):
    src = open(stdin_file[1:], "rb") if stdin_file else subprocess.DEVNULL
    t = time.perf_counter()
    subprocess.run(cmd, stdin=src, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append(time.perf_counter() - t)
times.sort()
print("%.3f" % times[len(times) // 2])
EOF
}

echo "afdisk: $bin ($runs runs each, median seconds)"
printf '%-8s %8s %10s %10s %10s\n' kind lines bytes afdisk sfdisk
for kind in read refused; do
  for n in 1000 10000 100000; do
    script=$work/$kind-$n.sfdisk
    make_script "$kind" "$n" "$script"
    ours=$(median_time "$bin" plan "$img" --from-sfdisk "$script")
    theirs=$(median_time sfdisk --no-act -q "$img" "<$script")
    printf '%-8s %8d %10d %10s %10s\n' "$kind" "$n" "$(stat -c %s "$script")" "$ours" "$theirs"
  done
done

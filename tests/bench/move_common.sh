# Shared by the move benchmarks (move_vs_dd.sh, move_eta.sh); sourced, not run.

# bench_needs NAME BIN TOOL...: every TOOL on PATH, root, and an afdisk binary at BIN; else says which is missing
# (as NAME) and exits 1.
bench_needs() {
  local name=$1 bin=$2 t
  shift 2
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "$name: $t is missing" >&2; exit 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "$name: needs root (loop devices, drop_caches)" >&2; exit 1; }
  [ -x "$bin" ] || { echo "$name: no afdisk binary at $bin" >&2; exit 1; }
}

# fill_files DIR BYTES PERCENT: DIR emptied, then files of 1-8 MiB of random bytes in it, PERCENT of the room an
# ext4 of BYTES leaves for files (BYTES less 1/16 for its metadata).
fill_files() {
  local dir=$1 want=$((($2 - $2 / 16) / 100 * $3)) have=0 i=0 n
  rm -rf "$dir"; mkdir -p "$dir"
  while [ "$have" -lt "$want" ]; do
    n=$(((1 + i % 8) * 1024 * 1024)); [ $((have + n)) -gt "$want" ] && n=$((want - have))
    head -c "$n" /dev/urandom >"$dir/f$i"; have=$((have + n)); i=$((i + 1))
  done
}

#!/usr/bin/env bash
# Read the named sections of a lab output file (see README.md).
#   sections.sh FILE NAME      print the body of section NAME (exit 1 if absent)
#   sections.sh --list FILE    print the section names, one per line
#   sections.sh --split FILE DIR   write each section body to DIR/NAME
# A section starts at a line "=== NAME ===" (NAME: [A-Za-z0-9._:+@-]+) and runs
# to the next such line.  If a name occurs more than once, the first one wins.
set -euo pipefail
readonly HDR='^=== [A-Za-z0-9._:+@-]+ ===$'
usage() { sed -n '2,7s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }
case ${1:-} in
    --list)
        [[ $# -eq 2 ]] || usage
        awk -v hdr="$HDR" '$0 ~ hdr { print substr($0, 5, length($0) - 8) }' "$2" ;;
    --split)
        [[ $# -eq 3 ]] || usage
        mkdir -p "$3"
        LAB_DIR_OUT=$3 awk -v hdr="$HDR" '
            BEGIN { dir = ENVIRON["LAB_DIR_OUT"] }
            $0 ~ hdr { if (f != "") close(f); n = substr($0, 5, length($0) - 8)
                       f = (n in seen || n ~ /^\.+$/) ? "" : dir "/" n; seen[n] = 1
                       if (f != "") printf "" > f; next }
            f != "" { print > f }' "$2" ;;
    ''|-*) usage ;;
    *)
        [[ $# -eq 2 ]] || usage
        [[ $2 =~ ^[A-Za-z0-9._:+@-]+$ ]] || { echo "sections.sh: bad section name '$2'" >&2; exit 2; }
        awk -v hdr="$HDR" -v want="=== $2 ===" '
            $0 ~ hdr { if (on) exit; if ($0 == want) { on = found = 1 }; next }
            on { print }
            END { exit !found }' "$1" ;;
esac

# Guest script of tests/bench/tcg_start_cost.sh (not a cargo test): what a process start costs in this TCG
# guest, against issue 13's overhead budget (afdisk's whole NVMe switch within 20% of the bare `nvme format`).
# Needs, passed with --file: tcg-time (the timer, tests/bench/tcg_time.rs), hello (a static Rust hello world,
# static-pie as Rust links it by default), hello-nopie (the same linked at a fixed address) and start-cost.n
# (the number of rounds N); optionally afdisk-before (an earlier static afdisk, timed in the same rounds:
# before-version, before-status, before.to4096, before.to512). Every figure comes from tcg-time: N rounds, wall time from spawn to exit,
# median, min and max in milliseconds.
# Sections, for KIND = aslr (the guest as booted: address-space randomisation on, as on any Linux system)
# and KIND = fixed (randomisation off: a diagnostic, not how afdisk runs):
#   start.KIND   busybox true, hello, hello-nopie, afdisk --version, nvme version, afdisk sector-size (status)
#   switch.KIND  bare nvme format 512 -> 4096 -> 512 interleaved with afdisk's whole switch both ways
#   trace.KIND.to4096 / trace.KIND.to512   one switch each way with AFDISK_TRACE_TIMING=1 (afdisk's steps)
#   budget.KIND  the arithmetic: 20% of the bare format's median against the hello world's start
. /lab/lib.sh
export AFDISK_BACKUP_DIR=/tmp/bk
F=/lab/files
T=$F/tcg-time
chmod 0755 "$T" "$F/hello" "$F/hello-nopie"
OLD=$F/afdisk-before
[ -f "$OLD" ] && chmod 0755 "$OLD"
N=$(cat "$F/start-cost.n" 2>/dev/null || echo 20)
A=/bin/afdisk
SET="--tool nvme --yes --confirm AFLAB-NVME --json"

# budget FILE-START FILE-SWITCH: the arithmetic, from tcg-time's lines.
budget() {
    awk '
        { for (i = 2; i <= NF; i++) if ($i ~ /^median=/) { sub(/^median=/, "", $i); m[$1] = $i } }
        END {
            bare = (m["bare.to4096"] + m["bare.to512"]) / 2
            af = (m["afdisk.to4096"] + m["afdisk.to512"]) / 2
            b = bare * 0.2
            printf "bare nvme format: median %.1f ms (to 4096: %.1f, to 512: %.1f)\n", bare, m["bare.to4096"], m["bare.to512"]
            printf "budget (20%% of it): %.1f ms\n", b
            printf "busybox true: %.1f ms; static Rust hello world (static-pie): %.1f ms, linked at a fixed address: %.1f ms\n", m["busybox-true"], m["hello"], m["hello-nopie"]
            printf "afdisk --version: %.1f ms; nvme version: %.1f ms; afdisk sector-size (status): %.1f ms\n", m["afdisk-version"], m["nvme-version"], m["afdisk-status"]
            printf "afdisk whole switch: median %.1f ms (to 4096: %.1f, to 512: %.1f); overhead %.1f ms; ratio %.2f (goal <= 1.20)\n", af, m["afdisk.to4096"], m["afdisk.to512"], af - bare, af / bare
            printf "hello world start / budget: %.2f; afdisk --version / budget: %.2f\n", m["hello"] / b, m["afdisk-version"] / b
            if ("before.to4096" in m) {
                ob = (m["before.to4096"] + m["before.to512"]) / 2
                printf "the earlier afdisk (afdisk-before): --version %.1f ms, status %.1f ms, whole switch %.1f ms (to 4096: %.1f, to 512: %.1f); ratio %.2f\n", m["before-version"], m["before-status"], ob, m["before.to4096"], m["before.to512"], ob / bare
            }
            if (m["hello"] + 0 > b) print "verdict: the budget is smaller than the start of a static Rust program that does nothing"
            else print "verdict: a static Rust program starts within the budget"
        }' "$@"
}

pass() {
    kind=$1
    # The earlier afdisk, when given: the same commands in the same rounds.
    old_start= old_switch=
    if [ -x "$OLD" ]; then
        old_start="::: before-version $OLD --version ::: before-status $OLD sector-size $LAB_NVME --tool nvme"
        old_switch="::: before.to4096 $OLD sector-size $LAB_NVME --set 4096 $SET ::: before.to512 $OLD sector-size $LAB_NVME --set 512 $SET"
    fi
    lab_section "start.$kind"
    # shellcheck disable=SC2086 # $old_start is a word list
    "$T" "$N" busybox-true /bin/busybox true \
        ::: hello "$F/hello" \
        ::: hello-nopie "$F/hello-nopie" \
        ::: afdisk-version "$A" --version \
        ::: nvme-version nvme version \
        ::: afdisk-status "$A" sector-size "$LAB_NVME" --tool nvme $old_start | tee "/tmp/start.$kind"
    lab_section "switch.$kind"
    # shellcheck disable=SC2086 # $SET is a word list
    "$T" "$N" bare.to4096 nvme format "$LAB_NVME" -n 1 --lbaf=4 --force \
        ::: bare.to512 nvme format "$LAB_NVME" -n 1 --lbaf=0 --force \
        ::: afdisk.to4096 "$A" sector-size "$LAB_NVME" --set 4096 $SET \
        ::: afdisk.to512 "$A" sector-size "$LAB_NVME" --set 512 $SET $old_switch | tee "/tmp/switch.$kind"
    lab_section "switch.$kind.kernel"; cat "/sys/block/${LAB_NVME#/dev/}/queue/logical_block_size"
    for to in 4096 512; do
        lab_section "trace.$kind.to$to"
        # shellcheck disable=SC2086
        AFDISK_TRACE_TIMING=1 "$A" sector-size "$LAB_NVME" --set "$to" $SET 2>&1 >/dev/null | grep afdisk-timing
    done
    lab_section "budget.$kind"
    budget "/tmp/start.$kind" "/tmp/switch.$kind"
}

lab_section rounds; echo "$N"
pass aslr
# Diagnostic: the same with address-space randomisation off. Under this QEMU (7.2, TCG) a program loaded at a
# new address each run costs far more per start than at a fixed one (its translated code is evidently not
# reused); this pass shows what is left without that.
echo 0 > /proc/sys/kernel/randomize_va_space
pass fixed
echo 2 > /proc/sys/kernel/randomize_va_space
exit 0

//! `tcg-time`: times commands inside the lab guest, where busybox's `date` has no sub-second field and
//! `/proc/uptime` counts hundredths. Built (static, no dependencies) by tests/bench/tcg_start_cost.sh and
//! copied into the guest; not part of afdisk.
//!
//! `tcg-time N LABEL CMD [ARGS...] [::: LABEL CMD [ARGS...]]...` runs the commands in turn, N rounds (round
//! i runs every command once, in the order given, so a format to 4096 is followed by the one back to 512
//! and a drift of the guest's speed touches every command alike). Each run's wall time is taken from spawn
//! to exit (CLOCK_MONOTONIC), its stdout and stderr go to /dev/null. Prints one line per command:
//! `LABEL median=M min=A max=B runs=R1 R2 ...` (milliseconds), and `LABEL failed=K` when K runs exited
//! non-zero (they are still timed). Exit status 0 when every run exited 0, else 1.

use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((n, rest)) = args.split_first() else {
        eprintln!("usage: tcg-time N LABEL CMD [ARGS...] [::: LABEL CMD [ARGS...]]...");
        std::process::exit(2);
    };
    let Ok(n) = n.parse::<usize>() else {
        eprintln!("tcg-time: N must be a number, not {n}");
        std::process::exit(2);
    };
    let cmds: Vec<&[String]> = rest.split(|a| a == ":::").collect();
    if cmds.iter().any(|c| c.len() < 2) {
        eprintln!("tcg-time: each command needs a label and a program");
        std::process::exit(2);
    }
    let mut times = vec![Vec::with_capacity(n); cmds.len()];
    let mut failed = vec![0usize; cmds.len()];
    for _ in 0..n {
        for (i, c) in cmds.iter().enumerate() {
            let t0 = Instant::now();
            let ok = Command::new(&c[1])
                .args(&c[2..])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            times[i].push(t0.elapsed().as_secs_f64() * 1000.0);
            if !ok {
                failed[i] += 1;
            }
        }
    }
    for (i, c) in cmds.iter().enumerate() {
        let runs = &times[i];
        let mut s = runs.clone();
        s.sort_by(f64::total_cmp);
        let median = if s.is_empty() {
            0.0
        } else if s.len() % 2 == 1 {
            s[s.len() / 2]
        } else {
            (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
        };
        let list: Vec<String> = runs.iter().map(|t| format!("{t:.1}")).collect();
        println!(
            "{} median={median:.1} min={:.1} max={:.1} runs={}",
            c[0],
            s.first().copied().unwrap_or(0.0),
            s.last().copied().unwrap_or(0.0),
            list.join(" ")
        );
        if failed[i] > 0 {
            println!("{} failed={}", c[0], failed[i]);
        }
    }
    std::process::exit(i32::from(failed.iter().any(|&f| f > 0)));
}

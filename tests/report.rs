//! Honest reporting at the command line: `check`'s status and exit code on table errors, `list --json`'s status,
//! the fix `inspect` gives (the planner's own placement), and plan diffs that do not hide changes. Fixtures are
//! made by the peers (sgdisk, sfdisk) on sparse images and on loop devices the test attaches itself.

mod common;

use common::{afdisk, run, run_stdin, LoopDev, Scratch};
use serde_json::Value;

/// A 64 MiB GPT image made by sgdisk with one aligned partition, then both GPT headers zeroed: a table that is
/// marked as GPT (protective MBR) but has no valid copy.
fn corrupt_gpt(s: &Scratch) -> String {
    let img = s.image("corrupt.img", 64 << 20);
    let p = common::s(&img);
    run("sgdisk", &["-n", "1:2048:+16M", &p]);
    common::poke(&img, 512, &[0u8; 512]);
    common::poke(&img, (64 << 20) - 512, &[0u8; 512]);
    p
}

fn good_gpt(s: &Scratch) -> String {
    let img = s.image("good.img", 64 << 20);
    let p = common::s(&img);
    run("sgdisk", &["-n", "1:2048:+16M", &p]);
    p
}

#[test]
fn check_fails_on_a_corrupt_gpt() {
    let s = Scratch::new();
    let bad = corrupt_gpt(&s);
    // (sgdisk -v is no oracle here: with both headers gone it builds a new GPT in memory and finds no
    // problem; afdisk's own `list` already calls this disk PROBLEM.)
    let out = afdisk(&["check", &bad]);
    assert_eq!(out.code, 5, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("PROBLEM gpt-corrupt"), "{}", out.stdout);
    assert!(!out.stdout.contains("ok ("), "{}", out.stdout);

    let j = afdisk(&["check", "--json", &bad]);
    assert_eq!(j.code, 5);
    let v = j.json();
    assert_eq!(v["targets"][0]["status"], "problem");
    let codes: Vec<&str> = v["targets"][0]["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .filter_map(|p| p["code"].as_str())
        .collect();
    assert!(codes.contains(&"gpt-corrupt"), "{v}");
}

#[test]
fn check_exit_codes_rank_error_over_problem_over_misaligned() {
    let s = Scratch::new();
    let bad = corrupt_gpt(&s);
    let good = good_gpt(&s);
    let xp = s.image("xp.img", 64 << 20);
    let xp = common::s(&xp);
    run("sgdisk", &["-a", "1", "-n", "1:63:+16M", &xp]);
    let missing = s.dir.path().join("missing.img");
    let missing = common::s(&missing);
    let geo = "--physical-sector-size";
    assert_eq!(afdisk(&["check", geo, "4096", &good]).code, 0);
    assert_eq!(afdisk(&["check", geo, "4096", &good, &xp]).code, 1);
    assert_eq!(afdisk(&["check", geo, "4096", &xp, &bad]).code, 5);
    assert_eq!(afdisk(&["check", geo, "4096", &bad, &xp, &missing]).code, 2);
    let one = afdisk(&["check", &good]);
    assert!(
        one.stdout.contains("ok (1 partition aligned)"),
        "{}",
        one.stdout
    );
}

#[test]
fn check_json_reports_read_errors_in_the_array_only() {
    let s = Scratch::new();
    let missing = s.dir.path().join("missing.img");
    let missing = common::s(&missing);
    let out = afdisk(&["check", "--json", &missing]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.is_empty(), "stderr: {}", out.stderr);
    let v = out.json();
    assert_eq!(v["targets"][0]["status"], "error");
    assert!(v["targets"][0]["error"]
        .as_str()
        .unwrap_or("")
        .contains("missing.img"));
    assert!(v["targets"][0]["fix"].as_str().is_some());
}

#[test]
fn list_json_carries_the_status_its_text_shows() {
    let s = Scratch::new();
    let bad = corrupt_gpt(&s);
    let Some(dev) = LoopDev::attach(std::path::Path::new(&bad), 512) else {
        return;
    };
    let text = afdisk(&["list"]);
    let name = dev.base_name();
    let line = text
        .stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name.as_str()))
        .unwrap_or_else(|| panic!("{name} not listed:\n{}", text.stdout));
    assert!(line.contains("PROBLEM"), "{line}");
    let v: Value = afdisk(&["list", "--json"]).json();
    let entry = v["devices"]
        .as_array()
        .expect("array")
        .iter()
        .find(|e| e["name"] == name.as_str())
        .unwrap_or_else(|| panic!("{name} not in list --json: {v}"));
    assert_eq!(entry["status"], "problem", "{entry}");
    let _ = run_stdin;
}

/// The sector number in "... at sector N, where `afdisk plan --realign` puts it".
fn fix_sector(message: &str) -> Option<u64> {
    let rest = &message[message.find("boundary, at sector ")? + "boundary, at sector ".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn inspect_fix_is_where_plan_puts_the_partition() {
    let s = Scratch::new();
    // Starts off 4 KiB; 2049 is the reported case (inspect said 4096, plan 2048).
    for start in [34u64, 63, 2049, 3001, 4095] {
        let img = s.image(&format!("p{start}.img"), 64 << 20);
        let p = common::s(&img);
        run(
            "sgdisk",
            &[
                "-a",
                "1",
                "-n",
                &format!("1:{start}:+8M"),
                "-n",
                "2:40960:+8M",
                &p,
            ],
        );
        let geo = ["--physical-sector-size", "4096"];
        let r = afdisk(&["inspect", "--json", geo[0], geo[1], &p]).json();
        let msg = r["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .find(|f| f["code"] == "misaligned-start")
            .and_then(|f| f["message"].as_str())
            .unwrap_or_else(|| panic!("no misaligned-start at {start}: {r}"))
            .to_string();
        let plan = afdisk(&["plan", "--realign", "--json", geo[0], geo[1], &p]);
        let plan = plan.json();
        let new_start = plan["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .find(|c| c["number"] == 1)
            .and_then(|c| c["new_start"].as_u64())
            .unwrap_or_else(|| panic!("plan has no new start for 1: {plan}"));
        assert_eq!(
            fix_sector(&msg),
            Some(new_start),
            "start {start}: inspect says {msg:?}, plan {new_start}"
        );
    }
}

fn change(plan: &Value, number: u64) -> Value {
    plan["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["number"] == number)
        .cloned()
        .unwrap_or_else(|| panic!("no change for partition {number}: {plan}"))
}

#[test]
fn a_strict_end_shrink_is_a_resize_in_exact_sectors_not_a_move() {
    let s = Scratch::new();
    let img = s.image("strict.img", 2 << 30);
    let p = common::s(&img);
    // 1.5 GiB plus 1409 sectors from 2048: --strict rounds the end down by 1409 sectors.
    let size = (3u64 << 30) / 2 / 512 + 1409;
    run(
        "sgdisk",
        &["-a", "1", "-n", &format!("1:2048:{}", 2048 + size - 1), &p],
    );
    let text = afdisk(&["plan", "--realign", "--strict", &p]);
    assert_eq!(text.code, 0, "{}{}", text.stdout, text.stderr);
    assert!(!text.stdout.contains("2048 → 2048"), "{}", text.stdout);
    assert!(
        !text.stdout.contains("1.5 GiB → 1.5 GiB)"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("1409 sectors smaller"),
        "{}",
        text.stdout
    );
    let line = text
        .stdout
        .lines()
        .find(|l| l.contains("   1 "))
        .unwrap_or_else(|| panic!("{}", text.stdout));
    assert!(line.contains("resize"), "{line}");
    assert!(line.contains(&format!("({size} sectors)")), "{line}");
    let c = change(
        &afdisk(&["plan", "--realign", "--strict", "--json", &p]).json(),
        1,
    );
    assert_eq!(c["action"], "resize", "{c}");
    assert_eq!(c["new_size"].as_u64(), Some(size - 1409));
}

#[test]
fn a_dos_realign_that_shrinks_a_logical_says_why() {
    let s = Scratch::new();
    let img = s.image("dos.img", 128 << 20);
    let p = common::s(&img);
    run_stdin(
        "sfdisk",
        &["-q", &p],
        "label: dos\nstart=2048, size=200000, type=5\nstart=2111, size=22400, type=83\nstart=24576, size=20480, type=83\n",
    );
    let plan = afdisk(&["plan", "--realign", "--json", &p]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    let c = change(&plan.json(), 5);
    let (old, new) = (c["old_size"].as_u64(), c["new_size"].as_u64());
    assert!(new < old, "logical 5 is not shrunk: {c}");
    let reason = c["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("shrinks because") && reason.contains("EBR of logical partition 6"),
        "{reason}"
    );
}

#[test]
fn a_symlink_loop_or_a_socket_is_not_a_failing_disk() {
    let s = Scratch::new();
    let a = s.dir.path().join("a");
    let b = s.dir.path().join("b");
    std::os::unix::fs::symlink(&b, &a).expect("symlink");
    std::os::unix::fs::symlink(&a, &b).expect("symlink");
    let sock = s.dir.path().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).expect("bind");
    for t in [&a, &sock] {
        let t = common::s(t);
        let out = afdisk(&["inspect", &t]);
        assert_eq!(out.code, 2, "{t}: {}", out.stderr);
        assert!(out.stderr.contains("fix:"), "{}", out.stderr);
        assert!(!out.stderr.contains("failing"), "{t}: {}", out.stderr);
    }
}

#[test]
fn bench_write_all_refusal_reads_well() {
    let s = Scratch::new();
    let img = s.image("b.img", 64 << 20);
    let p = common::s(&img);
    let out = afdisk(&["bench", &p, "--write", "all", "--duration", "1"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(!out.stderr.contains("on it on"), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "refusing to run a write benchmark that destroys the data on {p}"
        )),
        "{}",
        out.stderr
    );
    // The wrong token names the same operation.
    let out = afdisk(&[
        "bench",
        &p,
        "--write",
        "all",
        "--duration",
        "1",
        "--yes",
        "--confirm",
        "nope",
    ]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(!out.stderr.contains("on it on"), "{}", out.stderr);
}

#[test]
fn counts_take_the_right_number() {
    let s = Scratch::new();
    let one = good_gpt(&s);
    let out = afdisk(&["plan", &one, "--preset", "data"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("with 1 partition;"), "{}", out.stderr);
    let out = afdisk(&["check", &one]);
    assert!(
        out.stdout.contains("(1 partition aligned)"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("partition(s)"), "{}", out.stdout);
}

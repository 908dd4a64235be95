//! Shared test fixtures: sparse images, loop devices the test creates itself (detached by a drop guard), the
//! peers (sfdisk, sgdisk) as fixture makers and oracles, and runners for the afdisk binary.
//!
//! Terms: a *target* is the path afdisk is given (an image file or a loop device); *backups* is the directory
//! a writing run saves its backups in (`AFDISK_BACKUP_DIR`); a *confirmed* run is a writing subcommand with
//! `--yes --confirm TOKEN --json`, as a script runs it; a *trace* is the output file of `strace -o`.
#![allow(dead_code)]

pub mod peers;
pub mod rng;
pub mod tmux;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const MIB: u64 = 1 << 20;

/// A test path as the &str argv of afdisk and the peers (test paths are UTF-8; a non-UTF-8 one panics here
/// rather than being passed on lossily).
pub fn s(p: &Path) -> String {
    p.to_str().expect("utf-8 test path").to_string()
}

/// A JSON file (a plan or a backup) as afdisk wrote it.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Creates (or truncates) `path` as a sparse file of `size` bytes.
pub fn sparse(path: &Path, size: u64) {
    std::fs::File::create(path)
        .and_then(|f| f.set_len(size))
        .unwrap_or_else(|e| panic!("cannot create image {}: {e}", path.display()));
}

/// Runs a peer tool with argv (never a shell string); panics with its stderr when it fails.
pub fn run(prog: &str, args: &[&str]) -> Output {
    let out = Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {prog}: {e} (install it: see .ci/run)"));
    assert!(
        out.status.success(),
        "{prog} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs a peer tool feeding `stdin`.
pub fn run_stdin(prog: &str, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(prog)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {prog}: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{prog} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub struct Afdisk {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Afdisk {
    fn from(out: Output) -> Self {
        Afdisk {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Afdisk {
    /// The `backup_file` of a confirmed writing run's JSON report (where it saved what it overwrote).
    pub fn backup_file(&self) -> String {
        self.json()["backup_file"]
            .as_str()
            .unwrap_or_else(|| panic!("no backup_file in: {}{}", self.stdout, self.stderr))
            .to_string()
    }
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "afdisk printed invalid JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }
    /// The outcome object of an `--json` run that printed progress lines first (an apply that moves data):
    /// the last pretty-printed object.
    pub fn outcome(&self) -> Value {
        let last = self.stdout.rfind("\n{\n").map_or(0, |i| i + 1);
        serde_json::from_str(&self.stdout[last..])
            .unwrap_or_else(|e| panic!("no JSON outcome ({e}):\n{}\n{}", self.stdout, self.stderr))
    }
}

pub fn afdisk(args: &[&str]) -> Afdisk {
    Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .output()
        .expect("run afdisk")
        .into()
}

/// Runs afdisk with its backups in `backups` (argv may be OsStr: paths need not be UTF-8).
pub fn afdisk_in<S: AsRef<OsStr>>(args: &[S], backups: &Path) -> Afdisk {
    Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("AFDISK_BACKUP_DIR", backups)
        .output()
        .expect("run afdisk")
        .into()
}

/// Runs afdisk with its backups in `backups`, stdin closed, and a deadline: a run that blocks (on a FIFO) or
/// reads forever (/dev/zero) fails the test instead of hanging it.
pub fn afdisk_within<S: AsRef<OsStr>>(args: &[S], backups: &Path, limit: Duration) -> Afdisk {
    let mut child = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("AFDISK_BACKUP_DIR", backups)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run afdisk");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let shown: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
            panic!("afdisk {shown:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output").into()
}

/// A writing subcommand confirmed for scripts (`--yes --confirm TOKEN --json`), with its backups in `backups`.
pub fn confirmed(args: &[&str], token: &str, backups: &Path) -> Afdisk {
    let mut a = args.to_vec();
    a.extend(["--yes", "--confirm", token, "--json"]);
    afdisk_in(&a, backups)
}

/// `afdisk apply TARGET --plan PLAN_FILE`, confirmed.
pub fn apply(target: &str, plan_file: &Path, token: &str, backups: &Path) -> Afdisk {
    confirmed(&["apply", target, "--plan", &s(plan_file)], token, backups)
}

/// `afdisk restore TARGET BACKUP_FILE`, confirmed.
pub fn restore(target: &str, backup_file: &str, token: &str, backups: &Path) -> Afdisk {
    confirmed(&["restore", target, backup_file], token, backups)
}

/// Runs `afdisk plan TARGET ARGS -o FILE` and returns the plan.
pub fn plan(target: &str, args: &[&str], out: &Path) -> Value {
    let o = s(out);
    let mut a = vec!["plan", target];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", &o]);
    let r = afdisk(&a);
    assert_eq!(r.code, 0, "plan failed: {}{}", r.stdout, r.stderr);
    read_json(out)
}

/// `afdisk inspect TARGET --json EXTRA`, which must succeed.
pub fn inspect_with(target: &str, extra: &[&str]) -> Value {
    let mut args = vec!["inspect", target, "--json"];
    args.extend_from_slice(extra);
    let r = afdisk(&args);
    assert_eq!(r.code, 0, "inspect {target} failed: {}", r.stderr);
    r.json()
}

/// `afdisk inspect TARGET --json`, which must succeed.
pub fn inspect(target: &str) -> Value {
    inspect_with(target, &[])
}

/// Runs afdisk under `strace STRACE_ARGS` (fault injection or a trace), backups in `backups`.
pub fn afdisk_under_strace(strace_args: &[&str], args: &[&str], backups: &Path) -> Output {
    Command::new("strace")
        .args(strace_args)
        .arg(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("AFDISK_BACKUP_DIR", backups)
        .output()
        .expect("strace is installed (see .ci/run)")
}

/// The system calls of a `strace -f -o TRACE` file, one a line, without the pid `strace -f` puts first
/// (left-aligned in five columns: "812   pwrite64(").
pub fn trace_calls(trace: &Path) -> Vec<String> {
    std::fs::read_to_string(trace)
        .expect("trace")
        .lines()
        .map(|l| {
            l.trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start()
                .to_string()
        })
        .collect()
}

/// The file offsets of the `pwrite64` calls among `calls`, in order.
pub fn pwrite_offsets(calls: &[String]) -> Vec<u64> {
    calls
        .iter()
        .filter(|c| c.starts_with("pwrite64("))
        .filter_map(|c| {
            c.rsplit_once(", ")
                .and_then(|(_, o)| o.split(')').next()?.parse().ok())
        })
        .collect()
}

/// The sha256 of the file at `p` (hex, as `sha256sum` prints it): to show an image unchanged.
pub fn sha256(p: &Path) -> String {
    let out = run("sha256sum", &[&s(p)]);
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The names of the files in `dir`, sorted (none when it does not exist).
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A temporary directory with sparse image files.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Self {
        Scratch {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }
    /// A sparse image of `size` bytes.
    pub fn image(&self, name: &str, size: u64) -> PathBuf {
        let p = self.dir.path().join(name);
        sparse(&p, size);
        p
    }
    /// A path in the directory (nothing is created).
    pub fn path(&self, name: impl AsRef<Path>) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// A loop device attached by the test and detached when dropped.
pub struct LoopDev {
    pub path: String,
}

impl LoopDev {
    /// Attaches `image` with the given logical sector size. Panics (loudly) when loop devices are unavailable,
    /// unless AFDISK_TEST_NO_LOOP=1 is set, in which case it returns None and the caller skips.
    pub fn attach(image: &Path, sector_size: u32) -> Option<LoopDev> {
        Self::attach_with(image, &["--sector-size", &sector_size.to_string()])
    }
    /// Attaches `image` with more losetup options (`-P`: partition scanning), as `attach` does. The image path
    /// goes to losetup as it is (bytes, not a lossy string).
    pub fn attach_with(image: &Path, options: &[&str]) -> Option<LoopDev> {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .args(options)
            .arg(image)
            .output();
        match out {
            Ok(o) if o.status.success() => {
                let path = String::from_utf8_lossy(&o.stdout).trim().to_string();
                Some(LoopDev { path })
            }
            other => {
                if std::env::var("AFDISK_TEST_NO_LOOP").as_deref() == Ok("1") {
                    eprintln!("skipping: loop devices unavailable ({other:?})");
                    None
                } else {
                    panic!("cannot attach a loop device ({other:?}); run the tests as root, or set AFDISK_TEST_NO_LOOP=1 to skip loop tests");
                }
            }
        }
    }
    pub fn base_name(&self) -> String {
        self.path.trim_start_matches("/dev/").to_string()
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.path]).status();
    }
}

/// `sfdisk --json` of a target, or None when sfdisk finds no table. libfdisk prints notes on stdout before the
/// JSON ("omitting empty partition (6)"); they are skipped. JSON that does not parse fails the test (the oracle
/// is broken; that is no "no table").
pub fn sfdisk_json(target: &str) -> Option<Value> {
    let out = Command::new("sfdisk")
        .args(["--json", target])
        .output()
        .expect("run sfdisk");
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let json = &text[text.find('{')?..];
    Some(
        serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("sfdisk printed invalid JSON ({e}): {text}")),
    )
}

/// Writes a table with an sfdisk script, as fixture maker: quiet, no re-read, and no wiping of other
/// signatures (`-w never`: an old table's remains stay where they are).
pub fn sfdisk_script(target: &str, script: &str) {
    run_stdin(
        "sfdisk",
        &["-q", "--no-reread", "-w", "never", target],
        script,
    );
}

/// Partition number from an sfdisk node name (`img5` → 5, `/dev/loop0p3` → 3).
fn node_number(node: &str) -> u64 {
    let digits: String = node
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits
        .chars()
        .rev()
        .collect::<String>()
        .parse()
        .expect("node number")
}

/// Normalised (number, start, size, type, uuid, name) tuples, for comparing afdisk with sfdisk.
pub type Row = (u64, u64, u64, String, String, String);

fn norm_type(t: &str) -> String {
    // GPT GUIDs compare upper case; MBR types compare as hex numbers ("83" vs "0x83", "5" vs "0x05").
    if t.len() <= 4 {
        let v = u8::from_str_radix(t.trim_start_matches("0x"), 16).expect("hex type");
        format!("{v:#04x}")
    } else {
        t.to_uppercase()
    }
}

/// Rows from partition objects that share sfdisk's field names; `number` reads the partition number.
fn rows(parts: &[Value], number: impl Fn(&Value) -> u64) -> Vec<Row> {
    let mut rows: Vec<Row> = parts
        .iter()
        .map(|p| {
            (
                number(p),
                p["start"].as_u64().expect("start"),
                p["size"].as_u64().expect("size"),
                norm_type(p["type"].as_str().expect("type")),
                p["uuid"].as_str().unwrap_or("").to_uppercase(),
                p["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

pub fn sfdisk_rows(v: &Value) -> Vec<Row> {
    let parts = v["partitiontable"]["partitions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    rows(&parts, |p| node_number(p["node"].as_str().expect("node")))
}

pub fn afdisk_rows(v: &Value) -> Vec<Row> {
    let parts = v["partitions"].as_array().cloned().unwrap_or_default();
    rows(&parts, |p| p["number"].as_u64().expect("number"))
}

/// Finding codes of a report.
pub fn codes(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["code"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Overwrites bytes in a file at an offset (to corrupt fixtures on purpose).
pub fn poke(path: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open for poke");
    f.write_all_at(bytes, offset).expect("poke");
}

/// Reads `len` bytes of a file at an offset (for large sparse images that must not be read whole).
pub fn peek(path: &Path, offset: u64, len: usize) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).expect("open for peek");
    let mut b = vec![0u8; len];
    f.read_exact_at(&mut b, offset).expect("peek");
    b
}

/// `g.img`, a 64 MiB GPT image made by sgdisk: partition 1 off 4 KiB (2049), partition 2 aligned and named.
pub fn gpt_image_2049(sc: &Scratch) -> std::path::PathBuf {
    let img = sc.image("g.img", 64 * MIB);
    run(
        "sgdisk",
        &[
            "-a",
            "1",
            "-n",
            "1:2049:+8M",
            "-n",
            "2:34816:+8M",
            "-c",
            "2:data",
            &s(&img),
        ],
    );
    img
}

/// `d.img`, a 64 MiB dos image made by sfdisk: a primary at 63, an extended container with one logical partition.
pub fn dos_image_63_logical(sc: &Scratch) -> std::path::PathBuf {
    let img = sc.image("d.img", 64 * MIB);
    run_stdin(
        "sfdisk",
        &["-q", "--no-reread", "-w", "never", &s(&img)],
        "label: dos\nstart=63, size=16384, type=83\nstart=20480, type=5\nstart=22528, size=8192, type=83\n",
    );
    img
}

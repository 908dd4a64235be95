//! Shared test fixtures: sparse images, loop devices the test creates itself (detached by a drop guard), the
//! peers (sfdisk, sgdisk) as fixture makers and oracles, and a runner for the afdisk binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

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

impl Afdisk {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "afdisk printed invalid JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

pub fn afdisk(args: &[&str]) -> Afdisk {
    let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .output()
        .expect("run afdisk");
    Afdisk {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
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
        let f = std::fs::File::create(&p).expect("create image");
        f.set_len(size).expect("size image");
        p
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
        let ss = sector_size.to_string();
        let img = image.to_string_lossy().into_owned();
        let out = Command::new("losetup")
            .args(["-f", "--show", "--sector-size", &ss, &img])
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

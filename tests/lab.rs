//! The emulated-hardware lab: boots a QEMU guest with a SATA 512e, a SCSI 512e, a SCSI 4Kn and an NVMe drive
//! (tests/lab/lab.sh), runs the static afdisk inside it (tests/lab/afdisk-guest.sh) and checks what afdisk
//! reports — including the drive's own word (ATA IDENTIFY, READ CAPACITY(16), NVMe Identify).
//!
//! Needs qemu-system-x86, linux-image-amd64 and busybox-static (.ci/run installs them). The static binary is
//! taken from $AFDISK_STATIC_BIN, or built here. AFDISK_TEST_NO_LAB=1 skips (for quick local runs only).
//!
//! openSeaChest_Format is in no package registry, so its lab checks are an opt-in test, `#[ignore]`d (cargo
//! reports it as not run): `AFDISK_OPENSEACHEST=/path/to/openSeaChest_Format cargo test --test lab -- --ignored
//! lab_openseachest`. Without the binary its backend is covered by the recorded outputs (tests/fixtures/
//! openseachest-*) and the fake tools of tests/sector_size.rs. The time a switch costs against the bare tool is a
//! benchmark: tests/bench/tcg_start_cost.sh.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn static_binary() -> PathBuf {
    if let Ok(p) = std::env::var("AFDISK_STATIC_BIN") {
        return PathBuf::from(p);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--target",
            "x86_64-unknown-linux-gnu",
            "--bin",
            "afdisk",
        ])
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .current_dir(root())
        .status()
        .expect("run cargo");
    assert!(st.success(), "the static build failed");
    root().join("target/x86_64-unknown-linux-gnu/release/afdisk")
}

fn sections(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut name: Option<String> = None;
    let mut body = String::new();
    for line in text.lines() {
        if let Some(n) = line
            .strip_prefix("=== ")
            .and_then(|l| l.strip_suffix(" ==="))
        {
            if let Some(prev) = name.take() {
                out.insert(prev, std::mem::take(&mut body));
            }
            name = Some(n.to_string());
        } else if name.is_some() {
            body.push_str(line);
            body.push('\n');
        }
    }
    if let Some(prev) = name {
        out.insert(prev, body);
    }
    out
}

fn json(s: &HashMap<String, String>, name: &str) -> Value {
    let text = s
        .get(name)
        .unwrap_or_else(|| panic!("section {name} missing"));
    assert_eq!(
        s.get(&format!("{name}.rc")).map(|r| r.trim()),
        Some("0"),
        "{name} failed:\n{text}"
    );
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: invalid JSON ({e}):\n{text}"))
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Where the realign image's ext4 starts and how long it is (512-byte sectors): an XP-era start at 63.
const REALIGN_START: u64 = 63;
const REALIGN_SIZE: u64 = 100_000;
/// Where the realign puts it: the free space after it (the disk is 256 MiB) allows a destination one window
/// (32 MiB) away, so it goes to the first 1 MiB boundary past 63 sectors + 32 MiB, 33 MiB (sector 67584), and
/// moves in shift mode (its 51.2 MB footprint overlaps its old place; no window copied through the journal),
/// rather than to sector 2048.
const REALIGN_NEW_START: u64 = 33 * 2048;

/// The SCSI 512e disk's image for issue 14's lab realign, made by the peers on the host: a 256 MiB disk with an
/// MBR (sfdisk) whose partition 1 starts at sector 63 and holds an ext4 (mkfs.ext4 -d) with files of known
/// checksums. Returns the image and the `sha256sum -c` file for the files.
fn realign_image(dir: &Path) -> (PathBuf, PathBuf) {
    let _ = std::fs::remove_dir_all(dir);
    let files = dir.join("root");
    std::fs::create_dir_all(files.join("sub")).expect("realign dir");
    // Deterministic, incompressible-looking contents (xorshift), sizes not multiples of a block.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for (name, len) in [
        ("a.bin", 300_001usize),
        ("b.bin", 1_234_567),
        ("sub/c.bin", 4_097),
    ] {
        let mut v = Vec::with_capacity(len);
        while v.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.truncate(len);
        std::fs::write(files.join(name), v).expect("write a file");
    }
    std::fs::write(files.join("sub/hello.txt"), "moved, not lost\n").expect("write a file");
    let sums = run_ok(
        Command::new("sha256sum")
            .args(["a.bin", "b.bin", "sub/c.bin", "sub/hello.txt"])
            .current_dir(&files),
    );
    let sums_path = dir.join("realign.sums");
    std::fs::write(&sums_path, sums).expect("write sums");
    let fs = dir.join("p1.img");
    let f = std::fs::File::create(&fs).expect("p1 image");
    f.set_len(REALIGN_SIZE * 512).expect("size p1");
    drop(f);
    run_ok(
        Command::new("mkfs.ext4")
            .args(["-q", "-F", "-d"])
            .arg(&files)
            .arg(&fs),
    );
    let img = dir.join("scsi512e.img");
    let f = std::fs::File::create(&img).expect("disk image");
    f.set_len(256 << 20).expect("size disk");
    drop(f);
    let mut sf = Command::new("sfdisk");
    sf.arg("-q").arg(&img).stdin(std::process::Stdio::piped());
    let mut child = sf.spawn().expect("run sfdisk");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("sfdisk stdin");
        write!(
            stdin,
            "label: dos\nstart={REALIGN_START}, size={REALIGN_SIZE}, type=83\n"
        )
        .expect("feed sfdisk");
    }
    assert!(child.wait().expect("sfdisk").success(), "sfdisk failed");
    run_ok(
        Command::new("dd")
            .arg(format!("if={}", fs.display()))
            .arg(format!("of={}", img.display()))
            .args([
                "bs=512",
                &format!("seek={REALIGN_START}"),
                "conv=notrunc,sparse",
                "status=none",
            ]),
    );
    (img, sums_path)
}

#[test]
fn lab_drives_report_their_own_sectors() {
    if std::env::var("AFDISK_TEST_NO_LAB").as_deref() == Ok("1") {
        eprintln!("skipping the QEMU lab (AFDISK_TEST_NO_LAB=1)");
        return;
    }
    let bin = static_binary();
    let work = root().join("target/lab");
    std::fs::create_dir_all(&work).expect("lab dir");
    let out = work.join("afdisk.out");
    let (image, sums) = realign_image(&work.join("realign"));
    let t0 = std::time::Instant::now();
    let st = Command::new("bash")
        .arg(root().join("tests/lab/lab.sh"))
        .arg("--binary")
        .arg(&bin)
        .arg("--script")
        .arg(root().join("tests/lab/afdisk-guest.sh"))
        .arg("--out")
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .arg("--image")
        .arg({
            let mut a = std::ffi::OsString::from("scsi512e=");
            a.push(&image);
            a
        })
        .arg("--file")
        .arg(&sums)
        .status()
        .expect("run tests/lab/lab.sh");
    eprintln!("lab run: {:.1} s", t0.elapsed().as_secs_f64());
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        st.success(),
        "lab.sh failed ({st}); output:\n{text}\nconsole: {}",
        Path::new(&out).with_extension("out.console").display()
    );
    let s = sections(&text);

    let sata = json(&s, "inspect.SATA_512E");
    let d = &sata["device"];
    assert_eq!(d["transport"], "sata");
    assert_eq!(d["serial"], "AFLAB-SATA-512E");
    assert_eq!(
        (
            d["logical_sector_size"].as_u64(),
            d["physical_sector_size"].as_u64()
        ),
        (Some(512), Some(4096))
    );
    assert_eq!(d["drive"]["source"], "ata-identify", "{d}");
    assert_eq!(d["drive"]["logical_sector_size"], 512);
    assert_eq!(d["drive"]["physical_sector_size"], 4096);
    assert_eq!(d["drive"]["serial"], "AFLAB-SATA-512E");

    for (name, serial, lss) in [
        ("inspect.SCSI_512E", "AFLAB-SCSI-512E", 512),
        ("inspect.SCSI_4KN", "AFLAB-SCSI-4KN", 4096),
    ] {
        let v = json(&s, name);
        let d = &v["device"];
        assert_eq!(d["serial"], serial, "{d}");
        assert_eq!(d["logical_sector_size"], lss);
        assert_eq!(d["drive"]["source"], "scsi-read-capacity-16", "{d}");
        assert_eq!(d["drive"]["logical_sector_size"], lss);
        assert_eq!(d["drive"]["physical_sector_size"], 4096);
    }

    let nvme = json(&s, "inspect.NVME");
    let d = &nvme["device"];
    assert_eq!(d["transport"], "nvme");
    assert_eq!(d["drive"]["source"], "nvme-identify", "{d}");
    assert_eq!(d["drive"]["logical_sector_size"], 512);
    let sizes: Vec<u64> = d["drive"]["supported_logical_sizes"]
        .as_array()
        .expect("sizes")
        .iter()
        .filter_map(|x| x.as_u64())
        .collect();
    assert!(sizes.contains(&4096), "{sizes:?}");

    let list = json(&s, "list");
    let serials: Vec<&str> = list["devices"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|e| e["serial"].as_str())
        .collect();
    for want in [
        "AFLAB-SATA-512E",
        "AFLAB-SCSI-512E",
        "AFLAB-SCSI-4KN",
        "AFLAB-NVME",
    ] {
        assert!(serials.contains(&want), "list lacks {want}: {serials:?}");
    }

    let part = json(&s, "inspect.sata-part");
    let p1 = &part["partitions"][0];
    assert_eq!(p1["start"], 63);
    assert_eq!(p1["alignment"]["physical"], false);
    assert_eq!(p1["alignment"]["offset_bytes"], 3584);
    assert!(part["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["code"] == "misaligned-start" && f["partition"] == 1));
    assert!(!part["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["code"] == "kernel-drive-disagree"));
    assert_eq!(
        s.get("check.sata-part.rc").map(|r| r.trim()),
        Some("1"),
        "check exits 1 on the misaligned 512e drive"
    );
    assert!(s
        .get("text.sata-part")
        .is_some_and(|t| t.contains("MISALIGNED +3584 B")));

    // Writing to a real drive: confirmed by its serial, never by another drive's.
    assert_eq!(
        s.get("apply.sata-wrong.rc").map(|r| r.trim()),
        Some("3"),
        "another drive's serial must be refused: {:?}",
        s.get("apply.sata-wrong")
    );
    let plan = json(&s, "plan.sata");
    assert_eq!(plan["new"]["partitions"][0]["start"], 2048, "{plan}");
    // Partition 2 was held open: BLKRRPART fails with EBUSY, so partition 1 is updated alone through BLKPG,
    // and the kernel's view must be the new table.
    let applied = json(&s, "apply.sata-held");
    assert_eq!(applied["verified"], true, "{applied}");
    assert_eq!(applied["reread"]["method"], "blkpg", "{applied}");
    let kernel = |name: &str| -> Vec<u64> {
        s.get(name)
            .unwrap_or_else(|| panic!("section {name} missing"))
            .split_whitespace()
            .map(|w| w.parse().unwrap_or_else(|e| panic!("{name}: {w}: {e}")))
            .collect()
    };
    assert_eq!(kernel("kernel.after-apply"), vec![2048, 100000, 102400]);
    // The undo, with nothing held: a full re-read, and the kernel is back at 63.
    let restored = json(&s, "restore.sata");
    assert_eq!(restored["reread"]["method"], "blkrrpart", "{restored}");
    assert_eq!(restored["verified"], true, "{restored}");
    assert_eq!(kernel("kernel.after-restore"), vec![63, 100000]);

    // A fresh layout on the 4Kn drive: at 1 MiB (sector 256), seen by the kernel at once (sysfs counts
    // 512-byte units) and accepted by sfdisk.
    let fresh = json(&s, "plan.4kn");
    assert_eq!(fresh["new"]["partitions"][0]["start"], 256, "{fresh}");
    let applied = json(&s, "apply.4kn");
    assert_eq!(applied["reread"]["method"], "blkrrpart", "{applied}");
    let parts: Vec<(u64, u64)> = s
        .get("kernel.4kn")
        .expect("kernel.4kn")
        .lines()
        .map(|l| {
            let w: Vec<u64> = l
                .split_whitespace()
                .skip(1)
                .map(|w| w.parse().unwrap_or_else(|e| panic!("kernel.4kn: {l}: {e}")))
                .collect();
            (w[0], w[1])
        })
        .collect();
    assert_eq!(
        parts,
        vec![(2048, 64 * 2048), (2048 + 64 * 2048, 190 * 2048)],
        "kernel partitions of the 4Kn drive"
    );
    assert_eq!(
        s.get("verify.4kn.rc").map(|r| r.trim()),
        Some("0"),
        "sfdisk --verify: {:?}",
        s.get("verify.4kn")
    );

    // Issue 14's realign with a data move on the SCSI 512e drive: ext4 at 63 moved one window further than
    // 2048 (shift mode, see REALIGN_NEW_START), its files intact.
    let sec = |n: &str| s.get(n).map(|x| x.trim().to_string()).unwrap_or_default();
    let plan = json(&s, "realign.plan");
    assert_eq!(
        plan["new"]["partitions"][0]["start"], REALIGN_NEW_START,
        "{plan}"
    );
    let reason = plan["changes"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("further than the nearest aligned start"),
        "{plan}"
    );
    assert_eq!(
        sec("realign.apply.rc"),
        "0",
        "{}\n{}",
        sec("realign.apply"),
        sec("realign.apply.stderr")
    );
    // Progress lines (one JSON object each) come first; the report is the last object.
    let applied: Value = serde_json::Deserializer::from_str(&sec("realign.apply"))
        .into_iter::<Value>()
        .filter_map(Result::ok)
        .last()
        .unwrap_or_else(|| panic!("realign.apply: no JSON: {}", sec("realign.apply")));
    assert_eq!(applied["verified"], true, "{applied}");
    assert_eq!(applied["moved"]["moves"][0]["mode"], "shift", "{applied}");
    eprintln!(
        "lab realign: afdisk's own checks after the move: {}",
        applied["moved"]["checks"]
    );
    eprintln!(
        "lab realign: {REALIGN_SIZE} sectors of ext4 moved 63 -> {REALIGN_NEW_START} on the SCSI 512e disk in {} s (apply, whole run)",
        sec("realign.seconds")
    );
    assert_eq!(
        kernel("realign.kernel"),
        vec![REALIGN_NEW_START, REALIGN_SIZE]
    );
    assert_eq!(sec("realign.verify.rc"), "0", "{}", sec("realign.verify"));
    // e2fsck is in the guest whenever the host has it (e2fsprogs, installed by .ci/run).
    assert!(
        s.contains_key("realign.fsck"),
        "no e2fsck in the guest: install e2fsprogs on the host"
    );
    assert_eq!(sec("realign.fsck.rc"), "0", "{}", sec("realign.fsck"));
    // afdisk's own check ran too, on busybox's losetup (no --show): it attaches the loop device itself.
    assert_eq!(
        applied["moved"]["checks"][0]["result"], "clean",
        "{applied}"
    );
    assert_eq!(sec("realign.mount.rc"), "0", "{}", sec("realign.mount"));
    assert_eq!(sec("realign.sums.rc"), "0", "{}", sec("realign.sums"));
    assert_eq!(
        sec("realign.sums").matches(": OK").count(),
        4,
        "{}",
        sec("realign.sums")
    );
    check_tui_step(&sec("tui.rc"), &sec("tui.hex"));
}

/// What the TUI step's screens must show: the disk view with the drive by its serial and partition 1's
/// misalignment, then (after `z`, the last screen) the sector zoom on partition 1's start.
const TUI_DISK_VIEW: [&str; 2] = ["AFLAB-SATA-512E", "MISALIGNED +3584"];
const TUI_ZOOM: [&str; 2] = ["Sector zoom:", "partition 1 start (LBA 63)"];

/// The TUI step of afdisk-guest.sh: afdisk opened the (restored) SATA disk in a pty, zoomed into partition 1
/// with `z` and quit with `q`. It exits 0; its output, replayed on an 80x24 screen, shows the disk view in some
/// frame and the zoom in the last one.
fn check_tui_step(rc: &str, hex: &str) {
    let bytes: Vec<u8> = hex
        .split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap_or_else(|e| panic!("tui.hex: {b}: {e}")))
        .collect();
    let frames = replay(&bytes, 80, 24);
    let last = frames.last().cloned().unwrap_or_default();
    assert_eq!(rc, "0", "the TUI did not exit 0; its last screen:\n{last}");
    assert!(
        frames
            .iter()
            .any(|f| TUI_DISK_VIEW.iter().all(|w| f.contains(w))),
        "no screen shows {TUI_DISK_VIEW:?}; the last one:\n{last}"
    );
    for want in TUI_ZOOM {
        assert!(
            last.contains(want),
            "the last screen lacks {want:?}:\n{last}"
        );
    }
}

/// Replays terminal output on a `cols`x`rows` screen: printable characters at the cursor, `ESC [ row ; col H`
/// moves it, CR and LF; other escape sequences change nothing on the screen. A frame ends where the program
/// hides the cursor (`ESC [ ? 25 l`, after each draw) and at the end. Returns each frame's text, a line a row.
fn replay(bytes: &[u8], cols: usize, rows: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut screen = vec![vec![' '; cols]; rows];
    let (mut r, mut c) = (0usize, 0usize);
    let mut frames = Vec::new();
    let show = |s: &Vec<Vec<char>>| {
        s.iter()
            .map(|l| l.iter().collect::<String>().trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut it = text.chars().peekable();
    while let Some(ch) = it.next() {
        match ch {
            '\u{1b}' => {
                if it.peek() != Some(&'[') {
                    it.next();
                    continue;
                }
                it.next();
                let mut params = String::new();
                let mut fin = ' ';
                for x in it.by_ref() {
                    if ('@'..='~').contains(&x) {
                        fin = x;
                        break;
                    }
                    params.push(x);
                }
                match fin {
                    'H' | 'f' => {
                        let mut n = params
                            .split(';')
                            .map(|p| p.parse::<usize>().unwrap_or(1).max(1));
                        r = (n.next().unwrap_or(1) - 1).min(rows - 1);
                        c = (n.next().unwrap_or(1) - 1).min(cols - 1);
                    }
                    'l' if params == "?25" => frames.push(show(&screen)),
                    _ => {}
                }
            }
            '\r' => c = 0,
            '\n' => r = (r + 1).min(rows - 1),
            x if !x.is_control() && c < cols => {
                screen[r][c] = x;
                c += 1;
            }
            _ => {}
        }
    }
    frames.push(show(&screen));
    frames
}

/// The replay keeps a cell that a later frame does not rewrite, as the terminal does.
#[test]
fn replay_keeps_cells_a_redraw_leaves() {
    let out = b"\x1b[?1049h\x1b[1;1H\x1b[1mSector zoom\x1b[22m\x1b[?25l\x1b[1;1HV\x1b[1;3Hk\x1b[2;2Hx\x1b[?25l";
    let frames = replay(out, 20, 3);
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[0], "Sector zoom\n\n");
    assert_eq!(frames[1], "Vektor zoom\n x\n");
}

/// openSeaChest_Format for the opt-in test: the path in `AFDISK_OPENSEACHEST`. Set but not a file is an error,
/// never a quiet skip.
fn openseachest() -> PathBuf {
    let p = std::env::var_os("AFDISK_OPENSEACHEST").map(PathBuf::from).expect(
        "lab_openseachest_format_switch needs AFDISK_OPENSEACHEST=/path/to/openSeaChest_Format (the binary is in \
         no package registry)",
    );
    assert!(
        p.is_file(),
        "AFDISK_OPENSEACHEST={}: no such file",
        p.display()
    );
    p
}

/// Boots the lab with `script` (a file of tests/lab/), `files` passed with --file, and returns its sections.
fn lab_run(script: &str, out_name: &str, files: &[&Path]) -> HashMap<String, String> {
    let bin = static_binary();
    let work = root().join("target/lab");
    std::fs::create_dir_all(&work).expect("lab dir");
    let out = work.join(out_name);
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("tests/lab/lab.sh"))
        .arg("--binary")
        .arg(&bin)
        .arg("--script")
        .arg(root().join("tests/lab").join(script))
        .arg("--out")
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .args(["--timeout", "600"]);
    for f in files {
        cmd.arg("--file").arg(f);
    }
    let st = cmd.status().expect("run tests/lab/lab.sh");
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(st.success(), "lab.sh failed ({st}); output:\n{text}");
    sections(&text)
}

/// A `--json` run of `afdisk sector-size --set` (stdout only) and its exit status.
fn switch_json(s: &HashMap<String, String>, name: &str) -> (Value, String) {
    let text = s
        .get(name)
        .unwrap_or_else(|| panic!("section {name} missing"));
    let rc = s
        .get(&format!("{name}.rc"))
        .map(|r| r.trim().to_string())
        .unwrap_or_default();
    let err = s
        .get(&format!("{name}.stderr"))
        .cloned()
        .unwrap_or_default();
    let v = serde_json::from_str(text).unwrap_or_else(|e| {
        panic!("{name} (exit {rc}): invalid JSON ({e}):\n{text}\nstderr:\n{err}")
    });
    (v, rc)
}

fn argv_of(v: &Value) -> String {
    v["plan"]["argv"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

#[test]
fn lab_sector_size_switch() {
    if std::env::var("AFDISK_TEST_NO_LAB").as_deref() == Ok("1") {
        eprintln!("skipping the QEMU lab (AFDISK_TEST_NO_LAB=1)");
        return;
    }
    let s = lab_run("sector-size-guest.sh", "sector-size.out", &[]);
    let sec = |n: &str| s.get(n).map(|x| x.trim().to_string()).unwrap_or_default();

    // Status: both sizes from the drive (NVMe LBA formats), nvme-cli as the tool.
    let st = json(&s, "status.nvme");
    let sizes: Vec<u64> = st["supported"]
        .as_array()
        .expect("supported")
        .iter()
        .filter(|x| x["source"] == "drive")
        .filter_map(|x| x["size"].as_u64())
        .collect();
    assert_eq!(sizes, vec![512, 4096], "{st}");
    assert_eq!(st["tool"]["kind"], "nvme", "{st}");

    // nvme-cli, 512 -> 4096 -> 512: re-probed, and the kernel agrees.
    let (v, rc) = switch_json(&s, "nvme.to4096");
    assert_eq!(rc, "0", "{v}");
    assert_eq!(v["outcome"]["verdict"], "switched", "{v}");
    assert_eq!(v["outcome"]["drive_now"], 4096);
    assert_eq!(v["outcome"]["kernel_now"], 4096);
    assert!(
        argv_of(&v).ends_with("-n 1 --lbaf=4 --force"),
        "{}",
        argv_of(&v)
    );
    assert_eq!(sec("nvme.kernel4096"), "4096");
    let st = json(&s, "nvme.status4096");
    assert_eq!(st["current"][1]["size"], 4096, "{st}");
    let (v, rc) = switch_json(&s, "nvme.to512");
    assert_eq!(
        (rc.as_str(), &v["outcome"]["verdict"]),
        ("0", &Value::from("switched")),
        "{v}"
    );
    assert!(argv_of(&v).contains("--lbaf=0"), "{}", argv_of(&v));
    assert_eq!(sec("nvme.kernel512"), "512");

    // A mounted namespace is refused, nothing run.
    assert_eq!(sec("mounted.mount.rc"), "0", "{}", sec("mounted.mount"));
    assert_eq!(sec("mounted.set.rc"), "3", "{}", sec("mounted.set"));
    assert!(
        sec("mounted.set").contains("in use"),
        "{}",
        sec("mounted.set")
    );
    assert_eq!(sec("mounted.kernel"), "512");

    // The SATA disk says it has no SET SECTOR CONFIGURATION: a plain switch is refused, nothing run.
    assert_eq!(sec("sata.refused.rc"), "3", "{}", sec("sata.refused"));
    assert!(
        sec("sata.refused").contains("does not list 4096"),
        "{}",
        sec("sata.refused")
    );
    // With --let-tool-decide, hdparm runs and fails (QEMU lacks the command), reported as such, nothing changed.
    let (v, rc) = switch_json(&s, "hdparm.sata");
    assert_eq!(rc, "2", "{v}");
    assert_eq!(v["outcome"]["verdict"], "not-switched", "{v}");
    assert!(v["plan"]["warnings"]
        .as_array()
        .is_some_and(|w| w.iter().any(|x| x["key"] == "hdparm-timeout")));
    assert_eq!(sec("hdparm.kernel"), "512");

    // sg_format on the SCSI 512e disk: 4096, and the 32768-byte physical sector QEMU then reports is shown.
    let (v, rc) = switch_json(&s, "scsi.to4096");
    assert_eq!(rc, "0", "{v}\n{}", sec("scsi.to4096.stderr"));
    assert_eq!(v["outcome"]["verdict"], "switched", "{v}");
    assert!(
        argv_of(&v).contains("--format --ffmt=1 --size=4096"),
        "{}",
        argv_of(&v)
    );
    assert_eq!(sec("scsi.kernel"), "4096");
    let st = json(&s, "scsi.status");
    assert_eq!(st["physical_sector_size"], 32768, "{st}");

    // The USB disk is refused.
    assert!(
        sec("usb.dev").starts_with("/dev/sd"),
        "no USB disk: {}",
        sec("usb.dev")
    );
    assert_eq!(sec("usb.set.rc"), "3", "{}", sec("usb.set"));
    assert!(sec("usb.set").contains("USB"), "{}", sec("usb.set"));
}

/// openSeaChest_Format, for real (opt-in: it is in no package registry; see the module doc): the NVMe namespace
/// both ways by format index, and "not supported" (exit 4) on the SATA and SCSI disks.
#[test]
#[ignore = "needs AFDISK_OPENSEACHEST=/path/to/openSeaChest_Format (in no package registry)"]
fn lab_openseachest_format_switch() {
    let osc = openseachest();
    let s = lab_run("openseachest-guest.sh", "openseachest.out", &[&osc]);
    let sec = |n: &str| s.get(n).map(|x| x.trim().to_string()).unwrap_or_default();
    assert_eq!(sec("osc.present"), "yes");
    let (v, rc) = switch_json(&s, "osc.nvme.to4096");
    assert_eq!(rc, "0", "{v}");
    assert_eq!(v["outcome"]["verdict"], "switched", "{v}");
    assert!(argv_of(&v).contains("--nvmFormat 4 "), "{}", argv_of(&v));
    assert_eq!(sec("osc.nvme.kernel4096"), "4096");
    let (v, rc) = switch_json(&s, "osc.nvme.to512");
    assert_eq!(rc, "0", "{v}");
    assert!(argv_of(&v).contains("--nvmFormat 0 "), "{}", argv_of(&v));
    assert_eq!(sec("osc.nvme.kernel512"), "512");
    for name in ["osc.sata", "osc.scsi4kn"] {
        let (v, rc) = switch_json(&s, name);
        assert_eq!(rc, "2", "{name}: {v}");
        assert_eq!(v["outcome"]["verdict"], "not-switched", "{name}: {v}");
        assert_eq!(v["outcome"]["exit"], 4, "{name}: {v}");
        assert!(
            v["outcome"]["tool"]["reason"]
                .as_str()
                .is_some_and(|r| r.contains("not supported")),
            "{name}: {v}"
        );
    }
}

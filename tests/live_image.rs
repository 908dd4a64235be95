//! The bootable rescue image (assets/live, issue 26) under QEMU: booted with SeaBIOS and with OVMF, as a CD and as
//! a USB stick (usb-storage on qemu-xhci), with the emulated-hardware lab's drives (SATA 512e, SCSI 512e and 4Kn,
//! NVMe), afdisk driven over the guest's serial console in tmux.
//!
//! Terms: the *ISO* is `afdisk-live.iso` from `assets/live/build.sh`; the *stick* is a raw file holding it as `dd`
//! writes it (assets/live/qemu.sh makes it); the *serial entry* is the GRUB menu's second entry, which starts
//! afdisk on ttyS0 too; the *shell* is the one afdisk's console wrapper offers after afdisk exits (key s).
//!
//! The ISO is $AFDISK_LIVE_ISO (.ci/run builds it, with the stand-in vendor tool assets/live/standin/), else this
//! test builds one into target/live-test (needs the packages .ci/run installs and $AFDISK_STATIC_BIN or a static
//! build). Needs qemu-system-x86, ovmf and tmux. AFDISK_TEST_NO_LIVE=1 skips (quick local runs only). Times are
//! not asserted (tests/bench/live_boot.sh measures them); the waits below only bound a hung guest.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long one step may take before the guest counts as hung (TCG on a loaded 2-core machine is slow).
const STEP: Duration = Duration::from_secs(900);
/// How long GRUB's menu may take to answer the arrow keys.
const MENU: Duration = Duration::from_secs(120);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn skip() -> bool {
    let skip = std::env::var_os("AFDISK_TEST_NO_LIVE").is_some_and(|v| v == "1");
    if skip {
        eprintln!("live_image: skipped (AFDISK_TEST_NO_LIVE=1)");
    }
    skip
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The ISO under test: $AFDISK_LIVE_ISO, else one built here once (with the stand-in vendor tool).
fn iso() -> &'static Path {
    static ISO: OnceLock<PathBuf> = OnceLock::new();
    ISO.get_or_init(|| {
        if let Some(p) = std::env::var_os("AFDISK_LIVE_ISO") {
            return PathBuf::from(p);
        }
        build_iso(&root().join("target/live-test"))
    })
}

/// The static afdisk the ISO carries: $AFDISK_STATIC_BIN, else built here once.
fn static_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("AFDISK_STATIC_BIN") {
        Some(b) => PathBuf::from(b),
        None => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            run_ok(
                Command::new(cargo)
                    .args(["build", "--release", "--target", "x86_64-unknown-linux-gnu"])
                    .args(["--bin", "afdisk"])
                    .env("RUSTFLAGS", "-C target-feature=+crt-static")
                    .current_dir(root()),
            );
            root().join("target/x86_64-unknown-linux-gnu/release/afdisk")
        }
    })
}

/// Builds the ISO into `out` as .ci/run does (the static afdisk, the stand-in vendor tool, the epoch
/// $SOURCE_DATE_EPOCH or else the last commit's); returns its path.
fn build_iso(out: &Path) -> PathBuf {
    run_ok(
        Command::new("bash")
            .arg(root().join("assets/live/build.sh"))
            .arg(out)
            .arg("--afdisk")
            .arg(static_bin())
            .arg("--with-tools")
            .arg(root().join("assets/live/standin")),
    );
    out.join("afdisk-live.iso")
}

/// The serial line's bytes as text, escape sequences and carriage returns removed.
fn plain(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    let text = String::from_utf8_lossy(raw);
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => {
                if it.peek() == Some(&'[') {
                    it.next();
                    // CSI: parameters and intermediates up to a final byte in @..~
                    for d in it.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                } else {
                    it.next();
                }
            }
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// One QEMU guest in a tmux session (132x40), its serial line logged; killed on drop.
struct Vm {
    session: String,
    log: PathBuf,
    /// How much of the log earlier waits consumed: a wait looks only at what came after.
    seen: usize,
    dir: tempfile::TempDir,
    shell_n: u32,
}

impl Vm {
    /// Starts the ISO with `firmware` (bios, uefi) from `media` (cd, usb); `prepare` fills the drives' directory
    /// first (a drive file it creates replaces the empty one).
    fn start(name: &str, firmware: &str, media: &str, prepare: impl FnOnce(&Path)) -> Vm {
        let dir = tempfile::Builder::new()
            .prefix("afdisk-live-")
            .tempdir()
            .expect("temporary directory");
        prepare(dir.path());
        let session = format!("afdisk-live-{name}-{}", std::process::id());
        let log = dir.path().join("serial.log");
        let qemu = format!(
            "bash {} --iso {} --disks {} --firmware {firmware} --media {media} 2>{}; sleep 600",
            root().join("assets/live/qemu.sh").display(),
            iso().display(),
            dir.path().display(),
            dir.path().join("qemu.err").display()
        );
        run_ok(Command::new("tmux").args([
            "new-session",
            "-d",
            "-s",
            &session,
            "-x",
            "132",
            "-y",
            "40",
            &qemu,
        ]));
        let vm = Vm {
            session,
            log,
            seen: 0,
            dir,
            shell_n: 0,
        };
        run_ok(Command::new("tmux").args([
            "pipe-pane",
            "-t",
            &vm.session,
            "-o",
            &format!("cat >> {}", vm.log.display()),
        ]));
        vm
    }

    fn text(&self) -> String {
        plain(&std::fs::read(&self.log).unwrap_or_default())
    }

    fn diagnose(&self) -> String {
        let t = self.text();
        let tail: String = t
            .chars()
            .skip(t.chars().count().saturating_sub(3000))
            .collect();
        let err = std::fs::read_to_string(self.dir.path().join("qemu.err")).unwrap_or_default();
        format!(
            "screen:\n{}\nserial tail:\n{tail}\nqemu: {err}",
            self.screen()
        )
    }

    /// Waits until `needle` appears in the serial output after what earlier waits consumed; consumes up to it.
    fn wait_log(&mut self, needle: &str) {
        let t0 = Instant::now();
        loop {
            let t = self.text();
            if let Some(i) = t.get(self.seen..).and_then(|s| s.find(needle)) {
                self.seen += i + needle.len();
                return;
            }
            assert!(
                t0.elapsed() < STEP,
                "no {needle:?} on the serial line\n{}",
                self.diagnose()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn keys(&self, keys: &[&str]) {
        run_ok(
            Command::new("tmux")
                .args(["send-keys", "-t", &self.session])
                .args(keys),
        );
    }

    fn literal(&self, s: &str) {
        run_ok(Command::new("tmux").args(["send-keys", "-t", &self.session, "-l", s]));
    }

    fn screen(&self) -> String {
        Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.session])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// Waits until the screen shows every one of `needles`; returns the screen.
    fn wait_screen(&self, needles: &[&str]) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if needles.iter().all(|n| s.contains(n)) {
                return s;
            }
            assert!(
                t0.elapsed() < STEP,
                "the screen never showed {needles:?}\n{}",
                self.diagnose()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// Moves GRUB's highlight to the serial entry. A loaded host can split the arrow key's escape sequence: GRUB
    /// then stops its countdown on the lone Esc and ignores the rest, so the key is sent again, looking at where the
    /// highlight is each time (Up when a late key carried it past the entry).
    fn pick_serial_entry(&self) {
        let t0 = Instant::now();
        loop {
            let s = highlighted(&self.screen());
            let key = if s.contains("*afdisk rescue (serial") {
                return;
            } else if s.contains("*afdisk rescue (screen, safe") {
                "Up"
            } else {
                "Down"
            };
            assert!(
                t0.elapsed() < MENU,
                "GRUB's highlight never reached the serial entry\n{}",
                self.diagnose()
            );
            self.keys(&[key]);
            let sent = Instant::now();
            while sent.elapsed() < Duration::from_secs(8) && highlighted(&self.screen()) == s {
                std::thread::sleep(Duration::from_millis(300));
            }
        }
    }

    /// Picks GRUB's serial entry and waits for afdisk's device list on the serial console.
    fn boot_to_list(&mut self) -> String {
        self.wait_log("automatically in");
        self.pick_serial_entry();
        self.keys(&["Enter"]);
        self.wait_screen(&["Disks (", "AFLAB"])
    }

    /// Quits afdisk (q) and opens the console wrapper's shell (s).
    fn open_shell(&mut self) {
        self.keys(&["q"]);
        self.wait_log("afdisk exited");
        self.keys(&["s", "Enter"]);
        self.wait_log("Root shell");
    }

    /// Runs `cmd` in the guest's shell; returns its output (stdout and stderr) and exit status.
    fn sh(&mut self, cmd: &str) -> (String, i32) {
        self.shell_n += 1;
        let n = self.shell_n;
        // The typed line holds `@@B%s@@`, never `@@B7@@`: only the printf's output matches the markers.
        self.literal(&format!(
            "{{ {cmd} ; }} >/tmp/o 2>&1; echo \"rc=$?\" >>/tmp/o; printf '@@B%s@@\\n' {n}; cat /tmp/o; printf '@@E%s@@\\n' {n}"
        ));
        self.keys(&["Enter"]);
        self.wait_log(&format!("@@B{n}@@\n"));
        let start = self.seen;
        self.wait_log(&format!("@@E{n}@@"));
        let t = self.text();
        let body = &t[start..self.seen - format!("@@E{n}@@").len()];
        let (out, rc) = body
            .trim_end()
            .rsplit_once("rc=")
            .unwrap_or_else(|| panic!("no exit status in {body:?}"));
        (out.to_string(), rc.trim().parse().unwrap_or(-1))
    }

    fn sh_ok(&mut self, cmd: &str) -> String {
        let (out, rc) = self.sh(cmd);
        assert_eq!(rc, 0, "`{cmd}` exited {rc}:\n{out}");
        out
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.session])
            .output();
    }
}

/// GRUB's highlighted menu line (marked `*` on a serial terminal); empty before the menu is drawn. GRUB draws
/// the menu with or without a frame (`|*afdisk …|`), depending on the terminal.
fn highlighted(screen: &str) -> String {
    screen
        .lines()
        .find_map(|l| {
            l.find("*afdisk")
                .map(|i| l[i..].trim_end_matches([' ', '|']))
        })
        .unwrap_or_default()
        .to_string()
}

/// The device list's rows: every lab drive with its model, the boot stick (when there is one) in use.
fn check_list(screen: &str, stick: bool) {
    for model in [
        "MODEL",
        "AFLAB SATA 512e",
        "SCSI 512e",
        "SCSI 4Kn",
        "QEMU NVMe Ctrl",
    ] {
        assert!(
            screen.contains(model),
            "no {model:?} in the list:\n{screen}"
        );
    }
    assert!(
        screen.contains("afdisk rescue: booted from /dev/"),
        "no banner:\n{screen}"
    );
    if stick {
        let row = screen
            .lines()
            .find(|l| l.contains("QEMU HARDDISK"))
            .unwrap_or_else(|| panic!("the stick is not listed:\n{screen}"));
        assert!(
            row.contains("in use"),
            "the stick is not in use: {row}\n{screen}"
        );
    }
}

/// Guest shell: the device node of the lab drive whose SCSI/ATA model starts with `model`.
fn dev_of(model: &str) -> String {
    format!(
        "for b in /sys/block/sd*; do case \"$(cat $b/device/model)\" in \"{model}\"*) echo /dev/${{b##*/}};; esac; done"
    )
}

/// Host: the drive image `name` (256 MiB) with the dos table of the sfdisk script `script`.
fn dos_image(dir: &Path, name: &str, script: &[u8]) -> PathBuf {
    let img = dir.join(name);
    let f = std::fs::File::create(&img).expect("create the drive image");
    f.set_len(256 << 20).expect("size the drive image");
    let mut c = Command::new("sfdisk");
    c.args(["-q", "--no-reread"]).arg(&img);
    c.stdin(std::process::Stdio::piped());
    let mut child = c.spawn().expect("run sfdisk");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("sfdisk's stdin")
        .write_all(script)
        .expect("write sfdisk's script");
    assert!(child.wait().expect("sfdisk").success(), "sfdisk failed");
    img
}

/// Host: the SCSI 512e drive starts with an MBR whose one partition starts at sector 63 (misaligned).
fn misaligned_scsi_disk(dir: &Path) {
    dos_image(
        dir,
        "scsi512e.img",
        b"label: dos\nstart=63, size=100000, type=83\n",
    );
}

/// Host: the SATA 512e drive holds an MBR whose one partition starts at sector 63 (misaligned) and holds an
/// ext4 filesystem with one file of known bytes (`/data.bin`, 1 MiB); returns the file's SHA-256 as sha256sum
/// prints it. Small enough that the move's journal (which holds every window of a shift this short) fits on
/// the stick's 8 MiB partition beside the backups.
fn misaligned_ext4_sata_disk(dir: &Path) -> String {
    let img = dos_image(
        dir,
        "sata512e.img",
        b"label: dos\nstart=63, size=8192, type=83\n",
    );
    let content = dir.join("content");
    std::fs::create_dir(&content).expect("content directory");
    let data: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(content.join("data.bin"), &data).expect("write data.bin");
    // 8192 sectors of 512 bytes = 4096 KiB.
    run_ok(
        Command::new("mkfs.ext4")
            .args(["-q", "-F", "-E", "offset=32256", "-d"])
            .arg(&content)
            .arg(&img)
            .arg("4096k"),
    );
    let sum = run_ok(Command::new("sha256sum").arg(content.join("data.bin")));
    sum.split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Guest: a realign that moves the ext4 partition of the SATA disk: its journal is on the stick's partition
/// (retired as `.done` when the move is finished), the moved filesystem passes e2fsck, and its file is intact.
fn check_move_journal_on_stick(vm: &mut Vm, sha: &str) {
    let d = vm.sh_ok(&dev_of("AFLAB SATA 512e")).trim().to_string();
    assert!(d.starts_with("/dev/sd"), "no SATA 512e disk: {d}");
    vm.sh_ok(&format!("afdisk plan {d} --realign -o /tmp/m.json"));
    vm.sh_ok(&format!(
        "afdisk apply {d} --plan /tmp/m.json --yes --confirm AFLAB-SATA-512E"
    ));
    let table = vm.sh_ok(&format!("sfdisk -d {d}"));
    // Realigned: on a 1 MiB boundary (the plan may place it further than 2048 so that no window needs the
    // journal's copy).
    let start: u64 = table
        .lines()
        .find_map(|l| l.split("start=").nth(1))
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no start in:\n{table}"));
    assert!(
        start != 63 && start.is_multiple_of(2048),
        "not moved:\n{table}"
    );
    let journals = vm.sh_ok("ls $AFDISK_BACKUP_DIR");
    assert!(
        journals.contains(".move-journal.done"),
        "no retired move journal on the stick: {journals}"
    );
    vm.sh_ok(&format!(
        "blockdev --rereadpt {d} || partx -u {d}; e2fsck -fn {d}1"
    ));
    let got = vm.sh_ok(&format!(
        "debugfs -R 'cat /data.bin' {d}1 2>/dev/null | sha256sum"
    ));
    assert!(got.contains(sha), "data.bin changed in the move: {got}");
}

/// Guest: backups go to the stick's FAT partition, and afdisk lists the stick as in use and refuses to write it.
fn check_stick_refused(vm: &mut Vm) {
    let env = vm
        .sh_ok("echo boot=$AFDISK_LIVE_BOOT_DEV data=$AFDISK_LIVE_DATA_DEV dir=$AFDISK_BACKUP_DIR");
    assert!(env.contains("dir=/media/afdata/afdisk/backups"), "{env}");
    let boot = env
        .split_whitespace()
        .find_map(|w| w.strip_prefix("boot="))
        .filter(|b| b.starts_with("/dev/sd"))
        .unwrap_or_else(|| panic!("no boot disk: {env}"))
        .to_string();
    // afdisk refuses to write to the stick: it is in use (its partitions are mounted).
    let list = vm.sh_ok("afdisk list --json");
    let v: serde_json::Value =
        serde_json::from_str(list.trim()).unwrap_or_else(|e| panic!("{e}: {list}"));
    let stick = v["devices"]
        .as_array()
        .and_then(|ds| ds.iter().find(|d| d["path"] == boot.as_str()))
        .unwrap_or_else(|| panic!("{boot} not in {list}"));
    let uses = stick["in_use"].to_string();
    assert!(
        uses.contains("/media/afdata"),
        "the stick is not in use: {stick}"
    );
    let (out, rc) = vm.sh(&format!(
        "afdisk backup {boot} -o /tmp/stick.bak && afdisk restore {boot} /tmp/stick.bak --yes --confirm ${{AFDISK_LIVE_BOOT_DEV#/dev/}}"
    ));
    assert_ne!(rc, 0, "a write to the boot stick was not refused:\n{out}");
    assert!(
        out.contains("in use") || out.contains("mounted"),
        "refused for another reason:\n{out}"
    );
}

/// Guest: the vendor tool given with --with-tools is on PATH, and `afdisk sector-size` runs nvme-cli.
fn check_tools(vm: &mut Vm) {
    // The vendor tool given with --with-tools is on PATH.
    let tool = vm.sh_ok("command -v openSeaChest_Format && openSeaChest_Format --noBanner -i");
    assert!(
        tool.contains("/usr/local/sbin/openSeaChest_Format"),
        "{tool}"
    );
    assert!(tool.contains("afdisk-live stand-in"), "{tool}");
    // afdisk sector-size on the NVMe namespace runs the guest's nvme-cli (a shim on PATH records the calls).
    vm.sh_ok("mkdir -p /tmp/shim && printf '#!/bin/sh\\necho \"$*\" >>/tmp/nvme.calls\\nexec /usr/sbin/nvme \"$@\"\\n' >/tmp/shim/nvme && chmod +x /tmp/shim/nvme");
    let ss = vm.sh_ok("PATH=/tmp/shim:$PATH afdisk sector-size /dev/nvme0n1");
    assert!(ss.contains("512"), "{ss}");
    let calls = vm.sh_ok("cat /tmp/nvme.calls");
    // Without --set it only needs the tool's version (the drive's formats come from afdisk's own Identify).
    assert!(
        !calls.trim().is_empty(),
        "afdisk did not run nvme-cli:\n{ss}"
    );
    eprintln!("sector-size in the guest:\n{ss}\nnvme-cli calls: {calls}");
}

/// The most important path: BIOS, booted from the stick. afdisk lists the drives and not the stick as a target;
/// the vendor tools are on PATH; a realign on the SCSI 512e disk is applied with its backup on the stick's FAT
/// partition; after a reboot the backup is still there and restoring it gives back the table's bytes.
#[test]
fn bios_usb_realign_backup_survives_reboot() {
    if skip() {
        return;
    }
    let mut vm = Vm::start("bios-usb", "bios", "usb", misaligned_scsi_disk);
    let screen = vm.boot_to_list();
    check_list(&screen, true);
    assert!(screen.contains("kept across reboots"), "{screen}");
    vm.open_shell();
    check_stick_refused(&mut vm);
    check_tools(&mut vm);
    // The realign on the SCSI 512e disk, its backup on the stick's FAT partition.
    let d = vm.sh_ok(&dev_of("SCSI 512e")).trim().to_string();
    assert!(d.starts_with("/dev/sd"), "no SCSI 512e disk: {d}");
    let before = vm.sh_ok(&format!("dd if={d} bs=512 count=1 2>/dev/null | sha256sum"));
    vm.sh_ok(&format!("afdisk plan {d} --realign -o /tmp/p.json"));
    vm.sh_ok(&format!(
        "afdisk apply {d} --plan /tmp/p.json --yes --confirm AFLAB-SCSI-512E"
    ));
    let table = vm.sh_ok(&format!("sfdisk -d {d}"));
    assert!(
        table.contains("start=        2048"),
        "not realigned:\n{table}"
    );
    let backups = vm.sh_ok("ls $AFDISK_BACKUP_DIR && sync");
    let backup = backups
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_else(|| panic!("no backup on the stick: {backups:?}"))
        .to_string();
    // Reboot: the backup is still on the stick, and restoring it gives back the table's bytes.
    vm.literal("reboot");
    vm.keys(&["Enter"]);
    let screen = vm.boot_to_list();
    check_list(&screen, true);
    vm.open_shell();
    let again = vm.sh_ok("ls $AFDISK_BACKUP_DIR");
    assert!(
        again.contains(&backup),
        "{backup} vanished after the reboot: {again}"
    );
    let d = vm.sh_ok(&dev_of("SCSI 512e")).trim().to_string();
    vm.sh_ok(&format!(
        "afdisk restore {d} $AFDISK_BACKUP_DIR/{backup} --yes --confirm AFLAB-SCSI-512E"
    ));
    let after = vm.sh_ok(&format!("dd if={d} bs=512 count=1 2>/dev/null | sha256sum"));
    assert_eq!(after, before, "the undo did not restore sector 0");
    let table = vm.sh_ok(&format!("sfdisk -d {d}"));
    assert!(
        table.contains("start=          63"),
        "not restored:\n{table}"
    );
}

/// OVMF, booted as a CD: the drives are listed, backups go to RAM and the banner says so.
#[test]
fn uefi_cd_lists_drives_and_warns_backups_are_in_ram() {
    if skip() {
        return;
    }
    let mut vm = Vm::start("uefi-cd", "uefi", "cd", |_| {});
    let screen = vm.boot_to_list();
    check_list(&screen, false);
    assert!(screen.contains("vanish at power-off"), "{screen}");
    vm.open_shell();
    let env = vm.sh_ok("echo boot=$AFDISK_LIVE_BOOT_DEV dir=$AFDISK_BACKUP_DIR; afdisk list");
    assert!(env.contains("boot=/dev/sr0"), "{env}");
    assert!(env.contains("dir=/run/afdisk/backups"), "{env}");
}

/// OVMF from the stick, and SeaBIOS from the CD: both reach afdisk's list on the serial console; from the stick,
/// a data move runs with its journal on the stick.
#[test]
fn uefi_usb_and_bios_cd_boot_to_the_list() {
    if skip() {
        return;
    }
    let mut sha = String::new();
    let mut vm = Vm::start("uefi-usb", "uefi", "usb", |d| {
        sha = misaligned_ext4_sata_disk(d)
    });
    let screen = vm.boot_to_list();
    check_list(&screen, true);
    assert!(screen.contains("kept across reboots"), "{screen}");
    vm.open_shell();
    check_move_journal_on_stick(&mut vm, &sha);
    drop(vm);
    let mut vm = Vm::start("bios-cd", "bios", "cd", |_| {});
    let screen = vm.boot_to_list();
    check_list(&screen, false);
    assert!(screen.contains("vanish at power-off"), "{screen}");
}

/// The build is reproducible: a second build from the same packages, repository and static afdisk gives the
/// same bytes as the ISO under test (every date is the last commit's, the FAT volume ids come from it).
#[test]
fn a_second_build_gives_the_same_bytes() {
    if skip() {
        return;
    }
    let first = std::fs::read(iso()).expect("read the ISO under test");
    let dir = tempfile::tempdir().expect("tempdir");
    let second = std::fs::read(build_iso(dir.path())).expect("read the second ISO");
    let at = first.iter().zip(&second).position(|(a, b)| a != b);
    assert!(
        first.len() == second.len() && at.is_none(),
        "the builds differ: {} and {} bytes, first difference at byte {at:?} (built with a different \
         $AFDISK_STATIC_BIN, or an input of build.sh not pinned to SOURCE_DATE_EPOCH)",
        first.len(),
        second.len()
    );
}

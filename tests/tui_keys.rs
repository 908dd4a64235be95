//! Keystroke counts (issue 25, "How it is checked"): the editing tasks done in afdisk's TUI and in
//! cfdisk, both driven in tmux on the same images, every key counted (a typed character is one key, Enter and
//! the arrows one each). Each run's result is read back by sfdisk, and the two tools must have made the same
//! table, so a count is only taken of a task that was really done. Goal: afdisk needs no more keys than
//! cfdisk. Task e adds cfdisk's primary/extended question: an extended partition and a logical one in it.
//!
//! The cfdisk sequences are the ones measured in `../shared/notes/tui-editing.md` §2 (util-linux 2.38.1): the
//! prefilled size erased with Backspace (`1023M`, then `767M`), the write confirmed with `W`, `yes`, Enter;
//! quitting (one more key in both tools) is not counted. Realigning the XP demo disk has no cfdisk sequence:
//! cfdisk cannot move a partition, so only afdisk's count is reported.

mod common;

use std::path::Path;

use common::tmux::Tmux;
use common::*;

/// A tmux window whose keys are counted.
struct Counted {
    tm: Tmux,
    keys: usize,
}

impl Counted {
    fn new(tm: Tmux) -> Self {
        Counted { tm, keys: 0 }
    }

    /// Key names (`Enter`, `Down`, `BSpace`, a letter), one key each.
    fn key(&mut self, keys: &[&str]) {
        for k in keys {
            self.tm.keys(&[k]);
            self.keys += 1;
        }
    }

    /// Typed text: one key per character.
    fn text(&mut self, t: &str) {
        self.tm.type_text(t);
        self.keys += t.chars().count();
    }

    fn wait(&self, text: &str) -> String {
        self.tm.wait_for(text)
    }
}

/// `sfdisk -d`'s partition lines of `img`, reduced to start, size and type.
fn table(img: &Path) -> Vec<String> {
    let out = run("sfdisk", &["-d", &s(img)]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("start="))
        .map(|l| {
            l.split(':')
                .nth(1)
                .unwrap_or_default()
                .split(',')
                .filter(|f| {
                    ["start", "size", "type"]
                        .iter()
                        .any(|k| f.trim().starts_with(k))
                })
                .map(|f| f.split_whitespace().collect::<String>())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

fn cfdisk(img: &Path, tag: &str) -> Counted {
    Counted::new(Tmux::start(
        tag,
        &["env", "TERM=linux", "NO_COLOR=1", "cfdisk", &s(img)],
    ))
}

fn afdisk_on(img: &Path, backups: &Path, tag: &str) -> Counted {
    let backup_env = format!("AFDISK_BACKUP_DIR={}", s(backups));
    let c = Counted::new(Tmux::start(
        tag,
        &[
            "env",
            "TERM=linux",
            "NO_COLOR=1",
            &backup_env,
            env!("CARGO_BIN_EXE_afdisk"),
            &s(img),
        ],
    ));
    c.wait("n/d/t edit");
    c
}

/// afdisk's review and write: Enter on the edits, `a`, the image's name typed, Enter.
fn afdisk_write(c: &mut Counted, name: &str) {
    c.key(&["Enter"]);
    c.wait("Press a to write");
    c.key(&["a"]);
    c.wait("Confirm write");
    c.text(name);
    c.key(&["Enter"]);
    c.wait("Wrote");
}

/// cfdisk's write: `W`, `yes`, Enter.
fn cfdisk_write(c: &mut Counted) {
    c.key(&["W"]);
    c.wait("Are you sure");
    c.text("yes");
    c.key(&["Enter"]);
    c.wait("has been altered");
}

/// cfdisk's New on the free row: erase the prefilled size (`erase` Backspaces), type `size`, Enter.
fn cfdisk_new(c: &mut Counted, erase: usize, size: &str) {
    c.key(&["Enter"]);
    c.wait("Partition size:");
    c.key(&vec!["BSpace"; erase]);
    c.text(size);
    c.key(&["Enter"]);
}

/// Task a: three partitions on an empty 1 GiB disk (256 MiB, 256 MiB, the rest), GPT.
#[test]
fn three_partitions_on_an_empty_disk_take_no_more_keys_than_cfdisk() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    // cfdisk: ⏎(gpt) ⏎(New) ⌫×5 256M ⏎ ↓ ⏎ ⌫×4 256M ⏎ ↓ ⏎ ⏎(the rest) W yes ⏎.
    let img = sc.image("cf.img", 1 << 30);
    let mut cf = cfdisk(&img, "keys-a-cf");
    cf.wait("Select label type");
    cf.key(&["Enter"]);
    cf.wait("Free space");
    cfdisk_new(&mut cf, 5, "256M");
    cf.key(&["Down"]);
    cfdisk_new(&mut cf, 4, "256M");
    cf.key(&["Down"]);
    cf.key(&["Enter"]);
    cf.wait("Partition size:");
    cf.key(&["Enter"]);
    cfdisk_write(&mut cf);
    let cf_keys = cf.keys;
    cf.tm.keys(&["q"]);
    cf.tm.wait_exit();
    // afdisk: n ⏎(gpt) 256M ⏎ n 256M ⏎ n ⏎ (each new partition in the free space after the selected one;
    // Enter alone fills it), then the review and the write.
    let a = sc.image("a.img", 1 << 30);
    let mut af = afdisk_on(&a, &backups, "keys-a-af");
    // The last size is Enter alone: the rest of the free region.
    for (i, size) in ["256M", "256M", ""].iter().enumerate() {
        af.key(&["n"]);
        if i == 0 {
            // The disk is empty: which table first, as cfdisk asks (gpt is the default).
            af.wait("Select label type");
            af.key(&["Enter"]);
        }
        af.wait("New partition");
        af.text(size);
        af.key(&["Enter"]);
        af.wait(&match i {
            0 => "1 change pending".to_string(),
            n => format!("{} changes pending", n + 1),
        });
    }
    afdisk_write(&mut af, "a.img");
    let af_keys = af.keys;
    af.tm.quit_ok();
    let (want, got) = (table(&img), table(&a));
    assert_eq!(want.len(), 3, "{want:?}");
    let spans = |t: &[String]| -> Vec<String> {
        t.iter()
            .map(|l| l.split(",type").next().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(spans(&got), spans(&want), "the same partitions from both");
    eprintln!("task a (three partitions, empty 1 GiB): afdisk {af_keys} keys, cfdisk {cf_keys}");
    assert!(af_keys <= cf_keys, "afdisk {af_keys} > cfdisk {cf_keys}");
}

/// The 100 MiB dos image of the notes' tasks b and c: partition 1 (16 MiB, type 7), an extended partition
/// (48 MiB) holding logical 5 (20 MiB, type 83).
fn dos_image(sc: &Scratch, name: &str) -> std::path::PathBuf {
    let img = sc.image(name, 100 << 20);
    let out = run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\nstart=2048, size=32768, type=7\nstart=34816, size=98304, type=5\n\
         start=36864, size=40960, type=83\n",
    );
    assert!(out.status.success(), "{out:?}");
    img
}

/// Task c: partition 1's type from 7 (HPFS/NTFS/exFAT) to c (W95 FAT32 LBA).
#[test]
fn a_type_change_takes_no_more_keys_than_cfdisk() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    // cfdisk: t ↓×5 ⏎ W yes ⏎ (the list opens on 07; 0c is five rows down).
    let img = dos_image(&sc, "cf.img");
    let mut cf = cfdisk(&img, "keys-c-cf");
    cf.wait("Extended");
    cf.key(&["t"]);
    cf.wait("Select partition type");
    cf.key(&["Down"; 5]);
    cf.key(&["Enter"]);
    cf.wait("Changed type of partition");
    cfdisk_write(&mut cf);
    let cf_keys = cf.keys;
    cf.tm.keys(&["q"]);
    cf.tm.wait_exit();
    // afdisk: t c ⏎ (the type list, searched), then the review and the write.
    let c = dos_image(&sc, "c.img");
    let mut af = afdisk_on(&c, &backups, "keys-c-af");
    af.key(&["t"]);
    af.wait("Type of partition 1");
    af.text("c");
    af.key(&["Enter"]);
    af.wait("1 change pending");
    afdisk_write(&mut af, "c.img");
    let af_keys = af.keys;
    af.tm.quit_ok();
    let (want, got) = (table(&img), table(&c));
    assert!(want[0].ends_with("type=c"), "{want:?}");
    assert_eq!(got, want, "the same table from both");
    eprintln!("task c (type 7 to c): afdisk {af_keys} keys, cfdisk {cf_keys}");
    assert!(af_keys <= cf_keys, "afdisk {af_keys} > cfdisk {cf_keys}");
}

/// Task b: logical partition 5 deleted and two 10 MiB logical partitions made in its place. cfdisk's
/// keys are the notes' (§2): ↓ ↓ d, New on the free row inside the extended partition with the prefilled
/// size erased, ↓ to the free row after the new partition, New again, then the write. Both must make 5 at
/// 36864 and 6 at 59392, 20480 sectors each.
#[test]
fn deleting_a_logical_and_creating_two_takes_no_more_keys_than_cfdisk() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    let img = dos_image(&sc, "cf.img");
    let mut cf = cfdisk(&img, "keys-b-cf");
    cf.wait("Extended");
    cf.key(&["Down", "Down", "d"]);
    cf.wait("Partition 5 has been deleted");
    cfdisk_new(&mut cf, 3, "10M");
    cf.wait(" 57343 "); // the end of the new logical 5
    cf.key(&["Down"]);
    cfdisk_new(&mut cf, 3, "10M");
    cf.wait(" 79871 "); // the end of the new logical 6
    cfdisk_write(&mut cf);
    let cf_keys = cf.keys;
    cf.tm.keys(&["q"]);
    cf.tm.wait_exit();
    // afdisk: ↓ ↓ d on the disk view (the editor opens on logical 5 and deletes it; the selection is then
    // the free row inside the extended partition), n 10M ⏎ (a logical partition there), n 10M ⏎ (the next
    // free region after the new one), then the review and the write.
    let b = dos_image(&sc, "b.img");
    let mut af = afdisk_on(&b, &backups, "keys-b-af");
    af.key(&["Down", "Down", "d"]);
    af.wait("deleted partition 5");
    for n in [5, 6] {
        af.key(&["n"]);
        af.wait("New logical partition");
        af.text("10M");
        af.key(&["Enter"]);
        af.wait(&format!("new logical partition {n}"));
    }
    afdisk_write(&mut af, "b.img");
    let af_keys = af.keys;
    af.tm.quit_ok();
    let (want, got) = (table(&img), table(&b));
    assert_eq!(
        want,
        [
            "start=2048,size=32768,type=7",
            "start=34816,size=98304,type=5",
            "start=36864,size=20480,type=83",
            "start=59392,size=20480,type=83"
        ],
        "cfdisk's table"
    );
    assert_eq!(got, want, "the same table from both");
    eprintln!("task b (delete a logical, create two): afdisk {af_keys} keys, cfdisk {cf_keys}");
    assert!(af_keys <= cf_keys, "afdisk {af_keys} > cfdisk {cf_keys}");
}

/// Realigning the XP demo disk: Enter (the disk), p (the realign plan), a, the name, Enter. cfdisk cannot move
/// a partition, so there is nothing to compare with; the count is reported once the write is done.
#[test]
fn realigning_the_xp_demo_disk_is_counted() {
    let sc = Scratch::new();
    let mut af = Counted::new(Tmux::demo(&sc.path("tmp"), "keys-d", 80, 24, "Disks (4)"));
    af.key(&["Enter"]);
    af.wait("Findings (");
    af.key(&["p"]);
    af.wait("Realign plan");
    af.key(&["a"]);
    af.wait("Type \"xp-dos-63.img\"");
    af.text("xp-dos-63.img");
    af.key(&["Enter"]);
    af.wait("Wrote");
    let n = af.keys;
    af.tm.quit_ok();
    eprintln!("task d (realign the XP demo disk): afdisk {n} keys, cfdisk: cannot move partitions");
}

/// Task e: on an empty dos table, an extended partition (48 MiB) and a logical partition filling it, with
/// cfdisk's primary/extended question. cfdisk: ⏎(New) ⌫×3 `48M` ⏎, → ⏎ (extended), ↓ ⏎ ⏎ (the free row
/// inside it, its whole size), then the write. afdisk: `n` `48M` ⏎ `e`, `n` ⏎ (the free region inside the
/// new container), then the review and the write. Both must make 1 at 2048 (type 5) and 5 at 4096.
#[test]
fn an_extended_and_a_logical_partition_take_no_more_keys_than_cfdisk() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    let empty_dos = |name: &str| {
        let img = sc.image(name, 100 << 20);
        let out = run_stdin("sfdisk", &["-q", &s(&img)], "label: dos\n");
        assert!(out.status.success(), "{out:?}");
        img
    };
    let img = empty_dos("cf.img");
    let mut cf = cfdisk(&img, "keys-e-cf");
    cf.wait("Free space");
    cfdisk_new(&mut cf, 3, "48M");
    cf.wait("[extended]");
    cf.key(&["Right", "Enter"]);
    cf.wait("Extended");
    cf.key(&["Down", "Enter"]);
    cf.wait("Partition size:");
    cf.key(&["Enter"]);
    cf.wait(" 100351 ");
    cfdisk_write(&mut cf);
    let cf_keys = cf.keys;
    cf.tm.keys(&["q"]);
    cf.tm.wait_exit();
    let e = empty_dos("e.img");
    let mut af = afdisk_on(&e, &backups, "keys-e-af");
    af.key(&["n"]);
    af.wait("New partition");
    af.text("48M");
    af.key(&["Enter"]);
    af.wait("[ extended ]");
    af.key(&["e"]);
    af.wait("1 change pending");
    af.key(&["n"]);
    af.wait("New logical partition");
    af.key(&["Enter"]);
    af.wait("new logical partition 5");
    afdisk_write(&mut af, "e.img");
    let af_keys = af.keys;
    af.tm.quit_ok();
    let (want, got) = (table(&img), table(&e));
    assert_eq!(
        want,
        [
            "start=2048,size=98304,type=5",
            "start=4096,size=96256,type=83"
        ],
        "cfdisk's table"
    );
    assert_eq!(got, want, "the same table from both");
    eprintln!(
        "task e (an extended and a logical, empty dos): afdisk {af_keys} keys, cfdisk {cf_keys}"
    );
    assert!(af_keys <= cf_keys, "afdisk {af_keys} > cfdisk {cf_keys}");
}

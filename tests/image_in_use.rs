//! A disk image another program uses is in use: one that holds it open for writing (a running VM, a `dd`) or
//! holds a POSIX or OFD lock on it (qemu locks the images it runs) makes `apply` refuse, naming the program, and
//! the image stays byte-identical; once the program lets go, the same apply writes.

mod common;

use std::process::{Child, Command, Stdio};

use common::{apply, plan, s, Scratch, MIB};

/// A python process that opens `img` for reading and writing and, with `lock`, takes a POSIX write lock on
/// it; it prints a line once it holds them, then sleeps. Killed when dropped.
struct Holder(Child);

impl Holder {
    fn start(img: &std::path::Path, lock: bool) -> Holder {
        use std::io::BufRead;
        let code = format!(
            "import fcntl, sys, time\nf = open(sys.argv[1], 'r+b')\n{}print('held', flush=True)\ntime.sleep(60)\n",
            if lock { "fcntl.lockf(f, fcntl.LOCK_EX)\n" } else { "" }
        );
        let mut c = Command::new("python3")
            .args(["-c", &code, &s(img)])
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        let out = c.stdout.take().expect("stdout");
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .expect("read");
        assert_eq!(line.trim(), "held");
        Holder(c)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Applies the plan `pf` to `target` (confirmed with `token`) while a program holds `img` open for writing,
/// then while it holds a POSIX lock on it: each apply is refused (exit 3) naming the program and `why(lock)`,
/// `img` is unchanged, and `while_held` runs; once the program lets go, the apply writes.
fn refused_while_held(
    sc: &Scratch,
    (img, target, token): (&std::path::Path, &str, &str),
    pf: &std::path::Path,
    why: &dyn Fn(bool) -> &'static str,
    while_held: &dyn Fn(),
) {
    let before = std::fs::read(img).expect("read");
    for lock in [false, true] {
        let h = Holder::start(img, lock);
        let r = apply(target, pf, token, &sc.path("bk"));
        assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
        let pid = format!("PID {}", h.0.id());
        assert!(
            r.stderr.contains("is in use")
                && r.stderr.contains(&pid)
                && r.stderr.contains(why(lock)),
            "{}",
            r.stderr
        );
        assert_eq!(std::fs::read(img).expect("read"), before, "nothing written");
        while_held();
        drop(h);
    }
    let r = apply(target, pf, token, &sc.path("bk"));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn an_image_another_program_writes_or_locks_is_in_use() {
    let sc = Scratch::new();
    let img = sc.image("vm.img", 64 * MIB);
    let t = s(&img);
    let pf = sc.path("p.json");
    plan(&t, &["--preset", "data"], &pf);
    let why = |lock: bool| {
        if lock {
            "POSIX WRITE lock"
        } else {
            "open for writing"
        }
    };
    let inspect_shows_it = || {
        let v = common::inspect(&t);
        assert!(
            v["device"]["in_use"]
                .as_array()
                .is_some_and(|u| !u.is_empty()),
            "inspect shows the use: {v}"
        );
    };
    refused_while_held(&sc, (&img, &t, "vm.img"), &pf, &why, &inspect_shows_it);
}

/// A loop device whose backing file another program writes or locks is in use as the file is: the apply
/// through the loop device is refused naming the program and the backing file, and nothing is written.
#[test]
fn a_loop_device_whose_backing_file_another_program_holds_is_in_use() {
    let sc = Scratch::new();
    let img = sc.image("vm-loop.img", 64 * MIB);
    let Some(lo) = common::LoopDev::attach(&img, 512) else {
        return;
    };
    let name = lo.path.trim_start_matches("/dev/").to_string();
    let pf = sc.path("p.json");
    plan(&lo.path, &["--preset", "data"], &pf);
    refused_while_held(
        &sc,
        (&img, &lo.path, &name),
        &pf,
        &|_| "the backing file of",
        &|| {},
    );
}

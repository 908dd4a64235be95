//! The `--json` contracts: the JSON Schemas generated from the types (`afdisk::contract::schemas`) are the
//! files committed under assets/schema/, and the real output of every command validates against its schema.
//!
//! Terms: a **contract** is one command's `--json` output; its **schema file** is
//! `assets/schema/<command>.json`. Regenerate the files after a deliberate change with
//! `AFDISK_UPDATE_SCHEMAS=1 cargo test --test contracts` and bump that contract's `schema` number.
//!
//! The validator below is small and strict: besides `type`, `required`, `enum`, `const`, `items`, `$ref`,
//! `anyOf`/`oneOf`/`allOf` and `minimum`, it refuses a property the schema does not name, so a field added to
//! the output without its type (and so its schema file) changing fails here.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{afdisk, run, Afdisk, LoopDev, Scratch};
use serde_json::Value;

const MIB: u64 = 1 << 20;

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/schema")
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("schema serialises");
    s.push('\n');
    s
}

fn schema(name: &str) -> Value {
    afdisk::contract::schemas()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("no schema named {name}"))
}

#[test]
fn committed_schema_files_are_the_generated_ones() {
    let dir = schema_dir();
    // Only `1` rewrites; any other value (`0`, `no`, ...) is a mistake, not a quiet "compare" or "rewrite".
    let update = match std::env::var_os("AFDISK_UPDATE_SCHEMAS") {
        None => false,
        Some(v) if v == "1" => true,
        Some(v) => {
            panic!("AFDISK_UPDATE_SCHEMAS={v:?}: only 1 (rewrite) is accepted; unset it to compare")
        }
    };
    let mut stale = Vec::new();
    let mut names = Vec::new();
    for (name, s) in afdisk::contract::schemas() {
        let path = dir.join(format!("{name}.json"));
        names.push(format!("{name}.json"));
        let want = pretty(&s);
        if update {
            std::fs::create_dir_all(&dir).expect("assets/schema");
            std::fs::write(&path, &want).expect("write schema");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(have) if have == want => {}
            _ => stale.push(name),
        }
    }
    assert!(
        stale.is_empty(),
        "assets/schema/ is out of date for {stale:?}: a contract type changed. Regenerate with \
         `AFDISK_UPDATE_SCHEMAS=1 cargo test --test contracts` and bump that contract's schema number"
    );
    // No stray file: every schema file belongs to a contract.
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .expect("assets/schema")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    present.sort();
    names.sort();
    assert_eq!(present, names);
}

#[test]
fn every_contract_has_a_required_schema_number() {
    for (name, s) in afdisk::contract::schemas() {
        let required = s["required"].as_array().cloned().unwrap_or_default();
        assert!(
            required.iter().any(|r| r == "schema"),
            "{name}: `schema` is not required"
        );
        assert_eq!(s["properties"]["schema"]["type"], "integer", "{name}");
    }
}

/// One name per concept: a partition's type is `type` (never `type_code`), and `partitions` is always an array.
#[test]
fn one_name_per_concept() {
    fn walk(v: &Value, path: &str, bad: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(props)) = m.get("properties") {
                    if props.contains_key("type_code") {
                        bad.push(format!("{path}: type_code"));
                    }
                    if let Some(p) = props.get("partitions") {
                        let is_array = p["type"] == "array"
                            || p["items"].is_object()
                            || p["anyOf"].as_array().is_some_and(|a| {
                                a.iter()
                                    .any(|x| x["type"] == "array" || x["$ref"].is_string())
                            });
                        if !is_array {
                            bad.push(format!("{path}: partitions is {p}"));
                        }
                    }
                }
                for (k, x) in m {
                    walk(x, &format!("{path}/{k}"), bad);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, path, bad)),
            _ => {}
        }
    }
    let mut bad = Vec::new();
    for (name, s) in afdisk::contract::schemas() {
        walk(&s, name, &mut bad);
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

// ----- a small strict JSON Schema validator (the subset schemars emits) -----

fn resolve<'a>(root: &'a Value, r: &str) -> &'a Value {
    let p = r.strip_prefix('#').unwrap_or(r);
    root.pointer(p)
        .unwrap_or_else(|| panic!("unresolved $ref {r}"))
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        _ => false,
    }
}

/// The problems of `v` against `s` (empty: valid).
fn check(root: &Value, s: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
    if s == &Value::Bool(true) {
        return;
    }
    if let Some(r) = s["$ref"].as_str() {
        check(root, resolve(root, r), v, at, out);
    }
    if let Some(all) = s["allOf"].as_array() {
        for x in all {
            check(root, x, v, at, out);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s[key].as_array() {
            let ok = alts
                .iter()
                .filter(|x| {
                    let mut e = Vec::new();
                    check(root, x, v, at, &mut e);
                    e.is_empty()
                })
                .count();
            if ok == 0 || (key == "oneOf" && ok > 1) {
                out.push(format!("{at}: {ok} of the {key} alternatives match {v}"));
            }
        }
    }
    match &s["type"] {
        Value::String(t) if !type_ok(t, v) => out.push(format!("{at}: {v} is not {t}")),
        Value::Array(ts) if !ts.iter().any(|t| t.as_str().is_some_and(|t| type_ok(t, v))) => {
            out.push(format!("{at}: {v} is none of {ts:?}"))
        }
        _ => {}
    }
    if let Some(e) = s["enum"].as_array() {
        if !e.contains(v) {
            out.push(format!("{at}: {v} not in {e:?}"));
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            out.push(format!("{at}: {v} is not {c}"));
        }
    }
    if let (Some(min), Some(n)) = (s["minimum"].as_f64(), v.as_f64()) {
        if n < min {
            out.push(format!("{at}: {n} < {min}"));
        }
    }
    if let (Some(items), Some(a)) = (s.get("items"), v.as_array()) {
        for (i, x) in a.iter().enumerate() {
            check(root, items, x, &format!("{at}/{i}"), out);
        }
    }
    if let Some(m) = v.as_object() {
        if let Some(req) = s["required"].as_array() {
            for r in req.iter().filter_map(Value::as_str) {
                if !m.contains_key(r) {
                    out.push(format!("{at}: missing {r}"));
                }
            }
        }
        if let Some(props) = s["properties"].as_object() {
            for (k, x) in m {
                match props.get(k) {
                    Some(ps) => check(root, ps, x, &format!("{at}/{k}"), out),
                    None if s
                        .get("additionalProperties")
                        .is_none_or(|a| a == &Value::Bool(false)) =>
                    {
                        out.push(format!("{at}: property {k} is not in the schema"))
                    }
                    None => {}
                }
            }
        }
    }
}

fn assert_valid(name: &str, v: &Value) {
    let s = schema(name);
    let mut out = Vec::new();
    check(&s, &s, v, name, &mut out);
    assert!(
        out.is_empty(),
        "{name} --json does not match its schema:\n{out:#?}\n{v:#}"
    );
}

#[test]
fn the_validator_refuses_what_it_should() {
    let s = schema("check");
    let ok = serde_json::json!({ "schema": 2, "targets": [] });
    let mut e = Vec::new();
    check(&s, &s, &ok, "check", &mut e);
    assert!(e.is_empty(), "{e:?}");
    for bad in [
        serde_json::json!({ "targets": [] }),
        serde_json::json!({ "schema": "2", "targets": [] }),
        serde_json::json!({ "schema": 2, "targets": [], "extra": 1 }),
        serde_json::json!({ "schema": 2, "targets": [ { "path": "x" } ] }),
    ] {
        let mut e = Vec::new();
        check(&s, &s, &bad, "check", &mut e);
        assert!(!e.is_empty(), "accepted {bad}");
    }
}

// ----- real outputs -----

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A writing subcommand confirmed for scripts, with its backups in `backups`.
fn confirmed(args: &[&str], token: &str, backups: &Path) -> Afdisk {
    let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .args(["--yes", "--confirm", token, "--json"])
        .env("AFDISK_BACKUP_DIR", backups)
        .output()
        .expect("run afdisk");
    Afdisk {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn every_command_s_json_matches_its_schema() {
    let sc = Scratch::new();
    let backups = sc.dir.path().join("backups");
    // A GPT image with a misaligned partition, made by the peer.
    let gpt = common::gpt_image_2049(&sc);
    // A dos image with a logical partition.
    let dos = common::dos_image_63_logical(&sc);
    let empty = sc.image("e.img", 64 * MIB);

    for img in [&gpt, &dos, &empty] {
        let r = afdisk(&["inspect", "--json", &s(img)]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_valid("inspect", &r.json());
    }
    let v = afdisk(&["inspect", "--json", &s(&gpt)]).json();
    assert_eq!(v["schema"], 2);
    assert!(v["partitions"][0]["type"].is_string(), "{v}");
    assert!(
        v["partitions"][0]["node"].is_null(),
        "an image has no nodes: {v}"
    );
    assert_eq!(v["summary"]["partition_count"], 2);

    let r = afdisk(&[
        "check",
        "--json",
        &s(&gpt),
        &s(&dos),
        &s(&sc.dir.path().join("none.img")),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let v = r.json();
    assert_valid("check", &v);
    assert_eq!(v["schema"], 2);
    assert_eq!(v["targets"][0]["partition_count"], 2);
    assert_eq!(v["targets"][2]["status"], "error");

    let r = afdisk(&["list", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_valid("list", &v);
    assert_eq!(v["schema"], 2);
    assert!(v["devices"].is_array());

    // plan --json on stdout and as a file, fresh and realign.
    for args in [
        vec![
            "plan".to_string(),
            "--json".into(),
            s(&empty),
            "--preset".into(),
            "data".into(),
        ],
        vec![
            "plan".to_string(),
            "--json".into(),
            s(&gpt),
            "--realign".into(),
        ],
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = afdisk(&a);
        assert_eq!(r.code, 0, "{a:?}: {}{}", r.stdout, r.stderr);
        let v = r.json();
        assert_valid("plan", &v);
        assert_eq!(v["schema"], 5);
    }
    let pf = sc.dir.path().join("plan.json");
    let r = afdisk(&["plan", &s(&empty), "--preset", "data", "-o", &s(&pf)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(&pf).expect("plan")).expect("json");
    assert_valid("plan", &plan);
    assert!(plan["new"]["partitions"][0]["type"].is_string(), "{plan}");

    let r = confirmed(&["apply", &s(&empty), "--plan", &s(&pf)], "e.img", &backups);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let applied = r.json();
    assert_valid("apply", &applied);
    assert_eq!(applied["schema"], 2);

    let bf = sc.dir.path().join("b.json");
    let r = afdisk(&["backup", "--json", &s(&gpt), "-o", &s(&bf)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_valid("backup", &r.json());
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(&bf).expect("backup")).expect("json");
    assert_valid("backup-file", &file);
    let undo = applied["backup_file"].as_str().expect("backup_file");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(undo).expect("undo")).expect("json");
    assert_valid("backup-file", &file);

    let r = confirmed(&["restore", &s(&empty), undo], "e.img", &backups);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_valid("apply", &r.json());

    // bench: read-only, one second; a sparse image makes it inconclusive, the JSON is there all the same.
    let r = afdisk(&["bench", "--json", "--duration", "1", &s(&gpt)]);
    if r.stdout.trim_start().starts_with('{') {
        let v = r.json();
        assert_valid("bench", &v);
        assert_eq!(v["schema"], 1);
    } else {
        // O_DIRECT is not possible on every filesystem that holds the temporary directory.
        assert!(
            r.stderr.contains("O_DIRECT") || r.code != 0,
            "{}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// The error object of a failed `--json` command matches its schema (a bad target, a bad plan, a usage
/// error, a refusal).
#[test]
fn a_failed_json_command_s_error_matches_its_schema() {
    let sc = Scratch::new();
    let img = sc.image("e.img", 64 * MIB);
    let none = s(&sc.path("none.img"));
    let junk = sc.path("junk.plan");
    std::fs::write(&junk, "{}").expect("junk");
    for args in [
        vec!["inspect", "--json", &none],
        vec!["apply", "--json", &s(&img), "--plan", &s(&junk)],
        vec!["plan", "--json", &s(&img), "--grain", "nonsense"],
        vec!["backup", "--json", &none, "-o", "/nonexistent/b.json"],
    ] {
        let r = afdisk(&args);
        assert_ne!(r.code, 0, "{args:?}");
        let v = r.json();
        assert_valid("error", &v);
        assert_eq!(v["schema"], 1);
        assert_eq!(v["exit_code"], r.code, "{args:?}");
    }
}

/// A partition written with the old name (`type_code`, plan schema 2) still reads, and writes as `type`: an old
/// plan is then refused by its schema number with a message naming it, not by a serde error.
#[test]
fn old_type_code_name_is_still_read() {
    let p: afdisk::table::Partition = serde_json::from_value(serde_json::json!({
        "number": 1, "start": 2048, "size": 2048, "type_code": "0x83", "type_name": "Linux",
        "uuid": null, "name": null, "kind": "primary", "attributes": 0, "bootable": false
    }))
    .expect("old name read");
    assert_eq!(p.type_code, "0x83");
    let v = serde_json::to_value(&p).expect("json");
    assert_eq!(v["type"], "0x83");
    assert!(v.get("type_code").is_none());
}

/// `node` is the partition's device node, named as sfdisk names it, on a block device (a loop device here:
/// `/dev/loopNpM`, with the `p` because the disk's name ends in a digit).
#[test]
fn node_is_sfdisk_s_node_on_a_block_device() {
    let sc = Scratch::new();
    let img = sc.image("n.img", 64 * MIB);
    run("sgdisk", &["-n", "1:2048:+8M", "-n", "3:0:+8M", &s(&img)]);
    let Some(dev) = LoopDev::attach(&img, 512) else {
        return;
    };
    let r = afdisk(&["inspect", "--json", &dev.path]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_valid("inspect", &v);
    let nodes: Vec<&str> = v["partitions"]
        .as_array()
        .expect("partitions")
        .iter()
        .filter_map(|p| p["node"].as_str())
        .collect();
    assert_eq!(
        nodes,
        [format!("{}p1", dev.path), format!("{}p3", dev.path)]
    );
    if let Some(sf) = common::sfdisk_json(&dev.path) {
        let want: Vec<&str> = sf["partitiontable"]["partitions"]
            .as_array()
            .expect("sfdisk partitions")
            .iter()
            .filter_map(|p| p["node"].as_str())
            .collect();
        assert_eq!(nodes, want, "sfdisk names the nodes");
    }
}

#[test]
fn node_names_follow_the_kernel() {
    use afdisk::device::TargetKind::{Block, Image};
    use afdisk::report::partition_node;
    let node = |disk: &str, n| partition_node(Path::new(disk), Block, n);
    assert_eq!(node("/dev/sdb", 1).as_deref(), Some("/dev/sdb1"));
    assert_eq!(node("/dev/vda", 12).as_deref(), Some("/dev/vda12"));
    assert_eq!(node("/dev/nvme0n1", 2).as_deref(), Some("/dev/nvme0n1p2"));
    assert_eq!(node("/dev/mmcblk0", 1).as_deref(), Some("/dev/mmcblk0p1"));
    assert_eq!(partition_node(Path::new("disk.img"), Image, 1), None);
}

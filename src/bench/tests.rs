//! Tests of `bench`.
use super::*;

/// A sparse image of `len` bytes in a temporary directory, opened as a target.
fn sparse_image(len: u64) -> (tempfile::TempDir, Opened) {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("d.img");
    std::fs::File::create(&img).unwrap().set_len(len).unwrap();
    let opened = crate::device::open(&img, &Default::default()).unwrap();
    (dir, opened)
}

/// The progress callback is the run's stop button: a `Break` ends the run after that round, and the report
/// says it was cancelled.
#[test]
fn a_run_stops_when_the_progress_callback_says_so() {
    let (_dir, opened) = sparse_image(64 << 20);
    let prepared = prepare(&opened, &BenchOptions::default()).unwrap();
    let mut calls = 0u64;
    let r = run(&opened, &prepared, &Confirmation::Absent, &mut |_| {
        calls += 1;
        if calls >= 40 {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    })
    .unwrap();
    assert_eq!(r.stop, StopReason::Cancelled);
    assert_eq!(
        (calls, r.rounds),
        (40, 40),
        "one call per round, none after the break"
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("cancelled after 40 rounds")),
        "{:?}",
        r.notes
    );
}

/// SEEK_DATA/SEEK_HOLE: only the written MiB of a sparse file is allocated.
#[test]
fn unallocated_bytes_counts_the_holes_of_the_regions() {
    use std::os::unix::fs::FileExt;
    let (dir, _) = sparse_image(4 << 20);
    let img = dir.path().join("d.img");
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&img)
        .unwrap();
    f.write_all_at(&vec![0xA5u8; 1 << 20], 1 << 20).unwrap();
    f.sync_all().unwrap();
    let all = [Region {
        start: 0,
        end: 4 << 20,
    }];
    assert_eq!(unallocated_bytes(&f, &all), Some(3 << 20));
    let data_only = [Region {
        start: 1 << 20,
        end: 2 << 20,
    }];
    assert_eq!(unallocated_bytes(&f, &data_only), Some(0));
    let split = [Region {
        start: (1 << 20) + (1 << 19),
        end: 3 << 20,
    }];
    assert_eq!(unallocated_bytes(&f, &split), Some(1 << 20));
}

/// A read-only run on a sparse image measures holes: inconclusive, and the output says why.
#[test]
fn a_read_only_run_on_a_sparse_image_is_inconclusive() {
    let (_dir, opened) = sparse_image(64 << 20);
    let options = BenchOptions {
        duration_secs: 1,
        ..BenchOptions::default()
    };
    let prepared = prepare(&opened, &options).unwrap();
    let r = run(&opened, &prepared, &Confirmation::Absent, &mut |_| {
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(r.status, Status::Inconclusive, "{}", r.verdict.message);
    assert!(!r.verdict.rmw);
    assert!(
        r.verdict.message.contains("measure nothing"),
        "{}",
        r.verdict.message
    );
    assert!(
        r.warnings.iter().any(|w| w.contains("unallocated")),
        "{:?}",
        r.warnings
    );
}

/// Bench named through a partition node (`/dev/sdb1`) never tells the user to omit a `--partition` they did
/// not give.
#[test]
fn a_partition_node_too_small_is_not_told_to_omit_an_option() {
    let (dir, _) = sparse_image(64 << 20);
    let img = dir.path().join("d.img");
    let st = std::process::Command::new("sgdisk")
        .args(["-n", "1:2048:+64K"])
        .arg(&img)
        .output()
        .expect("run sgdisk");
    assert!(st.status.success(), "{st:?}");
    let opened = crate::device::open(&img, &Default::default()).unwrap();
    let given = BenchOptions {
        partition: Some(1),
        ..BenchOptions::default()
    };
    let Err(e) = prepare(&opened, &given) else {
        panic!("a 64 KiB partition is too small to benchmark")
    };
    assert!(e.fix.contains("omit a partition"), "{}", e.fix);
    assert!(flags(&e).1.contains("omit --partition"), "{}", flags(&e).1);
    let from_node = BenchOptions {
        partition_node: Some(PathBuf::from("/dev/sdz1")),
        ..given
    };
    let Err(e) = prepare(&opened, &from_node) else {
        panic!("a 64 KiB partition is too small to benchmark")
    };
    assert!(!flags(&e).1.contains("--partition"), "{}", e.fix);
    assert!(
        e.fix.contains(&format!("afdisk bench {}", img.display())),
        "{}",
        e.fix
    );
}

/// An error as a front end with flags named `--NAME [VALUE]` renders it.
fn flags(e: &Error) -> (String, String) {
    e.render(&|s, v| {
        let n = crate::error::Setting::ALL
            .iter()
            .find(|(x, _)| *x == s)
            .map_or("?", |p| p.1);
        v.map_or(format!("--{n}"), |v| format!("--{n} {v}"))
    })
}

#[test]
fn options_are_validated_with_fixes() {
    let ok = BenchOptions::default();
    assert!(ok.validate().is_ok());
    for d in [0, 61] {
        let e = BenchOptions {
            duration_secs: d,
            ..ok.clone()
        }
        .validate()
        .unwrap_err();
        assert!(flags(&e).0.contains("--duration"), "{}", e.problem);
        assert!(!e.problem.contains("--"), "{}", e.problem);
        assert!(e.fix.contains("between 1 and 60"), "{}", e.fix);
    }
    let e = BenchOptions {
        probe: true,
        ..ok.clone()
    }
    .validate()
    .unwrap_err();
    assert!(flags(&e).1.contains("--write free"), "{}", e.fix);
    let e = BenchOptions {
        partition: Some(1),
        write: WriteMode::Free,
        ..ok.clone()
    }
    .validate()
    .unwrap_err();
    assert!(flags(&e).0.contains("--write free"), "{}", e.problem);
    assert!(
        e.problem.contains("write mode free") && !e.problem.contains("--"),
        "{}",
        e.problem
    );
    assert!(BenchOptions {
        partition: Some(0),
        ..ok
    }
    .validate()
    .is_err());
}

/// A report on a 512e drive whose misaligned classes take three times as long: a penalty, partition 1 at
/// sector 2049 included.
fn penalty_report(opened: &Opened) -> BenchReport {
    let schedule = schedule::build(&ScheduleInput {
        logical: 512,
        physical: 512,
        writes: true,
        probe: false,
        partition_start: Some(512),
    });
    let samples: Vec<Vec<u64>> = schedule
        .classes
        .iter()
        .map(|c| {
            (0..50)
                .map(|i| {
                    if c.offset % 4096 == 0 {
                        100_000 + i
                    } else {
                        300_000 + i
                    }
                })
                .collect()
        })
        .collect();
    let th = analysis::thresholds(false);
    let analysis = analysis::analyze(&schedule, &samples, &th, 1);
    let g = probe::Geometry {
        logical: 512,
        physical: 512,
    };
    let (verdict, warnings) = analysis::drive_verdict(&analysis, g);
    let partition = analysis::partition_verdict(&analysis, 1, 2049 * 512);
    let status = analysis::status(&analysis, &verdict, partition.as_ref());
    BenchReport {
        device: opened.info.clone(),
        write_mode: WriteMode::All,
        classes: class_results(&schedule, &samples),
        analysis,
        verdict,
        partition,
        status,
        notes: vec![],
        warnings,
        noise: engine::noise(None, None, 0),
        stop: StopReason::Decided,
        elapsed_secs: 1.0,
        rounds: 50,
        warmup_rounds: 1,
        queue: vec![],
    }
}

#[test]
fn json_has_exactly_the_contract_keys() {
    let (_dir, opened) = sparse_image(1 << 20);
    let r = penalty_report(&opened);
    let v = serde_json::to_value(r.json()).unwrap();
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&v),
        ["classes", "device", "partition", "schema", "verdict"]
    );
    assert_eq!(v["schema"], 1);
    assert_eq!(
        keys(&v["classes"][0]),
        ["iops", "median_ns", "name", "p90_ns", "p99_ns", "samples"]
    );
    assert_eq!(
        keys(&v["verdict"]),
        [
            "detected_physical_sector_size",
            "message",
            "read_ratio",
            "rmw",
            "write_ratio",
            "write_ratio_ci"
        ]
    );
    assert_eq!(
        keys(&v["partition"]),
        [
            "number",
            "penalty",
            "ratio",
            "ratio_ci",
            "start_offset_bytes"
        ]
    );
    assert_eq!(v["verdict"]["rmw"], true);
    assert_eq!(v["partition"]["penalty"], true);
    assert_eq!(v["partition"]["ratio_ci"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["verdict"]["detected_physical_sector_size"],
        serde_json::Value::Null
    );
    assert_eq!(r.status, Status::Penalty);
}

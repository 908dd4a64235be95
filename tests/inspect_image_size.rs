//! `inspect` of an image whose size itself is the problem: a 0-byte or 511-byte image (not one whole sector)
//! is too small to partition, and says so with the least sizes that are, instead of "the disk is empty …
//! `afdisk plan` proposes a layout" (that plan failed); an image whose size is not a whole number of sectors
//! gets a warning naming its trailing bytes, as sgdisk warns.

mod common;

use common::{s, Scratch};
use serde_json::Value;

fn findings(v: &Value) -> Vec<(String, String, String)> {
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or("").to_string(),
                f["severity"].as_str().unwrap_or("").to_string(),
                f["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn images_smaller_than_a_table_are_too_small_to_partition() {
    let sc = Scratch::new();
    for size in [0u64, 511, 4096] {
        let img = sc.image(&format!("t{size}.img"), size);
        let f = findings(&common::inspect(&s(&img)));
        let codes: Vec<&str> = f.iter().map(|x| x.0.as_str()).collect();
        assert!(!codes.contains(&"no-table"), "{size}: {f:?}");
        let (_, severity, message) = f
            .iter()
            .find(|x| x.0 == "too-small")
            .unwrap_or_else(|| panic!("{size}: no too-small finding: {f:?}"));
        assert_eq!(severity, "warning");
        assert!(
            message.contains(&format!("The disk is {size} bytes"))
                && message.contains("too small to partition")
                && message.contains("8192 bytes")
                && message.contains("41472 bytes"),
            "{message}"
        );
        assert!(!message.contains("proposes"), "{message}");
    }
    // The least size it names is planned.
    let img = sc.image("least.img", 8192);
    let r = common::afdisk(&["plan", &s(&img), "--preset", "data", "--table", "dos"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn trailing_bytes_past_the_last_sector_are_a_warning() {
    let sc = Scratch::new();
    let img = sc.image("odd.img", 10_000_000);
    let f = findings(&common::inspect(&s(&img)));
    let (_, severity, message) = f
        .iter()
        .find(|x| x.0 == "partial-sector")
        .unwrap_or_else(|| panic!("no partial-sector finding: {f:?}"));
    assert_eq!(severity, "warning");
    assert!(
        message.contains("its last 128 byte(s) lie in no sector"),
        "{message}"
    );
    // A whole number of sectors: no such finding.
    let img = sc.image("even.img", 10_000_384);
    let f = findings(&common::inspect(&s(&img)));
    assert!(f.iter().all(|x| x.0 != "partial-sector"), "{f:?}");
}

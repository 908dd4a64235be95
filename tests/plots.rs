//! `afdisk bench --plot FILE.svg` and `--samples` (issue 15): the SVG is well-formed XML (checked by a small
//! parser here: nesting, quoting, entities) with axes, tick labels and a legend; `--json --samples` carries
//! every class's raw latencies, as many as its sample count; a `--plot` path that cannot be written is refused
//! before the run. The bins themselves are property-tested in the core (`bench::plot`).

mod common;

use common::*;

/// Checks that `s` is well-formed XML: one root element, every start tag closed in order, attribute values
/// quoted, `&` only as an entity. Returns the element names in document order.
fn check_xml(s: &str) -> Result<Vec<String>, String> {
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut roots = 0;
    let mut rest = s;
    let entity_ok = |t: &str| -> Result<(), String> {
        for (i, _) in t.match_indices('&') {
            let tail = &t[i..];
            let end = tail.find(';').ok_or(format!("bare & in {t:?}"))?;
            let name = &tail[1..end];
            let ok = ["amp", "lt", "gt", "quot", "apos"].contains(&name)
                || (name.starts_with('#') && name.len() > 1);
            if !ok {
                return Err(format!("unknown entity &{name}; in {t:?}"));
            }
        }
        Ok(())
    };
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        if stack.is_empty() && !text.trim().is_empty() {
            return Err(format!("text outside the root: {text:?}"));
        }
        entity_ok(text)?;
        let after = &rest[open..];
        if let Some(body) = after.strip_prefix("<?") {
            let end = body.find("?>").ok_or("unclosed <?")?;
            rest = &body[end + 2..];
            continue;
        }
        if let Some(body) = after.strip_prefix("<!--") {
            let end = body.find("-->").ok_or("unclosed comment")?;
            rest = &body[end + 3..];
            continue;
        }
        // The tag runs to the first '>' outside quotes.
        let mut quote = None;
        let mut close = None;
        for (i, c) in after.char_indices().skip(1) {
            match (quote, c) {
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '<') => return Err(format!("'<' inside a tag: {}", &after[..i])),
                (None, '>') => {
                    close = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let close = close.ok_or("unclosed tag")?;
        let tag = &after[1..close];
        rest = &after[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let name = name.trim();
            match stack.pop() {
                Some(open) if open == name => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name: String = tag.chars().take_while(|c| !c.is_whitespace()).collect();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == ':' || c == '-')
        {
            return Err(format!("bad element name {name:?}"));
        }
        // Attributes: name="value" pairs.
        let mut attrs = tag[name.len()..].trim();
        while !attrs.is_empty() {
            let eq = attrs
                .find('=')
                .ok_or(format!("attribute without value in <{tag}>"))?;
            let q = attrs[eq + 1..].chars().next().ok_or("attribute cut")?;
            if q != '"' && q != '\'' {
                return Err(format!("unquoted attribute in <{tag}>"));
            }
            let vstart = eq + 2;
            let vend = attrs[vstart..].find(q).ok_or("unclosed attribute")? + vstart;
            entity_ok(&attrs[vstart..vend])?;
            attrs = attrs[vend + 1..].trim_start();
        }
        if stack.is_empty() {
            roots += 1;
        }
        names.push(name.clone());
        if !self_closing {
            stack.push(name);
        }
    }
    if !rest.trim().is_empty() || !stack.is_empty() {
        return Err(format!("unclosed elements {stack:?} or trailing text"));
    }
    if roots != 1 {
        return Err(format!("{roots} root elements"));
    }
    Ok(names)
}

#[test]
fn the_checker_refuses_what_it_should() {
    assert!(check_xml("<a><b/></a>").is_ok());
    for bad in [
        "<a><b></a>",
        "<a x=1/>",
        "<a>&</a>",
        "<a>&nbsp;</a>",
        "<a/><b/>",
        "<a>",
        "<a x=\"1\" y/>",
    ] {
        assert!(check_xml(bad).is_err(), "{bad} passed");
    }
}

#[test]
fn bench_writes_a_well_formed_svg_plot_and_the_raw_samples() {
    let s = Scratch::new();
    let img = s.image("plot.img", 64 * MIB);
    // Data in the image, so its reads are not all holes.
    run("sgdisk", &["-n", "1:2048:+32M", &common::s(&img)]);
    let svg = s.path("out/plot.svg");
    std::fs::create_dir_all(s.path("out")).expect("dir");
    let r = afdisk(&[
        "bench",
        &common::s(&img),
        "--duration",
        "1",
        "--json",
        "--samples",
        "--plot",
        &common::s(&svg),
    ]);
    assert!([0, 1, 4].contains(&r.code), "{}{}", r.stdout, r.stderr);
    let j = r.json();
    let classes = j["classes"].as_array().expect("classes");
    assert!(classes.len() >= 2, "{j}");
    for c in classes {
        let n = c["samples"].as_u64().expect("samples");
        let raw = c["samples_ns"]
            .as_array()
            .expect("samples_ns with --samples");
        assert_eq!(raw.len() as u64, n, "{}", c["name"]);
        assert!(raw.iter().all(|x| x.as_u64().is_some_and(|v| v > 0)));
    }
    let text = std::fs::read_to_string(&svg).expect("the plot was written");
    let names = check_xml(&text).unwrap_or_else(|e| panic!("not well-formed: {e}\n{text}"));
    assert_eq!(names.first().map(String::as_str), Some("svg"));
    assert!(
        names.iter().filter(|n| *n == "path").count() == 2,
        "one outline per class"
    );
    for want in [
        "random 4 KiB reads: aligned read-4k@0 vs misaligned read-4k@512",
        "latency per I/O (log scale)",
        "aligned read-4k@0: median",
        "misaligned read-4k@512: median",
        "µs",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
    // Without --samples the JSON has no raw latencies.
    let r = afdisk(&["bench", &common::s(&img), "--duration", "1", "--json"]);
    assert!(
        r.json()["classes"][0].get("samples_ns").is_none(),
        "{}",
        r.stdout
    );
}

#[test]
fn a_plot_path_that_cannot_be_written_is_refused_before_the_run() {
    let s = Scratch::new();
    let img = s.image("plot.img", 64 * MIB);
    let svg = s.path("no-such-dir/plot.svg");
    let r = afdisk(&["bench", &common::s(&img), "--plot", &common::s(&svg)]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("--plot") && r.stderr.contains("existing directory"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("round"), "nothing ran: {}", r.stderr);
    assert!(!svg.exists());
    // --samples needs --json.
    let r = afdisk(&["bench", &common::s(&img), "--samples"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

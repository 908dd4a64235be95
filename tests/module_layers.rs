//! The module structure of `src/`: no import circles between source files, imports flow down the layers, the
//! TUI's pages stand alone, and neither front end calls the other.
//!
//! Terms:
//! - A **module file** is one `.rs` file under `src/`; its module path comes from its place (`src/apply/mod.rs` is
//!   `apply`, `src/apply/backup.rs` is `apply::backup`, `src/lib.rs` and `src/main.rs` are the crate roots).
//! - An **import** is a path written in the file's non-test code that names another module of the crate:
//!   `use crate::…`, `use afdisk::…` (the binary's front ends name the library so), `use super::…`, and inline
//!   paths such as `crate::plan::Layout`. A path resolves to the deepest module file it names; paths inside a
//!   `#[cfg(test)]` item or a test-module file (`tests.rs`) are not imports of the code (tests may reach
//!   anywhere), and the crate root (which only declares modules and re-exports the error type) is not a target.
//! - A **circle** is a set of two or more module files that reach each other through imports (a strongly
//!   connected component of the import graph).
//! - A **layer** is a rank given below to each top-level module; an import **runs up** when it goes from a lower
//!   layer to a higher one.
//! - The TUI's **pages** are the modules under `tui` that its registry (`tui::registry`) opens, besides the shared
//!   `page`, `model`, `dialog` and `job`; a page's **view** is `tui::<page>_view` or `tui::<page>::view`.
//!
//! The check reads the source as text; it is the CI check the architecture rules ask for.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers from the bottom up. Modules in one layer may import each other (without circles); a module may import
/// any module of a lower layer.
const LAYERS: &[&[&str]] = &[
    &[
        "error",
        "units",
        "bytes",
        "hex",
        "finding",
        "alignment",
        "signals",
    ],
    &["drive", "table"],
    &["fs", "signature", "blkid"],
    &["device"],
    &["mover"],
    &["plan"],
    &["apply"],
    &["report", "reformat", "demo"],
    &["bench"],
    &["present", "plot", "contract"],
    &["cli", "tui"],
    &["main", "lib"],
];

/// Imports allowed to run up a layer, each with the reason. At most one.
const ALLOWED_UP: &[(&str, &str)] = &[];

fn src_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file: `src/apply/backup.rs` is `["apply", "backup"]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" && !(parts.is_empty() && (stem == "lib" || stem == "main")) {
        parts.push(stem);
    }
    parts
}

/// The source without comments, string contents and `#[cfg(test)]` items.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i..].starts_with(b"#[cfg(test)]") {
            i = skip_item(b, i + "#[cfg(test)]".len());
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Skips one item after an attribute: up to its `;` or its balanced `{…}`.
fn skip_item(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Expands a `use` tree (`crate::a::{b, c::D}`) into its paths.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand_use(&format!("{prefix}{p}")))
        .collect()
}

/// Every crate-internal path the code names, as written.
fn paths_in(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(k) = rest.find("use ") {
        let before_ok = k == 0
            || !rest.as_bytes()[k - 1].is_ascii_alphanumeric() && rest.as_bytes()[k - 1] != b'_';
        let tail = &rest[k + 4..];
        let end = tail.find(';').unwrap_or(tail.len());
        if before_ok {
            found.extend(expand_use(&tail[..end]));
        }
        rest = &tail[end.min(tail.len())..];
    }
    let b = code.as_bytes();
    for start in ["crate::", "afdisk::", "super::"] {
        let mut from = 0;
        while let Some(k) = code[from..].find(start) {
            let at = from + k;
            from = at + start.len();
            if at > 0
                && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_' || b[at - 1] == b':')
            {
                continue;
            }
            let mut end = at;
            while end < b.len()
                && (b[end].is_ascii_alphanumeric() || b[end] == b'_' || b[end] == b':')
            {
                end += 1;
            }
            found.push(code[at..end].to_string());
        }
    }
    found
}

/// The module file a path names, if it names one other than `me`.
fn resolve(path: &str, me: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut abs: Vec<String> = match segs.first() {
        Some(&"crate") | Some(&"afdisk") => Vec::new(),
        Some(&"super") => me[..me.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut rest = &segs[1..];
    while rest.first() == Some(&"super") {
        abs.pop();
        rest = &rest[1..];
    }
    abs.extend(rest.iter().map(|s| s.to_string()));
    (0..=abs.len())
        .rev()
        .map(|n| abs[..n].to_vec())
        .find(|m| modules.contains(m))
        .filter(|m| m.as_slice() != me)
}

type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

fn import_graph() -> Graph {
    let root = src_root();
    let mut files = Vec::new();
    rs_files(&root, &mut files);
    // Test modules kept in their own file (`tests.rs`, `fit_tests.rs`) are test code.
    files.retain(|f| {
        !f.file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("tests.rs"))
    });
    let mods: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(f.strip_prefix(&root).unwrap_or(f)), f.clone()))
        .collect();
    let names: BTreeSet<Vec<String>> = mods.keys().cloned().collect();
    let mut g = Graph::new();
    for (m, f) in &mods {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let edges = g.entry(m.clone()).or_default();
        for p in paths_in(&code_only(&text)) {
            // The crate root only declares modules and re-exports the error type: naming it is no import.
            if let Some(to) = resolve(&p, m, &names).filter(|to| !to.is_empty()) {
                edges.insert(to);
            }
        }
    }
    g
}

/// Strongly connected components with more than one member (Tarjan).
fn circles(g: &Graph) -> Vec<Vec<Vec<String>>> {
    struct T<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on: BTreeSet<&'a Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a Vec<String>) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let Some((w, _)) = t.g.get_key_value(w) else {
                continue;
            };
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(lw));
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        out: vec![],
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn layer_of(m: &[String]) -> Option<usize> {
    let top = m.first().map(String::as_str).unwrap_or("lib");
    LAYERS.iter().position(|l| l.contains(&top))
}

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

#[test]
fn no_module_imports_its_way_back_to_itself() {
    let g = import_graph();
    assert!(
        g.len() > 50,
        "the source tree was not read: {} module files",
        g.len()
    );
    let found = circles(&g);
    let text: Vec<String> = found
        .iter()
        .map(|c| c.iter().map(|m| show(m)).collect::<Vec<_>>().join(" <-> "))
        .collect();
    assert!(
        found.is_empty(),
        "{} import circle(s):\n{}",
        found.len(),
        text.join("\n")
    );
}

#[test]
fn imports_flow_down_the_layers() {
    let g = import_graph();
    let mut up = Vec::new();
    for (from, tos) in &g {
        for to in tos {
            let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) else {
                panic!(
                    "{} or {} has no layer: add it to LAYERS",
                    show(from),
                    show(to)
                );
            };
            let pair = format!("{} -> {}", show(from), show(to));
            if b > a && !ALLOWED_UP.iter().any(|(p, _)| *p == pair) {
                up.push(pair);
            }
        }
    }
    assert!(
        ALLOWED_UP.len() <= 1,
        "at most one import may run up a layer"
    );
    assert!(
        up.is_empty(),
        "{} import(s) run up a layer:\n{}",
        up.len(),
        up.join("\n")
    );
}

#[test]
fn the_checker_sees_a_planted_circle() {
    // The reader must find what it is meant to find: a two-file circle and an inline path.
    let names: BTreeSet<Vec<String>> = [
        vec!["a".to_string()],
        vec!["b".to_string()],
        vec!["b".to_string(), "c".to_string()],
    ]
    .into_iter()
    .collect();
    let a_code =
        code_only("use crate::b::{c::X, Y};\n#[cfg(test)]\nmod tests { use crate::zzz; }\n");
    let a: BTreeSet<_> = paths_in(&a_code)
        .iter()
        .filter_map(|p| resolve(p, &["a".into()], &names))
        .collect();
    assert_eq!(
        a,
        [vec!["b".to_string()], vec!["b".into(), "c".into()]]
            .into_iter()
            .collect()
    );
    let c_code = code_only("fn f() { let _ = super::super::a::g(); } // crate::nothing\n");
    let c: Vec<_> = paths_in(&c_code)
        .iter()
        .filter_map(|p| resolve(p, &["b".into(), "c".into()], &names))
        .collect();
    assert_eq!(c, vec![vec!["a".to_string()]]);
    let mut g = Graph::new();
    g.insert(vec!["a".into()], a);
    g.insert(vec!["b".into()], BTreeSet::new());
    g.insert(vec!["b".into(), "c".into()], c.into_iter().collect());
    assert_eq!(circles(&g).len(), 1);
}

/// A TUI module (`tui::x…`) as its path below `tui` ("" for the TUI's root).
fn in_tui(m: &[String]) -> Option<String> {
    (m.first().map(String::as_str) == Some("tui")).then(|| m[1..].join("::"))
}

#[test]
fn tui_pages_import_no_page_no_app_and_no_registry() {
    let g = import_graph();
    // The TUI's own graph: module names below `tui`.
    let tui: BTreeMap<String, BTreeSet<String>> = g
        .iter()
        .filter_map(|(m, to)| Some((in_tui(m)?, to.iter().filter_map(|t| in_tui(t)).collect())))
        .collect();
    let pages: BTreeSet<String> = tui
        .get("registry")
        .into_iter()
        .flatten()
        .filter(|m| !m.is_empty() && !["page", "model", "dialog", "job"].contains(&m.as_str()))
        .cloned()
        .collect();
    assert!(
        pages.contains("plan") && pages.contains("moving"),
        "the registry's pages were not read: {pages:?}"
    );
    let page_of = |m: &str| {
        pages
            .iter()
            .find(|p| m == p.as_str() || m.starts_with(&format!("{p}::")))
            .cloned()
    };
    for (m, to) in &tui {
        if to.contains("registry") {
            assert_eq!(m, "app", "only the app opens pages through the registry");
        }
        if let Some(p) = page_of(m) {
            assert!(!to.contains("app"), "page {m} imports the app");
            let others: Vec<&String> = to.intersection(&pages).filter(|o| **o != p).collect();
            assert!(others.is_empty(), "page {m} imports pages {others:?}");
        }
        let stem = m.strip_suffix("_view").or_else(|| m.strip_suffix("::view"));
        if let Some(p) = stem.filter(|p| pages.contains(*p)) {
            assert!(!to.contains(p), "the view {m} imports its page {p}");
        }
    }
    assert!(
        tui.get("app").is_some_and(|a| !a.contains("view")),
        "the app imports the view"
    );
}

#[test]
fn neither_front_end_calls_the_other() {
    let g = import_graph();
    let top = |m: &[String]| m.first().cloned().unwrap_or_default();
    let crossing: Vec<String> = g
        .iter()
        .flat_map(|(m, to)| to.iter().map(move |t| (m, t)))
        .filter(|(m, t)| {
            let (a, b) = (top(m), top(t));
            (a == "cli" && b == "tui") || (a == "tui" && b == "cli")
        })
        .map(|(m, t)| format!("{} -> {}", show(m), show(t)))
        .collect();
    assert!(
        g.keys().any(|m| top(m) == "cli") && g.keys().any(|m| top(m) == "tui"),
        "the scan read both front ends"
    );
    assert!(
        crossing.is_empty(),
        "a front end calls the other: {crossing:?}"
    );
}

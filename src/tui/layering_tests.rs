//! The TUI's layering, checked over its source: no import circle between its modules, pages that import
//! neither each other nor the app nor the registry, one registry, and neither front end (`src/cli`,
//! `src/tui`) calling the other outside their tests. Terms:
//! - a **module** is a file of `src/tui` (`x.rs` or `x/mod.rs` is `x`, `mod.rs` is the root); test modules
//!   (`tests`, `*_tests`) and inline `#[cfg(test)]` modules are left out;
//! - an **import** of module A by module B is a path in B that names A or an item in it: `use super::a::…`,
//!   `crate::tui::a::…`, `super::a::f(…)`, or a child's name in a `mod.rs`;
//! - a **circle** is a module that reaches itself through imports;
//! - the **pages** are the modules that `registry` names (`use super::{…}`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Imports left out of the check because the file that has them is rewritten in parallel (the sector-size
/// page): it takes `DiskState` from `app` (it is in `model`), and its view takes its state from the page.
const PENDING: &[(&str, &str)] = &[];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn is_test(module: &str) -> bool {
    module
        .split("::")
        .any(|s| s == "tests" || s.ends_with("_tests"))
}

/// Every module of `dir` (relative names joined by `::`, the root as "") and its file's text.
fn modules(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    let entries = std::fs::read_dir(dir).expect("src/tui is readable");
    for e in entries {
        let path = e.expect("directory entry").path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        let join = |n: &str| {
            if prefix.is_empty() {
                n.to_string()
            } else if n.is_empty() {
                prefix.to_string()
            } else {
                format!("{prefix}::{n}")
            }
        };
        if path.is_dir() {
            modules(&path, &join(&name), out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let module = join(if stem == "mod" { "" } else { stem });
            let text = std::fs::read_to_string(&path).expect("source is readable");
            out.insert(module, text);
        }
    }
}

/// The text without comments and without an inline test module (everything from `#[cfg(test)]` before
/// `mod NAME {` on).
fn code_of(text: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let all: Vec<&str> = text.lines().collect();
    for (i, l) in all.iter().enumerate() {
        let next = all.get(i + 1).map_or("", |n| n.trim());
        if l.trim() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
            break;
        }
        lines.push(l.split("//").next().unwrap_or(""));
    }
    lines.join("\n")
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        return vec![tree.to_string()];
    };
    let mut depth = 0;
    let mut close = tree.len();
    for (i, c) in tree.char_indices().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let (pre, inner) = (&tree[..open], &tree[open + 1..close.max(open + 1)]);
    let post = tree.get(close + 1..).unwrap_or("");
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(&format!("{pre}{p}{post}")))
        .collect()
}

/// Every path in `code`: the `use` trees expanded, and the `a::b::c` chains elsewhere.
fn paths_of(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in code.split(';') {
        let s = stmt.trim_start();
        let s = s
            .strip_prefix("pub(crate) ")
            .or_else(|| s.strip_prefix("pub(super) "))
            .or_else(|| s.strip_prefix("pub "))
            .unwrap_or(s);
        if let Some(tree) = s.strip_prefix("use ") {
            let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
            out.extend(expand(&tree));
        }
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut chain = String::new();
    for c in code.chars().chain(std::iter::once(' ')) {
        if word(c) {
            chain.push(c);
        } else {
            let path = chain.trim_matches(':');
            if path.contains("::") {
                out.push(path.to_string());
            }
            chain.clear();
        }
    }
    out
}

/// The imports of every module of `src/tui`, test modules left out.
fn graph() -> Graph {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui");
    let mut files = BTreeMap::new();
    modules(&root, "", &mut files);
    let known: BTreeSet<String> = files.keys().cloned().collect();
    let parent = |m: &str| {
        m.rsplit_once("::")
            .map_or(String::new(), |(p, _)| p.to_string())
    };
    let child = |m: &str, s: &str| {
        if m.is_empty() {
            s.to_string()
        } else {
            format!("{m}::{s}")
        }
    };
    let mut g = Graph::new();
    for (m, text) in files.iter().filter(|(m, _)| !is_test(m)) {
        let mut to = BTreeSet::new();
        for path in paths_of(&code_of(text)) {
            let segs: Vec<&str> = path.split("::").collect();
            let (mut at, rest): (String, &[&str]) = match segs.as_slice() {
                ["crate", "tui", rest @ ..] => (String::new(), rest),
                ["super", ..] | ["self", ..] => {
                    let mut at = m.clone();
                    let mut i = 0;
                    while let Some(&s) = segs.get(i).filter(|s| **s == "super" || **s == "self") {
                        if s == "super" {
                            at = parent(&at);
                        }
                        i += 1;
                    }
                    (at, &segs[i..])
                }
                [first, ..] if known.contains(&child(m, first)) => (m.clone(), &segs[..]),
                _ => continue,
            };
            for s in rest {
                let c = child(&at, s);
                if !known.contains(&c) {
                    break;
                }
                at = c;
            }
            if at != *m && !is_test(&at) && !PENDING.contains(&(m.as_str(), at.as_str())) {
                to.insert(at);
            }
        }
        g.insert(m.clone(), to);
    }
    g
}

/// The modules `from` reaches through imports.
fn reach(g: &Graph, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = g
        .get(from)
        .map(|s| s.iter().map(String::as_str).collect())
        .unwrap_or_default();
    while let Some(m) = todo.pop() {
        if seen.insert(m.to_string()) {
            todo.extend(g.get(m).into_iter().flatten().map(String::as_str));
        }
    }
    seen
}

fn name(m: &str) -> &str {
    if m.is_empty() {
        "tui"
    } else {
        m
    }
}

#[test]
fn the_tui_has_no_import_circle() {
    let g = graph();
    assert!(g.len() > 20, "the scan found the modules: {:?}", g.keys());
    let circles: Vec<String> = g
        .keys()
        .filter(|m| reach(&g, m).contains(*m))
        .map(|m| name(m).to_string())
        .collect();
    assert!(
        circles.is_empty(),
        "modules in an import circle: {circles:?}\n{g:#?}"
    );
}

#[test]
fn pages_import_no_page_no_app_and_no_registry() {
    let g = graph();
    let pages: BTreeSet<String> = g["registry"]
        .iter()
        .filter(|m| !["page", "model", "dialog", "job"].contains(&m.as_str()))
        .cloned()
        .collect();
    assert!(
        pages.contains("plan") && pages.contains("moving"),
        "{pages:?}"
    );
    for (m, to) in &g {
        if to.contains("registry") {
            assert_eq!(m, "app", "only the app opens pages through the registry");
        }
        let page = pages
            .iter()
            .find(|p| *m == **p || m.starts_with(&format!("{p}::")));
        if let Some(p) = page {
            assert!(!to.contains("app"), "page {} imports the app", name(m));
            let others: Vec<&String> = to.intersection(&pages).filter(|o| *o != p).collect();
            assert!(
                others.is_empty(),
                "page {} imports pages {others:?}",
                name(m)
            );
        }
    }
    for (m, to) in &g {
        let stem = m.strip_suffix("_view").or_else(|| m.strip_suffix("::view"));
        if let Some(p) = stem.filter(|p| pages.contains(*p)) {
            assert!(!to.contains(p), "the view {m} imports its page {p}");
        }
    }
    assert!(
        !g["app"].contains("view") && !g["view"].is_empty(),
        "the app does not import the view"
    );
}

/// The paths in the code of every non-test file under `src/<dir>` (comments and inline test modules left out).
fn paths_under(dir: &str) -> Vec<(String, String)> {
    let mut files = BTreeMap::new();
    modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir),
        "",
        &mut files,
    );
    files
        .iter()
        .filter(|(m, _)| !is_test(m))
        .flat_map(|(m, text)| {
            paths_of(&code_of(text))
                .into_iter()
                .map(move |p| (name(m).to_string(), p))
        })
        .collect()
}

#[test]
fn neither_front_end_calls_the_other() {
    let cli_to_tui: Vec<_> = paths_under("cli")
        .into_iter()
        .filter(|(_, p)| p.starts_with("crate::tui"))
        .collect();
    assert!(
        cli_to_tui.is_empty(),
        "the CLI calls the TUI: {cli_to_tui:?}"
    );
    let tui = paths_under("tui");
    assert!(
        tui.iter().any(|(_, p)| p.starts_with("super::")),
        "the scan read the TUI"
    );
    let tui_to_cli: Vec<_> = tui
        .into_iter()
        .filter(|(_, p)| p.starts_with("crate::cli"))
        .collect();
    assert!(
        tui_to_cli.is_empty(),
        "the TUI calls the CLI: {tui_to_cli:?}"
    );
}

//! The runtime's modules import one another without a circle (see the crate
//! docs): each `crate::module` a file of `src/` names in code is an edge
//! from the file's top-level module to that one, and the edges form no
//! cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level module a source file belongs to (`graph/mod.rs` and
/// `graph/raw.rs` are `graph`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("a file under src/");
    let first = rel.components().next().expect("a path").as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_string()
}

/// The modules a file names in code: `crate::name` anywhere outside
/// comments (imports and inline paths), and the names of a grouped
/// `use crate::{a, b::C}` import.
fn imports(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or("");
                out.extend(group.split(',').map(|item| ident(item.trim())));
            } else {
                out.insert(ident(rest));
            }
        }
    }
    out.remove("");
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src/") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A cycle through `at`, if the graph has one reachable from it.
fn cycle_from(
    at: &str,
    edges: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(start) = path.iter().position(|m| m == at) {
        let mut cycle = path[start..].to_vec();
        cycle.push(at.to_string());
        return Some(cycle);
    }
    if done.contains(at) {
        return None;
    }
    path.push(at.to_string());
    for next in edges.get(at).into_iter().flatten() {
        if let Some(cycle) = cycle_from(next, edges, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done.insert(at.to_string());
    None
}

#[test]
fn runtime_modules_import_without_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &all {
        let module = module_of(&src, file);
        if module == "lib" {
            continue; // the crate root re-exports everything
        }
        let text = std::fs::read_to_string(file).expect("readable source");
        for imported in imports(&text) {
            if imported != module {
                edges.entry(module.clone()).or_default().insert(imported);
            }
        }
    }
    assert!(
        edges.contains_key("graph") && edges.contains_key("exec"),
        "the scan found the runtime's modules: {edges:?}"
    );
    let mut done = BTreeSet::new();
    for module in edges.keys() {
        let cycle = cycle_from(module, &edges, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "import circle: {}",
            cycle.unwrap_or_default().join(" -> ")
        );
    }
}

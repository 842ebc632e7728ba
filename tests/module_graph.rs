//! The crate's modules depend on each other in one direction only: no import cycles.
//!
//! Every module under native/src names what it uses from the crate as `crate::<module>::...`
//! (or `crate::<module>` itself); this test reads those paths, builds the module graph and
//! fails on a cycle, or on a `crate::` path that does not start with a module name (which
//! would hide an edge behind a re-export of lib.rs). The boundary modules `ffi` and `jni`
//! may use the root's re-exports: nothing depends on them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn modules() -> BTreeMap<String, String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("native/src");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("native/src") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            if name != "lib" {
                out.insert(name, std::fs::read_to_string(&path).expect("readable"));
            }
        }
    }
    out
}

/// The identifiers that follow `crate::` in the code of `source` (comments, doc links
/// included, are no dependency), braces of `use crate::{a, b}` included.
fn crate_paths(source: &str) -> Vec<String> {
    let code: String = source
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let names: Vec<&str> = if let Some(inner) = rest.strip_prefix('{') {
            let end = inner.find('}').unwrap_or(inner.len());
            inner[..end].split(',').map(|p| p.trim().split("::").next().unwrap_or("").trim()).collect()
        } else {
            vec![rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("")]
        };
        out.extend(names.into_iter().filter(|n| !n.is_empty()).map(str::to_string));
    }
    out
}

#[test]
fn modules_have_no_import_cycles() {
    let modules = modules();
    // jni_reader.rs, jni_objects.rs and jni_parquet.rs are jni.rs's submodules for the reader's,
    // the object operations' and the Parquet writer's methods: the JVM boundary too.
    let boundaries = ["ffi", "jni", "jni_reader", "jni_objects", "jni_parquet"];
    let mut graph: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (name, source) in &modules {
        let deps = graph.entry(name).or_default();
        for dep in crate_paths(source) {
            if modules.contains_key(&dep) {
                if &dep != name {
                    deps.insert(dep);
                }
            } else if !boundaries.contains(&name.as_str()) {
                panic!("native/src/{name}.rs uses crate::{dep}: name the module (crate::<module>::{dep}) so the graph shows the edge");
            }
        }
    }
    for b in boundaries {
        for (name, deps) in &graph {
            assert!(!deps.contains(b), "{name} depends on the boundary module {b}");
        }
    }
    // Depth-first search; a node met again while on the stack closes a cycle.
    fn visit<'a>(n: &'a str, graph: &'a BTreeMap<&str, BTreeSet<String>>, stack: &mut Vec<&'a str>, done: &mut BTreeSet<&'a str>) {
        if done.contains(n) {
            return;
        }
        if let Some(at) = stack.iter().position(|m| *m == n) {
            panic!("import cycle: {} -> {n}", stack[at..].join(" -> "));
        }
        stack.push(n);
        for d in graph.get(n).into_iter().flatten() {
            visit(d, graph, stack, done);
        }
        stack.pop();
        done.insert(n);
    }
    let mut done = BTreeSet::new();
    for n in graph.keys() {
        visit(n, &graph, &mut Vec::new(), &mut done);
    }
    assert!(graph.len() >= 9, "found the modules: {:?}", graph.keys().collect::<Vec<_>>());
}

#[test]
fn the_reader_finds_crate_paths() {
    let src = "use crate::error::{Error, Result};\nuse crate::{a::X, b};\n/// [`x`](crate::doc)\nlet x = crate::pool::budget(); // crate::c";
    assert_eq!(crate_paths(src), ["error", "a", "b", "pool"]);
}

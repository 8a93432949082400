//! The console's modules import one another in one direction only: no circle (a module that reaches itself through the ones it names), so each can be read, and changed, from the bottom up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each console module (a folder module, such as the pages or the words, as one) and the console
/// modules it names.
/// The Rust files of a module: its file, or every file in its folder.
fn rust_files(path: &Path) -> Vec<std::path::PathBuf> {
    if path.is_dir() {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(path).unwrap() {
            files.extend(rust_files(&entry.unwrap().path()));
        }
        files
    } else if path.extension().is_some_and(|ext| ext == "rs") {
        vec![path.to_path_buf()]
    } else {
        Vec::new()
    }
}

fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/console");
    // Each module's text, with the way each of its files names the console (`super::` from
    // console/x.rs, `super::super::` from console/x/y.rs, `crate::console::`) written one way:
    // `console::`.
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "mod" || name == "assets" {
            continue;
        }
        let text = sources.entry(name).or_default();
        for file in rust_files(&path) {
            let relative = file.strip_prefix(&root).unwrap();
            let mut depth = relative.components().count();
            if file.file_stem().unwrap() == "mod" {
                depth -= 1;
            }
            let to_console = "super::".repeat(depth);
            let source = std::fs::read_to_string(&file).unwrap();
            text.push_str(
                &source
                    .replace(&to_console, "console::")
                    .replace("crate::console::", "console::"),
            );
            text.push('\n');
        }
    }
    sources.retain(|_, text| !text.is_empty());
    let names: Vec<String> = sources.keys().cloned().collect();
    sources
        .iter()
        .map(|(module, text)| {
            let prefixes: &[&str] = &["console::"];
            let named = names
                .iter()
                .filter(|name| *name != module)
                .filter(|name| {
                    prefixes.iter().any(|prefix| {
                        let needle = format!("{prefix}{name}");
                        text.match_indices(&needle).any(|(at, _)| {
                            let after = text[at + needle.len()..].chars().next();
                            !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                        })
                    })
                })
                .cloned()
                .collect();
            (module.clone(), named)
        })
        .collect()
}

#[test]
fn no_console_module_reaches_itself_through_its_imports() {
    let graph = imports();
    assert!(graph.contains_key("error") && graph.contains_key("pages"), "{graph:?}");
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<Vec<String>> = graph[start]
            .iter()
            .map(|next| vec![start.clone(), next.clone()])
            .collect();
        while let Some(path) = stack.pop() {
            let last = path.last().unwrap();
            assert_ne!(last, start, "an import circle: {}", path.join(" → "));
            if seen.insert(last.clone()) {
                for next in graph.get(last).into_iter().flatten() {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push(longer);
                }
            }
        }
    }
}

//! The console's modules import one another in one direction only: no circle (a module that reaches itself through the ones it names), so each can be read, and changed, from the bottom up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each console module (the pages as one) and the console modules it names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/console");
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "rs") && path.file_stem().unwrap() != "mod" {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            sources.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    let mut pages = String::new();
    for entry in std::fs::read_dir(root.join("pages")).unwrap() {
        pages.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    sources.insert("pages".into(), pages);
    let names: Vec<String> = sources.keys().cloned().collect();
    sources
        .iter()
        .map(|(module, text)| {
            // A page names a sibling module as `super::super::NAME` or `crate::console::NAME`.
            let prefixes: &[&str] = if module == "pages" {
                &["super::super::", "crate::console::"]
            } else {
                &["super::", "crate::console::"]
            };
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

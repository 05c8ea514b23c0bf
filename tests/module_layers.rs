//! The core's modules depend on each other downward only: no circle of imports.
//!
//! Reads every file under `src/`, takes each `crate::<module>` it names (outside tests and
//! comments) as an arrow from its top-level module to that one, and finds the circles (modules
//! that reach each other). A circle fails here with the arrows that close it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Arrows between the crate's top-level modules: module → the modules it names.
fn arrows() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // Test code may reach anywhere: only what the module itself is built from counts.
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or_default()
            .lines()
            .filter(|line| !line.trim_start().starts_with("//")) // a doc link is no import
            .collect::<Vec<_>>()
            .join("\n");
        let code = code.as_str();
        let targets = graph.entry(module.clone()).or_default();
        for (at, _) in code.match_indices("crate::") {
            let name: String = code[at + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && name != module && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                targets.insert(name);
            }
        }
    }
    graph
}

/// The strongly connected sets of more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten().filter(|w| s.graph.contains_key(*w)) {
            let w = s.graph.get_key_value(w).unwrap().0.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                set.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                s.out.push(set);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.out
}

#[test]
fn no_circle_of_imports_between_the_cores_modules() {
    let graph = arrows();
    assert!(graph.contains_key("agent") && graph.contains_key("web"), "the modules were read: {:?}", graph.keys());
    if let Some(circle) = circles(&graph).into_iter().next() {
        let arrows_inside: Vec<String> = circle
            .iter()
            .flat_map(|m| graph[m].iter().filter(|t| circle.contains(*t)).map(move |t| format!("{m} → {t}")))
            .collect();
        panic!("a circle of imports: {circle:?}, closed by these arrows:\n  {}", arrows_inside.join("\n  "));
    }
}

#[test]
fn schedules_stand_on_the_lowest_layer_only() {
    // The worker and the extension wire schedules to chrome.alarms; the schedules themselves
    // are times and a stored list, decided below the agent.
    let graph = arrows();
    let lowest = ["web", "message", "json", "tagged"];
    let named = graph.get("schedule").expect("src/schedule was read");
    let above: Vec<&String> = named.iter().filter(|m| !lowest.contains(&m.as_str())).collect();
    assert!(above.is_empty(), "schedule names {above:?}; it may name only {lowest:?}");
}

#[test]
fn circles_are_found_and_layers_are_not_circles() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    let layered = graph(&[("agent", "actions"), ("actions", "dom"), ("agent", "dom")]);
    assert!(circles(&layered).is_empty());
    let looped = graph(&[("agent", "actions"), ("actions", "dom"), ("dom", "agent"), ("web", "dom")]);
    let found = circles(&looped);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0], ["actions", "agent", "dom"].iter().map(|s| s.to_string()).collect());
}

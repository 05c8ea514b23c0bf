//! Splits the core's wasm in two, so that a cold start of the service worker decodes only the
//! code it runs.
//!
//! Why: Chrome decodes and validates every function of a module before it can instantiate it,
//! at about 1.2 ms per 100 KB here, on every start of the worker. The first request after a
//! start (the panel asking for the task's status, a saved task's restore check) runs a small
//! part of the core; the agent loop, the actions, the providers and the settings are the rest.
//!
//! How: the functions a cold start runs (the list in startup-functions.txt, by name) stay in
//! the startup module, which wasm-bindgen's glue loads as before. Every other function moves
//! to the rest module. In the startup module, each moved function keeps its index, type and
//! exports but its body becomes a stub that, the first time, calls the loader, then calls the
//! real function through a table (`~rest`) that the rest module fills when it is
//! instantiated. The rest module imports the startup module's memory, tables, globals and the
//! functions it calls (exported under `~f<n>`, `~g<n>`, `~t<n>`, `~m<n>`). Whatever the list
//! says, every function is reachable: a function missing from it costs the first call a
//! synchronous load of the rest, never a failure.
//!
//! The loader is the startup module's export `load_rest_of_core` (src/ext/rest.rs), which asks
//! the worker to instantiate the rest (extension/background.js).
//!
//! Usage: split-core IN.wasm STARTUP_LIST OUT_STARTUP.wasm OUT_REST.wasm
//! IN.wasm must keep its name section (wasm-opt -g); neither output has one.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use walrus::ir::{Instr, Visitor};
use walrus::{
    ConstExpr, ElementItems, ElementKind, ExportItem, FunctionBuilder, FunctionId, FunctionKind, GlobalKind, ImportId,
    ImportKind, ImportedFunction, LocalFunction, Module, ModuleConfig, RefType, TableId,
};

/// The import module name the rest module uses for everything it takes from the startup one.
const FROM_STARTUP: &str = "startup";
/// The table the stubs call through, which the rest module fills.
const REST_TABLE: &str = "~rest";
/// The startup module's export that loads the rest (src/ext/rest.rs).
const LOADER_EXPORT: &str = "load_rest_of_core";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, list, out_startup, out_rest] = args.as_slice() else {
        eprintln!("usage: split-core IN.wasm STARTUP_LIST OUT_STARTUP.wasm OUT_REST.wasm");
        return ExitCode::from(2);
    };
    match run(input, list, out_startup, out_rest) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("split-core: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(input: &str, list: &str, out_startup: &str, out_rest: &str) -> Result<String> {
    let bytes = std::fs::read(input).with_context(|| format!("reading {input}"))?;
    let list = std::fs::read_to_string(list).with_context(|| format!("reading {list}"))?;
    let split = split(&bytes, &startup_names(&list))?;
    std::fs::write(out_startup, &split.startup).with_context(|| format!("writing {out_startup}"))?;
    std::fs::write(out_rest, &split.rest).with_context(|| format!("writing {out_rest}"))?;
    Ok(format!(
        "split-core: {} functions kept for the start ({} listed names matching none), {} moved; startup {} bytes, rest {} bytes",
        split.kept, split.unmatched, split.moved, split.startup.len(), split.rest.len()
    ))
}

/// The names in the list: one per line, `#` starts a comment.
fn startup_names(list: &str) -> HashSet<String> {
    list.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect()
}

/// A function's name without the hashes rustc writes into it (`::h` and 16 hex digits at the
/// end, `[` 16 hex digits `]` after some crates' names), which change with the compiler and
/// the dependencies' versions, so that a list outlives such a change.
pub fn stable_name(name: &str) -> String {
    let name = match name.rsplit_once("::h") {
        Some((stem, hash)) if is_hash(hash) => stem,
        _ => name,
    };
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close) if is_hash(&after[..close]) => {
                out.push_str(&rest[..open]);
                rest = &after[close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_hash(s: &str) -> bool {
    s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

struct Split {
    startup: Vec<u8>,
    rest: Vec<u8>,
    kept: usize,
    moved: usize,
    unmatched: usize,
}

fn parse(bytes: &[u8]) -> Result<Module> {
    let mut config = ModuleConfig::new();
    config.generate_name_section(false).generate_producers_section(false);
    config.parse(bytes).context("reading the module")
}

fn split(bytes: &[u8], names: &HashSet<String>) -> Result<Split> {
    // The same bytes read twice give the same items in the same order: an item's index is
    // its identity across the two.
    let mut startup = parse(bytes)?;
    let mut rest = parse(bytes)?;
    check_no_segment_instructions(&startup)?;

    let loader = startup
        .exports
        .get_func(LOADER_EXPORT)
        .with_context(|| format!("the module has no `{LOADER_EXPORT}` export (src/ext/rest.rs)"))?;

    // What stays: the listed functions, those with no name (the list cannot name them), and
    // the loader with everything it calls directly. A listed name is matched whole; one that
    // no function has any more (rustc's hashes change with the compiler or a dependency) is
    // matched without them, which may keep a few more functions than the start needs.
    let local_names: Vec<(usize, Option<&str>)> = startup
        .funcs
        .iter()
        .filter(|f| matches!(f.kind, FunctionKind::Local(_)))
        .map(|f| (f.id().index(), f.name.as_deref()))
        .collect();
    let present: HashSet<&str> = local_names.iter().filter_map(|(_, name)| *name).collect();
    let stale: HashSet<String> =
        names.iter().filter(|n| !present.contains(n.as_str())).map(|n| stable_name(n)).collect();
    let mut keep: BTreeSet<usize> = BTreeSet::new();
    let mut matched_stale: HashSet<String> = HashSet::new();
    for &(index, name) in &local_names {
        let Some(name) = name else {
            keep.insert(index);
            continue;
        };
        if names.contains(name) {
            keep.insert(index);
        } else if !stale.is_empty() {
            let stable = stable_name(name);
            if stale.contains(&stable) {
                matched_stale.insert(stable);
                keep.insert(index);
            }
        }
    }
    let unmatched = stale.len() - matched_stale.len();
    for f in direct_callees(&startup, loader) {
        keep.insert(f.index());
    }
    let moved: Vec<FunctionId> = startup
        .funcs
        .iter()
        .filter(|f| matches!(f.kind, FunctionKind::Local(_)) && !keep.contains(&f.id().index()))
        .map(|f| f.id())
        .collect();
    let slot_of: BTreeMap<usize, u32> = moved.iter().enumerate().map(|(slot, f)| (f.index(), slot as u32)).collect();

    // --- The rest module: the moved functions, everything else imported. ---
    let needs = build_rest(&mut rest, &slot_of, moved.len() as u64)?;

    // --- The startup module: stubs in place of the moved functions. ---
    let rest_table = startup.tables.add_local(false, moved.len() as u64, Some(moved.len() as u64), RefType::FUNCREF);
    startup.exports.add(REST_TABLE, rest_table);
    for &f in &moved {
        stub(&mut startup, f, slot_of[&f.index()], rest_table, loader);
    }
    export_needs(&mut startup, &needs);
    walrus::passes::gc::run(&mut startup);

    Ok(Split { startup: startup.emit_wasm(), rest: rest.emit_wasm(), kept: keep.len(), moved: moved.len(), unmatched })
}

/// The name the startup module exports an item under for the rest module, and the rest module
/// imports it by: `~`, the kind (`f`unction, `g`lobal, `t`able, `m`emory), the item's index.
fn shared_name(kind: char, index: usize) -> String {
    format!("~{kind}{index}")
}

/// Turns `rest` (a copy of the whole module) into the rest module: the functions in `slot_of`
/// stay, placed in the imported `~rest` table at their slots; every other function, and every
/// memory, table and global, is imported from the startup module; data, element segments,
/// exports and the start function belong to the startup module and go.
fn build_rest(rest: &mut Module, slot_of: &BTreeMap<usize, u32>, slots: u64) -> Result<HashSet<String>> {
    rest.start = None;
    let exports: Vec<_> = rest.exports.iter().map(|e| e.id()).collect();
    for e in exports {
        rest.exports.delete(e);
    }
    let elements: Vec<_> = rest.elements.iter().map(|e| e.id()).collect();
    for e in elements {
        rest.elements.delete(e);
    }
    for t in rest.tables.iter_mut() {
        t.elem_segments.clear();
    }
    let data: Vec<_> = rest.data.iter().map(|d| d.id()).collect();
    for d in data {
        rest.data.delete(d);
    }
    for m in rest.memories.iter_mut() {
        m.data_segments.clear();
    }

    // Everything the startup module defines or imports becomes an import from it.
    let funcs: Vec<(FunctionId, Option<ImportId>, walrus::TypeId)> = rest
        .funcs
        .iter()
        .filter(|f| !slot_of.contains_key(&f.id().index()))
        .map(|f| match &f.kind {
            FunctionKind::Import(i) => (f.id(), Some(i.import), i.ty),
            _ => (f.id(), None, f.ty()),
        })
        .collect();
    for (f, import, ty) in funcs {
        if let Some(import) = import_from_startup(rest, import, shared_name('f', f.index()), ImportKind::Function(f)) {
            rest.funcs.get_mut(f).kind = FunctionKind::Import(ImportedFunction { import, ty });
        }
    }
    let globals: Vec<_> = rest
        .globals
        .iter()
        .map(|g| (g.id(), if let GlobalKind::Import(import) = g.kind { Some(import) } else { None }))
        .collect();
    for (g, import) in globals {
        if let Some(import) = import_from_startup(rest, import, shared_name('g', g.index()), ImportKind::Global(g)) {
            rest.globals.get_mut(g).kind = GlobalKind::Import(import);
        }
    }
    let tables: Vec<_> = rest.tables.iter().map(|t| (t.id(), t.import)).collect();
    for (t, import) in tables {
        if let Some(import) = import_from_startup(rest, import, shared_name('t', t.index()), ImportKind::Table(t)) {
            let table = rest.tables.get_mut(t);
            table.import = Some(import);
            table.init = None;
        }
    }
    let memories: Vec<_> = rest.memories.iter().map(|m| (m.id(), m.import)).collect();
    for (m, import) in memories {
        if let Some(import) = import_from_startup(rest, import, shared_name('m', m.index()), ImportKind::Memory(m)) {
            rest.memories.get_mut(m).import = Some(import);
        }
    }

    // The moved functions, each at its slot of the startup module's `~rest` table.
    let (table, _) = rest.add_import_table(FROM_STARTUP, REST_TABLE, false, slots, Some(slots), RefType::FUNCREF);
    let mut by_slot: Vec<(u32, FunctionId)> =
        rest.funcs.iter().filter_map(|f| slot_of.get(&f.id().index()).map(|&slot| (slot, f.id()))).collect();
    by_slot.sort();
    let element = rest.elements.add(
        ElementKind::Active { table, offset: ConstExpr::Value(walrus::ir::Value::I32(0)) },
        ElementItems::Functions(by_slot.into_iter().map(|(_, f)| f).collect()),
    );
    rest.tables.get_mut(table).elem_segments.insert(element);

    walrus::passes::gc::run(rest);

    // What is left imported is what the startup module must export.
    let mut needs = HashSet::new();
    for import in rest.imports.iter().filter(|i| i.name != REST_TABLE) {
        if import.module != FROM_STARTUP {
            bail!("the rest module imports {}/{}, which is not the startup module's", import.module, import.name);
        }
        if let ImportKind::Tag(_) = import.kind {
            bail!("the module uses exception tags, which the split does not carry");
        }
        needs.insert(import.name.clone());
    }
    Ok(needs)
}

/// Makes an item of `rest` come from the startup module under `name`: its import, if it has
/// one (`existing`), is renamed; otherwise an import of `kind` is added and returned, for the
/// item to point to.
fn import_from_startup(
    rest: &mut Module,
    existing: Option<ImportId>,
    name: String,
    kind: ImportKind,
) -> Option<ImportId> {
    match existing {
        Some(import) => {
            let import = rest.imports.get_mut(import);
            import.module = FROM_STARTUP.to_string();
            import.name = name;
            None
        }
        None => Some(rest.imports.add(FROM_STARTUP, &name, kind)),
    }
}

/// Exports from the startup module everything the rest module imports, under the names the
/// rest module asks for.
fn export_needs(startup: &mut Module, needs: &HashSet<String>) {
    let items: Vec<(String, ExportItem)> = startup
        .funcs
        .iter()
        .map(|f| (shared_name('f', f.id().index()), ExportItem::Function(f.id())))
        .chain(startup.globals.iter().map(|g| (shared_name('g', g.id().index()), ExportItem::Global(g.id()))))
        .chain(startup.tables.iter().map(|t| (shared_name('t', t.id().index()), ExportItem::Table(t.id()))))
        .chain(startup.memories.iter().map(|m| (shared_name('m', m.id().index()), ExportItem::Memory(m.id()))))
        .filter(|(name, _)| needs.contains(name))
        .collect();
    for (name, item) in items {
        startup.exports.add(&name, item);
    }
}

/// Replaces `f`'s body with: load the rest if its slot is still empty, then call the real
/// function through the `~rest` table with the same arguments.
fn stub(module: &mut Module, f: FunctionId, slot: u32, rest_table: TableId, loader: FunctionId) {
    let ty = module.funcs.get(f).ty();
    let (params, results) = {
        let t = module.types.get(ty);
        (t.params().to_vec(), t.results().to_vec())
    };
    let args: Vec<_> = params.iter().map(|&p| module.locals.add(p)).collect();
    let mut builder = FunctionBuilder::new(&mut module.types, &params, &results);
    let mut body = builder.func_body();
    body.i32_const(slot as i32).table_get(rest_table).ref_is_null().if_else(
        None,
        |then| {
            then.call(loader);
        },
        |_| {},
    );
    for &a in &args {
        body.local_get(a);
    }
    body.i32_const(slot as i32).call_indirect(ty, rest_table);
    let stub: LocalFunction = builder.local_func(args);
    module.funcs.get_mut(f).kind = FunctionKind::Local(stub);
}

/// The functions `f` calls directly, and theirs, `f` included.
fn direct_callees(module: &Module, f: FunctionId) -> Vec<FunctionId> {
    struct Calls<'a>(&'a mut Vec<FunctionId>);
    impl<'instr> Visitor<'instr> for Calls<'_> {
        fn visit_instr(&mut self, instr: &'instr Instr, _: &'instr walrus::InstrLocId) {
            if let Instr::Call(call) = instr {
                self.0.push(call.func);
            }
        }
    }
    let mut seen = vec![f];
    let mut i = 0;
    while i < seen.len() {
        let mut found = Vec::new();
        if let FunctionKind::Local(local) = &module.funcs.get(seen[i]).kind {
            walrus::ir::dfs_in_order(&mut Calls(&mut found), local, local.entry_block());
        }
        for g in found {
            if !seen.contains(&g) {
                seen.push(g);
            }
        }
        i += 1;
    }
    seen
}

/// The rest module has no data or element segments of its own, so no function may refer to
/// one (Rust's output does not: its segments are active).
fn check_no_segment_instructions(module: &Module) -> Result<()> {
    struct Find(Option<&'static str>);
    impl<'instr> Visitor<'instr> for Find {
        fn visit_instr(&mut self, instr: &'instr Instr, _: &'instr walrus::InstrLocId) {
            self.0 = self.0.or(match instr {
                Instr::MemoryInit(_) => Some("memory.init"),
                Instr::DataDrop(_) => Some("data.drop"),
                Instr::TableInit(_) => Some("table.init"),
                Instr::ElemDrop(_) => Some("elem.drop"),
                _ => None,
            });
        }
    }
    for (id, local) in module.funcs.iter_local() {
        let mut find = Find(None);
        walrus::ir::dfs_in_order(&mut find, local, local.entry_block());
        if let Some(instr) = find.0 {
            bail!("function {:?} uses {instr}, which the split cannot carry", module.funcs.get(id).name);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hashes_rustc_writes_are_dropped() {
        assert_eq!(
            stable_name("tabwright::ext::exports::answer_now::h0123456789abcdef"),
            "tabwright::ext::exports::answer_now"
        );
        assert_eq!(
            stable_name("<&dyn core[c5930c85a12de822]::fmt::Debug as core[c5930c85a12de822]::fmt::Debug>::fmt"),
            "<&dyn core::fmt::Debug as core::fmt::Debug>::fmt"
        );
        assert_eq!(stable_name("core::fmt::write"), "core::fmt::write");
        assert_eq!(stable_name("a::hb"), "a::hb");
        assert_eq!(stable_name("<[u8]>::len"), "<[u8]>::len");
        assert_eq!(stable_name("x[0123]::y[0123456789abcdef]"), "x[0123]::y");
    }

    #[test]
    fn the_list_ignores_comments_and_blank_lines() {
        let names = startup_names("# comment\n\na::b  # why\n  c::d\n");
        assert_eq!(names, HashSet::from(["a::b".to_string(), "c::d".to_string()]));
    }
}

//! Loading the rest of the core on first use.
//!
//! scripts/build splits the core's wasm in two (scripts/split-core): the functions a cold
//! start of the worker runs to answer the panel (restoring a finished task included) stay in
//! the module the worker instantiates at once; the others move to a second module. Chrome decodes every function of
//! a module before instantiating it, so the split keeps most of the core out of a cold start's
//! way.
//!
//! In the first module, each moved function is a stub that calls [`load_rest_of_core`] while
//! the rest is not loaded, then calls the real function. The worker does the loading
//! (`tabwrightCore.loadRest` in extension/background.js): it instantiates the second module,
//! synchronously, with this module's memory, tables and functions. Its bytes are there by
//! then: everything but a status request with no task saved waits for them first.

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = tabwrightCore, js_name = loadRest, catch)]
    fn load_rest() -> Result<(), JsValue>;
}

/// Loads the rest of the core; called by the stubs scripts/split-core puts in place of the
/// moved functions (and never by Rust code). If it cannot be loaded, the core cannot go on:
/// this traps, and the worker reports the core as stopped, with the reason it recorded.
#[wasm_bindgen]
pub fn load_rest_of_core() {
    if load_rest().is_err() {
        std::process::abort();
    }
}

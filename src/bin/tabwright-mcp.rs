//! Tabwright's MCP server for coding agents, and the bridge Chrome starts to reach it
//! (`tabwright::mcp`). Nothing of it runs in the extension.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(tabwright::mcp::main_with(args));
}

#[cfg(target_arch = "wasm32")]
fn main() {}

//! `tabwright-mcp`: how coding agents (Claude Code, Cursor…) reach Tabwright over the Model
//! Context Protocol. Native only: it is a program of its own beside the browser, never part of
//! the extension's WebAssembly.
//!
//! One binary, two roles. A client starts it as its MCP server (`server.rs`, stdio). Chrome
//! starts it as the native-messaging host `com.tabwright.bridge` when the extension connects
//! its native port (`bridge.rs`). The two meet on a Unix socket only this user can open
//! ([`socket_place`]): no network port, so no web page and no other user of the machine can
//! reach the person's browser through it. What crosses is `crate::bridge`'s messages, read by
//! the core's own types on both sides.

pub mod bridge;
pub mod link;
pub mod native;
pub mod server;
pub mod tools;

use std::path::PathBuf;

/// Where the bridge listens and the servers connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketPlace {
    pub path: PathBuf,
    /// The folder is Tabwright's own (`~/.tabwright`): kept to this user even when it exists
    /// already. A folder `TABWRIGHT_BRIDGE_SOCKET` names is made private only when the bridge
    /// makes it, never changed when it was there (it may be `/tmp`).
    pub folder_is_ours: bool,
}

/// Why there is no place for the socket.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SocketPlaceError {
    #[error(
        "neither TABWRIGHT_BRIDGE_SOCKET nor HOME is set, so there is no place for the bridge's socket: set HOME, or \
         TABWRIGHT_BRIDGE_SOCKET to a path in a folder only you can open, for the browser and the coding agent alike"
    )]
    NoHome,
}

/// Where the bridge listens: `TABWRIGHT_BRIDGE_SOCKET` when set (a test's own, or another
/// place the person chose), else `$HOME/.tabwright/bridge.sock`.
pub fn socket_place() -> Result<SocketPlace, SocketPlaceError> {
    if let Some(path) = std::env::var_os("TABWRIGHT_BRIDGE_SOCKET").filter(|p| !p.is_empty()) {
        return Ok(SocketPlace { path: PathBuf::from(path), folder_is_ours: false });
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or(SocketPlaceError::NoHome)?;
    Ok(SocketPlace { path: PathBuf::from(home).join(".tabwright").join("bridge.sock"), folder_is_ours: true })
}

/// Whether Chrome started this process as its native-messaging host: its first argument is the
/// caller's origin.
pub fn started_by_chrome(args: &[String]) -> bool {
    args.first().is_some_and(|a| a.starts_with("chrome-extension://"))
}

const HELP: &str = "tabwright-mcp: Tabwright's MCP server for coding agents.

Usage: tabwright-mcp            the MCP server, over stdin and stdout
       tabwright-mcp --help     this text
       tabwright-mcp --version  the version

Add it to your agent as a stdio MCP server (scripts/install-mcp prints the lines for Claude Code,
Claude Desktop and Cursor). Chrome starts it too, as the native-messaging host
com.tabwright.bridge, when the Tabwright extension connects (its first argument is then the
extension's origin, chrome-extension://<id>/). The two meet on the socket
$TABWRIGHT_BRIDGE_SOCKET, or ~/.tabwright/bridge.sock, which only you can open. When two browsers
run Tabwright, the first one's bridge holds the socket; the other's waits, trying again every
2 s, and takes over when the first one ends.";

/// Runs the role `args` (without the program's name) asks for; the process's exit code.
pub fn main_with(args: Vec<String>) -> i32 {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{HELP}");
        return 0;
    }
    if args.iter().any(|a| a == "--version") {
        println!("tabwright-mcp {}", env!("CARGO_PKG_VERSION"));
        return 0;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tabwright-mcp: cannot start: {e}");
            return 1;
        }
    };
    let socket = match socket_place() {
        Ok(socket) => socket,
        Err(e) => {
            eprintln!("tabwright-mcp: {e}");
            return 1;
        }
    };
    let outcome = if started_by_chrome(&args) {
        runtime.block_on(bridge::run(&socket)).map_err(|e| e.to_string())
    } else {
        runtime.block_on(serve(socket.path))
    };
    match outcome {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("tabwright-mcp: {e}");
            1
        }
    }
}

async fn serve(socket: PathBuf) -> Result<(), String> {
    use rmcp::ServiceExt;
    let server = server::TabwrightServer::new(link::Link::new(socket));
    let running =
        server.serve(rmcp::transport::stdio()).await.map_err(|e| format!("the client did not start MCP: {e}"))?;
    running.waiting().await.map_err(|e| e.to_string())?;
    Ok(())
}

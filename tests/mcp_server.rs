//! `tabwright-mcp`, the built binary, in both its roles: as the bridge Chrome starts (this test
//! plays Chrome on its stdin and stdout, and two clients on its socket), and as the MCP server a
//! client starts (this test plays the client over JSON-RPC, and the worker behind a bridge's
//! socket).
#![cfg(unix)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

const BINARY: &str = env!("CARGO_BIN_EXE_tabwright-mcp");

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tabwright-mcp-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn frame(value: &Value) -> Vec<u8> {
    let json = serde_json::to_vec(value).unwrap();
    let mut out = (json.len() as u32).to_ne_bytes().to_vec();
    out.extend(json);
    out
}

fn read_frame(from: &mut ChildStdout) -> Value {
    let mut length = [0u8; 4];
    from.read_exact(&mut length).unwrap();
    let mut body = vec![0u8; u32::from_ne_bytes(length) as usize];
    from.read_exact(&mut body).unwrap();
    tabwright::json::from_text(&String::from_utf8(body).unwrap()).unwrap()
}

fn connect(socket: &Path) -> UnixStream {
    for _ in 0..100 {
        if let Ok(stream) = UnixStream::connect(socket) {
            stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            return stream;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no bridge listens at {}", socket.display());
}

fn read_line(stream: &mut BufReader<UnixStream>) -> Value {
    let mut line = String::new();
    stream.read_line(&mut line).unwrap();
    tabwright::json::from_text(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
}

fn start_bridge(socket: &Path) -> Bridge {
    let mut child = Command::new(BINARY)
        .arg("chrome-extension://jmkmndekioilbnieplhemjcgccpmpdbo/")
        .env("TABWRIGHT_BRIDGE_SOCKET", socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let (stdin, stdout) = (child.stdin.take(), child.stdout.take().unwrap());
    Bridge { child, stdin, stdout }
}

#[test]
fn the_bridge_numbers_each_client_routes_replies_to_it_alone_and_says_when_one_leaves() {
    let dir = temp_dir("bridge");
    let socket = dir.join("run").join("bridge.sock");
    let mut bridge = start_bridge(&socket);
    let first = connect(&socket);
    let second = connect(&socket);
    let (mut first_in, mut second_in) =
        (BufReader::new(first.try_clone().unwrap()), BufReader::new(second.try_clone().unwrap()));
    assert_eq!(std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777, 0o600, "only this user");
    assert_eq!(std::fs::metadata(socket.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);

    (&first).write_all(b"{\"v\":1,\"id\":7,\"request\":{\"type\":\"tabs\"}}\n").unwrap();
    let to_chrome = read_frame(&mut bridge.stdout);
    let one = to_chrome["client"].as_u64().unwrap();
    assert_eq!((to_chrome["id"].clone(), to_chrome["request"]["type"].clone()), (json!(7), json!("tabs")));
    (&second).write_all(b"{\"v\":1,\"id\":7,\"request\":{\"type\":\"observe\",\"tab_id\":3}}\n").unwrap();
    let to_chrome = read_frame(&mut bridge.stdout);
    let two = to_chrome["client"].as_u64().unwrap();
    assert_ne!(one, two, "each connection its own number");
    assert_eq!(to_chrome["request"]["tab_id"], 3);

    // A reply goes to its client only.
    let stdin = bridge.stdin.as_mut().unwrap();
    stdin.write_all(&frame(&json!({"v": 1, "client": two, "id": 7, "reply": {"type": "done"}}))).unwrap();
    stdin.write_all(&frame(&json!({"v": 1, "client": one, "id": 7, "reply": {"type": "tabs", "tabs": []}}))).unwrap();
    stdin.flush().unwrap();
    assert_eq!(read_line(&mut second_in)["reply"]["type"], "done");
    assert_eq!(read_line(&mut first_in)["reply"]["type"], "tabs");

    // What cannot be read is refused here and never reaches Chrome.
    (&first).write_all(b"{\"v\":1,\"id\":9,\"request\":{\"type\":\"format_disk\"}}\n").unwrap();
    let refused = read_line(&mut first_in);
    assert_eq!((refused["id"].clone(), refused["reply"]["why"].clone()), (json!(9), json!("bad_request")));
    assert!(refused["reply"]["message"].as_str().unwrap().contains("format_disk"));

    // A client that leaves: Chrome hears it (and nothing of the refused line came before).
    drop(first_in);
    first.shutdown(std::net::Shutdown::Both).unwrap();
    drop(first);
    let gone = read_frame(&mut bridge.stdout);
    assert_eq!((gone["client"].as_u64(), gone["request"]["type"].clone()), (Some(one), json!("gone")));

    // Chrome closes its pipe: the bridge ends, and the clients left see the end.
    drop(bridge.stdin.take());
    let mut rest = String::new();
    assert_eq!(second_in.read_line(&mut rest).unwrap(), 0, "the connection ends: {rest}");
    let status = bridge.child.wait().unwrap();
    assert!(status.success());
    let _ = std::fs::remove_dir_all(dir);
}

/// A client over JSON-RPC on the server's stdin and stdout.
struct McpClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl McpClient {
    fn start(socket: &Path) -> McpClient {
        let mut child = Command::new(BINARY)
            .env("TABWRIGHT_BRIDGE_SOCKET", socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), BufReader::new(child.stdout.take().unwrap()));
        let mut client = McpClient { child, stdin, stdout, next: 1 };
        let init = client.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test-agent", "version": "1", "title": "Test Agent"}}),
            |_| {},
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "tabwright");
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Calls `method`; each notification that comes before the reply goes to `noted`.
    fn call(&mut self, method: &str, params: Value, mut noted: impl FnMut(Value)) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server ended");
            let message: Value = tabwright::json::from_text(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
            noted(message);
        }
    }

    fn tool(&mut self, name: &str, arguments: Value) -> Value {
        self.call("tools/call", json!({"name": name, "arguments": arguments}), |_| {})
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Plays the worker behind a bridge: answers each request with what `answer` makes of it,
/// and keeps the requests it saw.
fn fake_bridge(
    socket: &Path,
    answer: impl Fn(&Value) -> Vec<Value> + Send + 'static,
) -> std::sync::mpsc::Receiver<Value> {
    let listener = UnixListener::bind(socket).unwrap();
    let (seen, heard) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let mut write = stream.try_clone().unwrap();
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                let request: Value = tabwright::json::from_text(&line).unwrap();
                for reply in answer(&request) {
                    let message = json!({"v": 1, "client": 1, "id": request["id"], "reply": reply});
                    writeln!(write, "{message}").unwrap();
                }
                let _ = seen.send(request);
            }
        }
    });
    heard
}

#[test]
fn the_server_lists_the_tools_passes_calls_on_and_says_clearly_what_is_wrong() {
    let dir = temp_dir("server");
    let socket = dir.join("bridge.sock");
    let mut client = McpClient::start(&socket);
    // No bridge yet: said with what to do, and the server goes on.
    let unreachable = client.tool("tabs", json!({}));
    assert_eq!(unreachable["result"]["isError"], true);
    let text = unreachable["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("not reachable") && text.contains("install-mcp"), "{text}");

    let polls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counted = polls.clone();
    let heard = fake_bridge(&socket, move |request| {
        let reply = match request["request"]["type"].as_str().unwrap() {
            "hello" => json!({"type": "welcome", "allowed": true}),
            "observe" => json!({"type": "observed", "tab_id": 4, "url": "https://example.com/", "title": "Example",
                "state": "<browser_state>\n[5]<button>Sign in\n</browser_state>", "actions": ["click", "done"]}),
            "act" => {
                json!({"type": "refused", "why": "stale", "message": "Index 99 is not on the page the last observe showed: call observe again."})
            }
            "run_task" => json!({"type": "task_accepted", "task_id": "task-1", "queued": false}),
            "task_status" => {
                let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let step = |s: u32| json!({"step": s, "url": "https://example.com/", "goal": format!("goal {s}"), "actions": ["Clicked → ok"], "error": null});
                if n == 0 {
                    json!({"type": "task", "task_id": "task-1", "task": "t", "status": "running", "step": 1, "max_steps": 10,
                        "steps": [step(1)], "next": 3, "end": null, "cost_usd": null, "waiting_for_person": null})
                } else {
                    json!({"type": "task", "task_id": "task-1", "task": "t", "status": "succeeded", "step": 2, "max_steps": 10,
                        "steps": [step(2)], "next": 6, "end": {"kind": "done", "text": "Signed in.", "success": true}, "cost_usd": 0.01, "waiting_for_person": null})
                }
            }
            _ => json!({"type": "done"}),
        };
        vec![reply]
    });

    let listed = client.call("tools/list", json!({}), |_| {});
    let tools = listed["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["run_task", "task_status", "stop_task", "tabs", "observe", "act", "screenshot", "extract"]);
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    assert!(tools[5]["inputSchema"].to_string().contains("\"click\""));

    let seen = client.tool("observe", json!({"tab_id": 4}));
    let text = seen["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("[5]<button>Sign in") && text.contains("click, done"), "{text}");
    let hello = heard.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(hello["request"], json!({"type": "hello", "name": "test-agent", "version": "1", "title": "Test Agent"}));
    assert_eq!(heard.recv_timeout(Duration::from_secs(5)).unwrap()["request"]["tab_id"], 4);

    let stale = client.tool("act", json!({"action": {"click": {"index": 99}}}));
    assert_eq!(stale["result"]["isError"], true);
    assert!(stale["result"]["content"][0]["text"].as_str().unwrap().contains("observe again"));

    let unknown = client.tool("format_disk", json!({}));
    assert_eq!(unknown["error"]["code"], -32602);
    assert!(unknown["error"]["message"].as_str().unwrap().contains("run_task, task_status"));
    let wrong = client.tool("observe", json!({"tab_id": "front"}));
    assert_eq!(wrong["error"]["code"], -32602);
    assert!(wrong["error"]["message"].as_str().unwrap().contains("tab_id"), "{wrong}");

    let mut progress = Vec::new();
    let done = client.call(
        "tools/call",
        json!({"name": "run_task", "arguments": {"task": "Sign in"}, "_meta": {"progressToken": "p1"}}),
        |note| progress.push(note),
    );
    assert_eq!(done["result"]["structuredContent"]["success"], true, "{done}");
    assert_eq!(done["result"]["structuredContent"]["history_id"], "task-1");
    assert!(done["result"]["content"][0]["text"].as_str().unwrap().starts_with("Signed in."));
    let steps: Vec<&Value> = progress.iter().filter(|n| n["method"] == "notifications/progress").collect();
    assert_eq!(steps.len(), 2, "a notification a step: {progress:?}");
    assert_eq!(
        (steps[0]["params"]["progress"].clone(), steps[1]["params"]["progress"].clone()),
        (json!(1.0), json!(2.0))
    );
    assert!(steps[1]["params"]["message"].as_str().unwrap().starts_with("Step 2: goal 2"));
    let _ = std::fs::remove_dir_all(dir);
}

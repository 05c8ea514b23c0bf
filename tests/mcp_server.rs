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

/// The binary with `args`, meeting others at `socket`, its stdin and stdout piped to the test.
fn spawn(args: &[&str], socket: &Path) -> Child {
    Command::new(BINARY)
        .args(args)
        .env("TABWRIGHT_BRIDGE_SOCKET", socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn start_bridge(socket: &Path) -> Bridge {
    let mut child = spawn(&["chrome-extension://jmkmndekioilbnieplhemjcgccpmpdbo/"], socket);
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

#[test]
fn a_stale_socket_is_taken_over_and_a_live_bridge_is_waited_for() {
    let dir = temp_dir("takeover");
    let socket = dir.join("bridge.sock");
    // A socket file nobody answers on, as a killed bridge leaves it.
    drop(UnixListener::bind(&socket).unwrap());
    assert!(socket.exists());
    let mut first = start_bridge(&socket);
    let ask = |stream: &UnixStream, id: u32| {
        writeln!(&*stream, "{}", json!({"v": 1, "id": id, "request": {"type": "tabs"}})).unwrap();
    };
    let one = connect(&socket);
    ask(&one, 1);
    assert_eq!(read_frame(&mut first.stdout)["id"], 1, "the first bridge took the stale socket over");

    // A second browser's bridge waits while the first answers.
    let mut second = start_bridge(&socket);
    std::thread::sleep(Duration::from_millis(500));
    let two = connect(&socket);
    ask(&two, 2);
    let still_first = read_frame(&mut first.stdout);
    assert_eq!(
        still_first["id"], 2,
        "the first bridge still answers, and the second's looks at it are no clients: {still_first}"
    );
    assert!(still_first["client"].as_u64() > Some(1));

    // The first ends: the second takes the socket within its 2 s.
    drop(first.stdin.take());
    assert!(first.child.wait().unwrap().success());
    let three = connect(&socket);
    ask(&three, 3);
    let now_second = read_frame(&mut second.stdout);
    assert_eq!(
        (now_second["id"].clone(), now_second["client"].clone()),
        (json!(3), json!(1)),
        "the second's own first"
    );
    drop(second.stdin.take());
    assert!(second.child.wait().unwrap().success());
    assert!(!socket.exists(), "the socket goes with its bridge");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_in_the_sockets_way_stops_the_bridge_with_what_to_do() {
    let dir = temp_dir("in-the-way");
    let socket = dir.join("bridge.sock");
    std::fs::write(&socket, "notes").unwrap();
    let out = Command::new(BINARY)
        .arg("chrome-extension://jmkmndekioilbnieplhemjcgccpmpdbo/")
        .env("TABWRIGHT_BRIDGE_SOCKET", &socket)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing for Chrome but messages");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no socket") && said.contains("TABWRIGHT_BRIDGE_SOCKET"), "{said}");
    assert_eq!(std::fs::read_to_string(&socket).unwrap(), "notes", "the file is left as it was");
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
        let mut child = spawn(&[], socket);
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

/// Plays the worker behind a bridge: answers each request with the replies `answer` makes of
/// it, or closes the connection when it makes none (`None`), and keeps the requests it saw.
fn fake_bridge(
    socket: &Path,
    answer: impl Fn(&Value) -> Option<Vec<Value>> + Send + 'static,
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
                let replies = answer(&request);
                let _ = seen.send(request.clone());
                let Some(replies) = replies else {
                    let _ = write.shutdown(std::net::Shutdown::Both);
                    break;
                };
                for reply in replies {
                    let message = json!({"v": 1, "client": 1, "id": request["id"], "reply": reply});
                    writeln!(write, "{message}").unwrap();
                }
            }
        }
    });
    heard
}

/// The kinds of the next `count` requests the fake bridge heard.
fn kinds(heard: &std::sync::mpsc::Receiver<Value>, count: usize) -> Vec<String> {
    (0..count)
        .map(|_| {
            let request = heard.recv_timeout(Duration::from_secs(10)).expect("a request reached the bridge");
            request["request"]["type"].as_str().unwrap_or_default().to_string()
        })
        .collect()
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
            "screenshot" => {
                json!({"type": "screenshot", "tab_id": 4, "png_base64": "iVBORw0KGgo=", "width": 800, "height": 600})
            }
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
        Some(vec![reply])
    });

    let listed = client.call("tools/list", json!({}), |_| {});
    let tools = listed["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["run_task", "task_status", "stop_task", "tabs", "observe", "act", "screenshot", "extract"]);
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    assert!(tools[5]["inputSchema"].to_string().contains("\"click\""));
    assert_eq!(tools[4]["annotations"]["readOnlyHint"], true, "observe only looks");
    assert_eq!(tools[5]["annotations"]["destructiveHint"], true, "act may not be undone");
    assert_eq!(tools[0]["annotations"]["destructiveHint"], true, "nor run_task");
    assert!(tools.iter().all(|t| t["annotations"]["openWorldHint"] == true));
    assert_eq!(tools[0]["outputSchema"]["properties"]["history_id"]["type"], "string", "{}", tools[0]);

    let seen = client.tool("observe", json!({"tab_id": 4}));
    let text = seen["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("[5]<button>Sign in") && text.contains("click, done"), "{text}");
    let hello = heard.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(hello["request"], json!({"type": "hello", "name": "test-agent", "version": "1", "title": "Test Agent"}));
    assert_eq!(heard.recv_timeout(Duration::from_secs(5)).unwrap()["request"]["tab_id"], 4);

    let shot = client.tool("screenshot", json!({}));
    let image = &shot["result"]["content"][0];
    assert_eq!((image["type"].clone(), image["mimeType"].clone()), (json!("image"), json!("image/png")), "{shot}");
    assert_eq!(image["data"], "iVBORw0KGgo=");
    assert!(shot["result"]["content"][1]["text"].as_str().unwrap().contains("800×600"));
    assert_eq!(heard.recv_timeout(Duration::from_secs(5)).unwrap()["request"]["type"], "screenshot");

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
    assert_eq!(steps[1]["params"]["message"], "Step 2: goal 2 — Clicked → ok");
    assert_eq!(
        (steps[1]["params"]["total"].clone(), steps[1]["params"]["progressToken"].clone()),
        (json!(10.0), json!("p1"))
    );
    let asked: Vec<Value> =
        (0..4).map(|_| heard.recv_timeout(Duration::from_secs(5)).unwrap()["request"].clone()).collect();
    assert_eq!(asked[0]["type"], "act");
    assert_eq!(
        asked[1],
        json!({"type": "run_task", "task": "Sign in", "url": null, "new_tab": false, "tab_id": null, "output_schema": null})
    );
    assert_eq!(
        (asked[2]["since"].clone(), asked[3]["since"].clone()),
        (json!(0), json!(3)),
        "each poll from the last `next`"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_call_whose_browser_goes_away_fails_and_the_next_reconnects_saying_hello_first() {
    let dir = temp_dir("lost");
    let socket = dir.join("bridge.sock");
    // The bridge ends (the browser quit) when asked to look at tab 13.
    let heard = fake_bridge(&socket, |request| match request["request"]["type"].as_str().unwrap() {
        "hello" => Some(vec![json!({"type": "welcome", "allowed": true})]),
        "observe" if request["request"]["tab_id"] == 13 => None,
        _ => Some(vec![json!({"type": "tabs", "tabs": []})]),
    });
    let mut client = McpClient::start(&socket);
    let lost = client.tool("observe", json!({"tab_id": 13}));
    assert_eq!(lost["result"]["isError"], true, "{lost}");
    let text = lost["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("browser went away"), "{text}");

    let tabs = client.tool("tabs", json!({}));
    assert_ne!(tabs["result"]["isError"], true, "{tabs}");
    assert_eq!(kinds(&heard, 4), ["hello", "observe", "hello", "tabs"], "who the client is, first on each connection");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_cancelled_run_task_stops_its_task() {
    let dir = temp_dir("cancel");
    let socket = dir.join("bridge.sock");
    let heard = fake_bridge(&socket, |request| {
        let reply = match request["request"]["type"].as_str().unwrap() {
            "hello" => json!({"type": "welcome", "allowed": true}),
            "run_task" => json!({"type": "task_accepted", "task_id": "task-7", "queued": true}),
            "task_status" => json!({"type": "task", "task_id": "task-7", "task": "t", "status": "running", "step": 0,
                "max_steps": null, "steps": [], "next": 0, "end": null, "cost_usd": null, "waiting_for_person": null}),
            _ => json!({"type": "done"}),
        };
        Some(vec![reply])
    });
    let mut client = McpClient::start(&socket);
    let id = client.next;
    client.next += 1;
    client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "run_task", "arguments": {"task": "Wait"}}}));
    assert_eq!(kinds(&heard, 3), ["hello", "run_task", "task_status"]);
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "the person changed their mind"}}));
    let stop = (0..20)
        .map(|_| heard.recv_timeout(Duration::from_secs(5)).expect("the bridge heard more"))
        .find(|request| request["request"]["type"] != "task_status")
        .expect("a request other than polls");
    assert_eq!(stop["request"], json!({"type": "stop_task", "task_id": "task-7"}));
    let _ = std::fs::remove_dir_all(dir);
}

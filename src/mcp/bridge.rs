//! The bridge: what Chrome starts when the extension connects its native port. It joins the
//! clients' servers to the extension: each server connects to a Unix socket only this user can
//! open (`super::socket_path`), and the bridge passes its messages on to Chrome numbered by
//! connection, and Chrome's replies back to the connection they name.
//!
//! A message a client sends that cannot be read is answered here and never reaches Chrome; a
//! closed connection is told to the worker (`gone`), which ends that client's own acts; the
//! end of Chrome's pipe (the browser quit, the extension reloaded, its switch turned off) ends
//! the bridge and every connection with it, so the clients' servers know at once.

use super::native::{encode, read_frame};
use crate::bridge::{ClientMessage, ClientReply, GoneInput, RefusedBecause, WorkerMessage, BRIDGE_VERSION};
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

/// How long a bridge waits before trying again for a socket another browser's bridge holds.
const SOCKET_RETRY_MS: u64 = 2_000;

type Clients = Arc<Mutex<HashMap<u32, mpsc::UnboundedSender<String>>>>;

/// Runs the bridge until Chrome closes its pipe. Errors say what stood in the way.
pub async fn run(socket: &Path) -> Result<(), String> {
    let listener = listen(socket).await?;
    // Everything for Chrome goes through one writer, a frame at a time.
    let (to_chrome, mut for_chrome) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(frame) = for_chrome.recv().await {
            if stdout.write_all(&frame).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let clients: Clients = Arc::default();
    let accepting = {
        let (clients, to_chrome) = (clients.clone(), to_chrome.clone());
        tokio::spawn(async move {
            let mut next = 0u32;
            while let Ok((stream, _)) = listener.accept().await {
                next += 1;
                tokio::spawn(serve_client(next, stream, clients.clone(), to_chrome.clone()));
            }
        })
    };
    // Chrome's messages, to the client each names.
    let mut stdin = tokio::io::stdin();
    let ended = loop {
        match read_frame(&mut stdin).await {
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.to_string()),
            Ok(Some(bytes)) => {
                let text = String::from_utf8_lossy(&bytes);
                match WorkerMessage::from_json_text(&text) {
                    Ok(message) => {
                        let line = serde_json::to_string(&message).unwrap_or_default();
                        if let Some(client) = clients.lock().unwrap_or_else(|p| p.into_inner()).get(&message.client) {
                            let _ = client.send(line);
                        }
                    }
                    Err(e) => eprintln!("tabwright bridge: a message from the extension could not be read: {e}"),
                }
            }
        }
    };
    accepting.abort();
    // Every connection ends with the pipe.
    clients.lock().unwrap_or_else(|p| p.into_inner()).clear();
    drop(to_chrome);
    let _ = std::fs::remove_file(socket);
    writer.abort();
    ended
}

/// Listens on `socket`, in a folder only this user may enter; a socket file left by a bridge
/// that is gone is taken over, one a live bridge answers on is waited for.
async fn listen(socket: &Path) -> Result<UnixListener, String> {
    if let Some(folder) = socket.parent() {
        std::fs::create_dir_all(folder).map_err(|e| format!("cannot make {}: {e}", folder.display()))?;
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot keep {} to this user: {e}", folder.display()))?;
    }
    loop {
        if socket.exists() {
            if UnixStream::connect(socket).await.is_ok() {
                eprintln!(
                    "tabwright bridge: another browser's bridge answers at {}; waiting for it to end",
                    socket.display()
                );
                tokio::time::sleep(std::time::Duration::from_millis(SOCKET_RETRY_MS)).await;
                continue;
            }
            let _ = std::fs::remove_file(socket);
        }
        let listener = UnixListener::bind(socket).map_err(|e| format!("cannot listen at {}: {e}", socket.display()))?;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| format!("cannot keep {} to this user: {e}", socket.display()))?;
        return Ok(listener);
    }
}

/// One client's connection: its lines to Chrome, numbered; Chrome's replies to it.
async fn serve_client(number: u32, stream: UnixStream, clients: Clients, to_chrome: mpsc::UnboundedSender<Vec<u8>>) {
    let (read, mut write) = stream.into_split();
    let (replies, mut to_client) = mpsc::unbounded_channel::<String>();
    clients.lock().unwrap_or_else(|p| p.into_inner()).insert(number, replies.clone());
    let writing = tokio::spawn(async move {
        while let Some(mut line) = to_client.recv().await {
            line.push('\n');
            if write.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
        let _ = write.shutdown().await;
    });
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        match ClientMessage::from_json_text(&line) {
            Ok(mut message) => {
                message.client = number;
                let frame = serde_json::to_vec(&message)
                    .map_err(|e| e.to_string())
                    .and_then(|json| encode(&json).map_err(|e| e.to_string()));
                match frame {
                    Ok(frame) => {
                        let _ = to_chrome.send(frame);
                    }
                    Err(e) => {
                        let _ = replies.send(refusal(
                            number,
                            message.id,
                            format!("The request could not be passed on: {e}"),
                        ));
                    }
                }
            }
            Err(e) => {
                let id = crate::json::from_text::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(serde_json::Value::as_u64))
                    .unwrap_or(0);
                let _ = replies.send(refusal(number, id, format!("The bridge could not read this request: {e}")));
            }
        }
    }
    // Closed: the worker hears it; its replies have nowhere to go.
    clients.lock().unwrap_or_else(|p| p.into_inner()).remove(&number);
    drop(replies);
    let gone = ClientMessage {
        v: BRIDGE_VERSION,
        client: number,
        id: 0,
        request: crate::bridge::ClientRequest::Gone(GoneInput {}),
    };
    if let Ok(frame) =
        serde_json::to_vec(&gone).map_err(|e| e.to_string()).and_then(|j| encode(&j).map_err(|e| e.to_string()))
    {
        let _ = to_chrome.send(frame);
    }
    let _ = writing.await;
}

fn refusal(client: u32, id: u64, message: String) -> String {
    let reply = WorkerMessage {
        v: BRIDGE_VERSION,
        client,
        id,
        reply: ClientReply::refused(RefusedBecause::BadRequest, message),
    };
    serde_json::to_string(&reply).unwrap_or_default()
}

//! The bridge: what Chrome starts when the extension connects its native port. It joins the
//! clients' servers to the extension: each server connects to a Unix socket only this user can
//! open (`super::socket_place`), and the bridge passes its messages on to Chrome numbered by
//! connection, and Chrome's replies back to the connection they name.
//!
//! A message a client sends that cannot be read is answered here and never reaches Chrome; a
//! closed connection is told to the worker (`gone`), which ends that client's own acts; the
//! end of Chrome's pipe (the browser quit, the extension reloaded, its switch turned off) ends
//! the bridge and every connection with it, so the clients' servers know at once.
//!
//! One socket, one browser: when a second browser with Tabwright starts its bridge while the
//! first one's still answers on the socket, the second waits and tries again every 2 s
//! ([`SOCKET_RETRY`]), and takes the socket over once the first has ended. A socket file
//! nobody answers on (a bridge that was killed) is removed and bound again at once.

use super::native::{encode, read_frame, FrameError};
use super::SocketPlace;
use crate::bridge::{
    ClientMessage, ClientReply, ClientRequest, GoneInput, RefusedBecause, WorkerMessage, BRIDGE_VERSION,
};
use std::collections::HashMap;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

/// How long a bridge waits before trying again for a socket another browser's bridge holds.
pub const SOCKET_RETRY: Duration = Duration::from_secs(2);

/// What keeps the bridge from running.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error("cannot make the folder {path} for the bridge's socket: {reason}. Make it yourself, only you may open it (chmod 700), or set TABWRIGHT_BRIDGE_SOCKET to a path in another folder")]
    Folder { path: PathBuf, reason: String },
    #[error("{path} is in the way of the bridge's socket and is no socket: move it away, or set TABWRIGHT_BRIDGE_SOCKET to another path")]
    NotASocket { path: PathBuf },
    #[error("cannot listen at {path}: {reason}. Check that the folder is yours, or set TABWRIGHT_BRIDGE_SOCKET to another path")]
    Listen { path: PathBuf, reason: String },
    #[error(
        "the messages from Chrome could not be read: {0}. Reload the Tabwright extension to start the bridge again"
    )]
    Chrome(FrameError),
}

/// The open connections, by number: where each one's lines go.
type Clients = Arc<Mutex<HashMap<u32, mpsc::UnboundedSender<String>>>>;

/// Runs the bridge until Chrome closes its pipe (then `Ok`). Errors say what stood in the way.
pub async fn run(socket: &SocketPlace) -> Result<(), BridgeError> {
    let (listener, bound) = listen(socket).await?;
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
            Err(e) => break Err(BridgeError::Chrome(e)),
            Ok(Some(bytes)) => route_to_client(&String::from_utf8_lossy(&bytes), &clients),
        }
    };
    // The socket goes first, so that another browser's bridge may take the place at once; it is
    // removed only while it is still this bridge's own.
    if std::fs::metadata(&socket.path).is_ok_and(|now| (now.dev(), now.ino()) == bound) {
        let _ = std::fs::remove_file(&socket.path);
    }
    accepting.abort();
    // Every connection ends with the pipe: its writer ends when its sender is dropped.
    clients.lock().unwrap_or_else(|p| p.into_inner()).clear();
    drop(to_chrome);
    writer.abort();
    ended
}

/// One message from Chrome, to the connection it names (dropped when that one is gone). A
/// message that cannot be read still goes to its client when it names one, whose server then
/// fails that request with the reason instead of waiting for it.
fn route_to_client(text: &str, clients: &Clients) {
    let (client, line) = match WorkerMessage::from_json_text(text) {
        Ok(message) => (message.client, serde_json::to_string(&message).unwrap_or_default()),
        Err(e) => {
            let named = crate::json::from_text::<serde_json::Value>(text).ok().and_then(|value| {
                let client = value.get("client").and_then(serde_json::Value::as_u64)?;
                Some((u32::try_from(client).ok()?, value.to_string()))
            });
            let Some(named) = named else {
                eprintln!("tabwright bridge: a message from the extension could not be read, and names no client: {e}");
                return;
            };
            eprintln!("tabwright bridge: a message from the extension could not be read: {e}");
            named
        }
    };
    if let Some(connection) = clients.lock().unwrap_or_else(|p| p.into_inner()).get(&client) {
        let _ = connection.send(line);
    }
}

/// Listens at the socket, in a folder only this user may enter; a socket file left by a bridge
/// that is gone is taken over, one a live bridge answers on is waited for. Gives the listener
/// and the socket file's identity (device, inode), to remove it at the end only if it is still
/// this one.
async fn listen(socket: &SocketPlace) -> Result<(UnixListener, (u64, u64)), BridgeError> {
    let path = &socket.path;
    if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
        private_folder(folder, socket.folder_is_ours)?;
    }
    let mut said_waiting = false;
    loop {
        if let Ok(found) = std::fs::symlink_metadata(path) {
            if !found.file_type().is_socket() {
                return Err(BridgeError::NotASocket { path: path.clone() });
            }
            if UnixStream::connect(path).await.is_ok() {
                if !said_waiting {
                    eprintln!(
                        "tabwright bridge: another browser's bridge answers at {}; trying again every {} s until it ends",
                        path.display(),
                        SOCKET_RETRY.as_secs()
                    );
                    said_waiting = true;
                }
                tokio::time::sleep(SOCKET_RETRY).await;
                continue;
            }
            // Nobody answers: a bridge that ended without removing it.
            let _ = std::fs::remove_file(path);
        }
        let listener = match UnixListener::bind(path) {
            Ok(listener) => listener,
            // Another bridge bound it between the look and the bind: wait for it as above.
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(BridgeError::Listen { path: path.clone(), reason: e.to_string() }),
        };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| BridgeError::Listen { path: path.clone(), reason: e.to_string() })?;
        let bound = std::fs::metadata(path)
            .map(|m| (m.dev(), m.ino()))
            .map_err(|e| BridgeError::Listen { path: path.clone(), reason: e.to_string() })?;
        return Ok((listener, bound));
    }
}

/// Makes `folder` (mode 0700) when it is missing; Tabwright's own folder is made private when
/// it exists too. A folder of the person's choosing that exists is left as it is.
fn private_folder(folder: &Path, folder_is_ours: bool) -> Result<(), BridgeError> {
    let failed = |e: std::io::Error| BridgeError::Folder { path: folder.to_path_buf(), reason: e.to_string() };
    match std::fs::metadata(folder) {
        Ok(found) if found.is_dir() => {
            if folder_is_ours && found.permissions().mode() & 0o077 != 0 {
                std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700)).map_err(failed)?;
            }
            Ok(())
        }
        Ok(_) => Err(BridgeError::Folder { path: folder.to_path_buf(), reason: "it is a file, not a folder".into() }),
        Err(_) => std::fs::DirBuilder::new().recursive(true).mode(0o700).create(folder).map_err(failed),
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
    // A connection that never passed anything on is none the worker knows (another bridge
    // looking whether this one answers, say): its end is not told.
    let mut known_to_worker = false;
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        match passed_on(number, &line) {
            Ok(frame) => {
                known_to_worker = true;
                let _ = to_chrome.send(frame);
            }
            Err(refusal) => {
                let _ = replies.send(refusal);
            }
        }
    }
    // Closed: the worker hears it; its replies have nowhere to go.
    clients.lock().unwrap_or_else(|p| p.into_inner()).remove(&number);
    drop(replies);
    let gone = ClientMessage { v: BRIDGE_VERSION, client: number, id: 0, request: ClientRequest::Gone(GoneInput {}) };
    if let Some(frame) = serde_json::to_vec(&gone).ok().and_then(|json| encode(&json).ok()).filter(|_| known_to_worker)
    {
        let _ = to_chrome.send(frame);
    }
    let _ = writing.await;
}

/// One line of client `number` as the frame for Chrome, numbered with the connection; or the
/// refusal (a reply line) that goes back to the client instead.
fn passed_on(number: u32, line: &str) -> Result<Vec<u8>, String> {
    let mut message = ClientMessage::from_json_text(line).map_err(|e| {
        let id = crate::json::from_text::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v.get("id").and_then(serde_json::Value::as_u64))
            .unwrap_or(0);
        refusal(number, id, format!("The bridge could not read this request: {e}"))
    })?;
    if matches!(message.request, ClientRequest::Gone(_)) {
        let why = "`gone` is the bridge's own word for a closed connection: close the connection instead.";
        return Err(refusal(number, message.id, why.into()));
    }
    message.client = number;
    serde_json::to_vec(&message)
        .map_err(|e| e.to_string())
        .and_then(|json| encode(&json).map_err(|e| e.to_string()))
        .map_err(|e| refusal(number, message.id, format!("The request could not be passed on to the browser: {e}")))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_message(line: &str) -> (u64, String) {
        let reply = WorkerMessage::from_json_text(line).unwrap();
        match reply.reply {
            ClientReply::Refused { why: RefusedBecause::BadRequest, message } => (reply.id, message),
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_request_is_numbered_with_its_connection_and_framed_for_chrome() {
        let frame = passed_on(4, r#"{"v":1,"client":9,"id":2,"request":{"type":"tabs"}}"#).unwrap();
        let length = u32::from_ne_bytes(frame[..4].try_into().unwrap()) as usize;
        assert_eq!(length, frame.len() - 4);
        let message = ClientMessage::from_json_text(std::str::from_utf8(&frame[4..]).unwrap()).unwrap();
        assert_eq!((message.client, message.id), (4, 2), "the connection's number, whatever the client said");
    }

    #[test]
    fn what_cannot_be_read_or_is_the_bridges_own_word_is_refused_here() {
        let (id, message) =
            refused_message(&passed_on(1, r#"{"v":1,"id":5,"request":{"type":"format_disk"}}"#).unwrap_err());
        assert_eq!(id, 5);
        assert!(message.contains("format_disk"), "{message}");
        let (id, message) = refused_message(&passed_on(1, "not json").unwrap_err());
        assert_eq!(id, 0);
        assert!(message.contains("could not read"), "{message}");
        let (_, message) = refused_message(&passed_on(1, r#"{"v":1,"id":6,"request":{"type":"gone"}}"#).unwrap_err());
        assert!(message.contains("close the connection"), "{message}");
        let big = format!(
            r#"{{"v":1,"id":7,"request":{{"type":"run_task","task":"{}"}}}}"#,
            "x".repeat(crate::bridge::HOST_MESSAGE_MAX)
        );
        let (id, message) = refused_message(&passed_on(1, &big).unwrap_err());
        assert_eq!(id, 7);
        assert!(message.contains("1 MB"), "{message}");
    }

    #[test]
    fn a_folder_of_the_persons_choosing_is_left_as_it_is_and_ours_is_made_private() {
        let root = std::env::temp_dir().join(format!("tabwright-bridge-folder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let made = root.join("a").join("b");
        private_folder(&made, false).unwrap();
        assert_eq!(std::fs::metadata(&made).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_folder(&made, false).unwrap();
        assert_eq!(std::fs::metadata(&made).unwrap().permissions().mode() & 0o777, 0o755, "not ours to change");
        private_folder(&made, true).unwrap();
        assert_eq!(std::fs::metadata(&made).unwrap().permissions().mode() & 0o777, 0o700);
        let file = root.join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(private_folder(&file, true).unwrap_err().to_string().contains("not a folder"));
        let _ = std::fs::remove_dir_all(&root);
    }
}

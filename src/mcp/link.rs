//! The server's connection to the bridge: made when first needed and again after it was lost,
//! each time saying who the client is first (`hello`); requests numbered, replies matched by
//! number, and every request waiting when the connection goes told so at once.

use crate::bridge::{ClientHello, ClientMessage, ClientReply, ClientRequest, WorkerMessage, BRIDGE_VERSION};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::UnixStream;
use tokio::sync::{oneshot, Mutex as AsyncMutex};

/// Why a request got no reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error(
        "Tabwright is not reachable: start Chrome or Chromium with the Tabwright extension installed and its coding \
         agents switch on (Options → Coding agents), and install the bridge with scripts/install-mcp. (No bridge \
         answers at {path}: {reason}.)"
    )]
    Unreachable { path: String, reason: String },
    #[error(
        "The browser went away while Tabwright worked on this (the browser closed, or the extension was reloaded or \
         switched off). Try again once it runs; a task may have gone on, see Tabwright's side panel."
    )]
    Lost,
    #[error("Tabwright did not answer within {0} s. Look at Tabwright's side panel: it may wait for the person.")]
    TimedOut(u64),
}

type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<ClientReply>>>>;

struct Connection {
    write: OwnedWriteHalf,
    waiting: Waiting,
    /// Set when the bridge's side closed.
    closed: Arc<std::sync::atomic::AtomicBool>,
}

/// The connection, as needed.
pub struct Link {
    socket: PathBuf,
    hello: Mutex<Option<ClientHello>>,
    connection: AsyncMutex<Option<Connection>>,
    next_id: AtomicU64,
}

impl Link {
    pub fn new(socket: PathBuf) -> Self {
        Link { socket, hello: Mutex::new(None), connection: AsyncMutex::new(None), next_id: AtomicU64::new(1) }
    }

    /// Who the client is: said first on every connection.
    pub fn set_hello(&self, hello: ClientHello) {
        *self.hello.lock().unwrap_or_else(|p| p.into_inner()) = Some(hello);
    }

    /// Connects now if not connected (and says hello); the hello's reply.
    pub async fn connect(&self) -> Result<Option<ClientReply>, LinkError> {
        let mut connection = self.connection.lock().await;
        if connection.as_ref().is_some_and(|c| !c.closed.load(Ordering::SeqCst)) {
            return Ok(None);
        }
        *connection = None;
        let stream = UnixStream::connect(&self.socket)
            .await
            .map_err(|e| LinkError::Unreachable { path: self.socket.display().to_string(), reason: e.to_string() })?;
        let (read, write) = stream.into_split();
        let waiting: Waiting = Arc::default();
        let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        {
            let (waiting, closed) = (waiting.clone(), closed.clone());
            tokio::spawn(async move {
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    match WorkerMessage::from_json_text(&line) {
                        Ok(message) => {
                            let sender = waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(&message.id);
                            if let Some(sender) = sender {
                                let _ = sender.send(message.reply);
                            }
                        }
                        // Whoever waits for it hears why at once, not at its time limit.
                        Err(e) => {
                            let id = crate::json::from_text::<serde_json::Value>(&line)
                                .ok()
                                .and_then(|v| v.get("id").and_then(serde_json::Value::as_u64));
                            let sender =
                                id.and_then(|id| waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(&id));
                            match sender {
                                Some(sender) => {
                                    let why = format!("The extension's reply could not be read: {e}");
                                    let _ =
                                        sender.send(ClientReply::refused(crate::bridge::RefusedBecause::Version, why));
                                }
                                None => eprintln!("tabwright-mcp: a reply could not be read: {e}"),
                            }
                        }
                    }
                }
                closed.store(true, Ordering::SeqCst);
                // Every request still waiting hears it at once (its sender is dropped).
                waiting.lock().unwrap_or_else(|p| p.into_inner()).clear();
            });
        }
        *connection = Some(Connection { write, waiting, closed });
        let hello = self.hello.lock().unwrap_or_else(|p| p.into_inner()).clone();
        drop(connection);
        match hello {
            Some(hello) => self.send(ClientRequest::Hello(hello), None).await.map(Some),
            None => Ok(None),
        }
    }

    /// Sends `request` (connecting first if needed) and waits for its reply, up to
    /// `timeout_s` when given.
    pub async fn ask(&self, request: ClientRequest, timeout_s: Option<u64>) -> Result<ClientReply, LinkError> {
        self.connect().await?;
        self.send(request, timeout_s).await
    }

    async fn send(&self, request: ClientRequest, timeout_s: Option<u64>) -> Result<ClientReply, LinkError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let message = ClientMessage { v: BRIDGE_VERSION, client: 0, id, request };
        let mut line = serde_json::to_string(&message).map_err(|_| LinkError::Lost)?;
        line.push('\n');
        let (sender, reply) = oneshot::channel();
        {
            let mut connection = self.connection.lock().await;
            let Some(open) = connection.as_mut() else { return Err(LinkError::Lost) };
            open.waiting.lock().unwrap_or_else(|p| p.into_inner()).insert(id, sender);
            if open.write.write_all(line.as_bytes()).await.is_err() {
                *connection = None;
                return Err(LinkError::Lost);
            }
        }
        let reply = async { reply.await.map_err(|_| LinkError::Lost) };
        match timeout_s {
            None => reply.await,
            Some(seconds) => tokio::time::timeout(std::time::Duration::from_secs(seconds), reply)
                .await
                .unwrap_or(Err(LinkError::TimedOut(seconds))),
        }
    }
}

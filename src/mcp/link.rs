//! The server's connection to the bridge: made when first needed and again after it was lost,
//! each time saying who the client is first (`hello`, written before any other request can be);
//! requests numbered, replies matched by number, and every request waiting when the connection
//! goes told so at once.

use crate::bridge::{
    ClientHello, ClientMessage, ClientReply, ClientRequest, RefusedBecause, WorkerMessage, BRIDGE_VERSION,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;
use tokio::sync::{oneshot, Mutex as AsyncMutex};

/// Why a request got no reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error(
        "Tabwright is not reachable: start Chrome or Chromium with the Tabwright extension installed and its MCP \
         server switched on (Options → Coding agents (MCP) → \"Let coding agents use Tabwright\"), and install the \
         bridge with scripts/install-mcp. (No bridge answers at {path}: {reason}.)"
    )]
    Unreachable { path: String, reason: String },
    #[error(
        "The browser went away while Tabwright worked on this (the browser closed, or the extension was reloaded or \
         switched off). Try again once it runs; a task may have gone on, see Tabwright's side panel."
    )]
    Lost,
    #[error("Tabwright did not answer within {0} s. Look at Tabwright's side panel: it may wait for the person.")]
    TimedOut(u64),
    #[error("The request could not be written for the bridge: {0}")]
    Unwritable(String),
}

/// The requests sent on one connection that wait for their replies, by id.
type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<ClientReply>>>>;

struct Connection {
    write: OwnedWriteHalf,
    waiting: Waiting,
    /// Set when the bridge's side closed.
    closed: Arc<AtomicBool>,
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

    /// Connects now if not connected, and says hello first when the client said who it is.
    /// The hello's reply is not waited for: the worker answers every later request of this
    /// connection after it, refusals included.
    pub async fn connect(&self) -> Result<(), LinkError> {
        let mut connection = self.connection.lock().await;
        if connection.as_ref().is_some_and(|c| !c.closed.load(Ordering::SeqCst)) {
            return Ok(());
        }
        *connection = None;
        let stream = UnixStream::connect(&self.socket)
            .await
            .map_err(|e| LinkError::Unreachable { path: self.socket.display().to_string(), reason: e.to_string() })?;
        let (read, write) = stream.into_split();
        let mut open = Connection { write, waiting: Waiting::default(), closed: Arc::new(AtomicBool::new(false)) };
        tokio::spawn(read_replies(read, open.waiting.clone(), open.closed.clone()));
        let hello = self.hello.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(hello) = hello {
            // Written while the connection is still held: nothing goes before it.
            self.write_request(&mut open, ClientRequest::Hello(hello)).await?;
        }
        *connection = Some(open);
        Ok(())
    }

    /// Sends `request` (connecting first if needed) and waits for its reply, up to `timeout`
    /// when given.
    pub async fn ask(&self, request: ClientRequest, timeout: Option<Duration>) -> Result<ClientReply, LinkError> {
        self.connect().await?;
        let reply = {
            let mut connection = self.connection.lock().await;
            let Some(open) = connection.as_mut() else { return Err(LinkError::Lost) };
            match self.write_request(open, request).await {
                Ok(reply) => reply,
                Err(e) => {
                    *connection = None;
                    return Err(e);
                }
            }
        };
        let reply = async { reply.await.map_err(|_| LinkError::Lost) };
        match timeout {
            None => reply.await,
            Some(limit) => {
                tokio::time::timeout(limit, reply).await.unwrap_or(Err(LinkError::TimedOut(limit.as_secs())))
            }
        }
    }

    /// Writes `request` with the next id on `open`; where its reply will come.
    async fn write_request(
        &self,
        open: &mut Connection,
        request: ClientRequest,
    ) -> Result<oneshot::Receiver<ClientReply>, LinkError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let message = ClientMessage { v: BRIDGE_VERSION, client: 0, id, request };
        let mut line = serde_json::to_string(&message).map_err(|e| LinkError::Unwritable(e.to_string()))?;
        line.push('\n');
        let (sender, reply) = oneshot::channel();
        open.waiting.lock().unwrap_or_else(|p| p.into_inner()).insert(id, sender);
        // The reader marks the connection closed before it lets go of those waiting: a request
        // put in after that sees the mark here, and none waits on a connection that is gone.
        if open.closed.load(Ordering::SeqCst) || open.write.write_all(line.as_bytes()).await.is_err() {
            open.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            return Err(LinkError::Lost);
        }
        Ok(reply)
    }
}

/// The bridge's lines, each to the request of its id, until the connection closes; then every
/// request still waiting hears it at once (its sender is dropped).
async fn read_replies(read: OwnedReadHalf, waiting: Waiting, closed: Arc<AtomicBool>) {
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let (id, reply) = match WorkerMessage::from_json_text(&line) {
            Ok(message) => (Some(message.id), message.reply),
            // Whoever waits for it hears why at once, not at its time limit.
            Err(e) => {
                let id = crate::json::from_text::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(serde_json::Value::as_u64));
                if id.is_none() {
                    eprintln!("tabwright-mcp: a reply could not be read: {e}");
                }
                (
                    id,
                    ClientReply::refused(
                        RefusedBecause::Version,
                        format!("The extension's reply could not be read: {e}"),
                    ),
                )
            }
        };
        let sender = id.and_then(|id| waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(&id));
        if let Some(sender) = sender {
            let _ = sender.send(reply);
        }
    }
    closed.store(true, Ordering::SeqCst);
    waiting.lock().unwrap_or_else(|p| p.into_inner()).clear();
}

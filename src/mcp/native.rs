//! Chrome's native-messaging framing: each message is its length as a 32-bit integer in the
//! machine's byte order, then that many bytes of UTF-8 JSON. Chrome takes at most 1 MB in one
//! message from a host (`bridge::HOST_MESSAGE_MAX`); a longer one would end the connection.

use crate::bridge::HOST_MESSAGE_MAX;
use tokio::io::{AsyncRead, AsyncReadExt};

/// What can go wrong with a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("a message of {0} bytes is more than the 1 MB Chrome takes from a native host")]
    TooLong(usize),
    #[error("the message ended after {got} of its {expected} bytes")]
    Truncated { got: usize, expected: usize },
    #[error("reading from Chrome failed: {0}")]
    Io(String),
}

/// `json` as one frame for Chrome.
pub fn encode(json: &[u8]) -> Result<Vec<u8>, FrameError> {
    if json.len() > HOST_MESSAGE_MAX {
        return Err(FrameError::TooLong(json.len()));
    }
    let mut frame = Vec::with_capacity(json.len() + 4);
    frame.extend_from_slice(&(json.len() as u32).to_ne_bytes());
    frame.extend_from_slice(json);
    Ok(frame)
}

/// The next frame's bytes; `None` at the end of the input, between frames. A frame from Chrome
/// may be longer than one to it (64 MiB), so no limit is put on what is read.
pub async fn read_frame(input: &mut (impl AsyncRead + Unpin)) -> Result<Option<Vec<u8>>, FrameError> {
    let mut length = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match input.read(&mut length[got..]).await.map_err(|e| FrameError::Io(e.to_string()))? {
            0 if got == 0 => return Ok(None),
            0 => return Err(FrameError::Truncated { got, expected: 4 }),
            n => got += n,
        }
    }
    let expected = u32::from_ne_bytes(length) as usize;
    let mut body = vec![0u8; expected];
    let mut got = 0;
    while got < expected {
        match input.read(&mut body[got..]).await.map_err(|e| FrameError::Io(e.to_string()))? {
            0 => return Err(FrameError::Truncated { got, expected }),
            n => got += n,
        }
    }
    Ok(Some(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8]) -> Vec<Result<Option<Vec<u8>>, FrameError>> {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let mut input = bytes;
            let mut out = Vec::new();
            loop {
                let next = read_frame(&mut input).await;
                let end = !matches!(next, Ok(Some(_)));
                out.push(next);
                if end {
                    return out;
                }
            }
        })
    }

    #[test]
    fn frames_go_and_come_back_whole() {
        let mut bytes = encode(br#"{"a":1}"#).unwrap();
        bytes.extend(encode(b"[]").unwrap());
        assert_eq!(&bytes[..4], &7u32.to_ne_bytes());
        let read = read_all(&bytes);
        assert_eq!(read, vec![Ok(Some(br#"{"a":1}"#.to_vec())), Ok(Some(b"[]".to_vec())), Ok(None)]);
    }

    #[test]
    fn a_frame_cut_short_is_said_and_one_too_long_is_refused() {
        let bytes = encode(b"{\"abc\":1}").unwrap();
        assert_eq!(read_all(&bytes[..6]).last().unwrap(), &Err(FrameError::Truncated { got: 2, expected: 9 }));
        assert_eq!(read_all(&bytes[..2]).last().unwrap(), &Err(FrameError::Truncated { got: 2, expected: 4 }));
        let big = vec![b' '; HOST_MESSAGE_MAX + 1];
        assert!(encode(&big).unwrap_err().to_string().contains("1 MB"));
    }
}

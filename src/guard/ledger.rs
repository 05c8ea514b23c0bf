//! What each site showed, so that what one site showed does not reach another without the
//! person's yes.
//!
//! The ledger keeps, per site, the runs of three words and the distinctive words (with a digit
//! and four characters or more: order numbers, codes, phone numbers) of every page text the task
//! read there and every extraction made there, as 32-bit hashes. Text the model types, or puts
//! in a URL it opens, on another site is cut the same way: a piece that a site showed, and that
//! neither the destination showed nor the person wrote (the task, their answers), has crossed.
//!
//! Bounded: at most [`MAX_SITES`] sites and [`MAX_PIECES`] pieces in all (192 KB); past that the
//! oldest pieces of the site read longest ago go first. Saved with the task (each site's pieces
//! as base64 of their bytes, about 256 KB at most), so a worker Chrome stopped and started again
//! still knows what each site showed.

use serde::Serialize;
use std::collections::{HashSet, VecDeque};

/// Sites remembered at most.
pub const MAX_SITES: usize = 16;
/// Pieces remembered in all, at most.
pub const MAX_PIECES: usize = 49_152;
/// Words in a run.
const RUN: usize = 3;

/// What one site showed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
struct SitePieces {
    site: String,
    /// Oldest first.
    #[serde(serialize_with = "packed::serialize")]
    pieces: VecDeque<u32>,
    #[serde(skip)]
    set: HashSet<u32>,
}

impl SitePieces {
    /// Whether the piece is new here.
    fn add(&mut self, piece: u32) -> bool {
        let new = self.set.insert(piece);
        if new {
            self.pieces.push_back(piece);
        }
        new
    }

    fn drop_oldest(&mut self) {
        if let Some(old) = self.pieces.pop_front() {
            self.set.remove(&old);
        }
    }
}

/// Pieces as base64 of their little-endian bytes: a third of their size as JSON numbers.
mod packed {
    use serde::Serializer;
    use std::collections::VecDeque;

    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    pub fn serialize<S: Serializer>(pieces: &VecDeque<u32>, s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = pieces.iter().flat_map(|p| p.to_le_bytes()).collect();
        let mut out = String::with_capacity(bytes.len() * 4 / 3 + 4);
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        s.serialize_str(&out)
    }

    /// The pieces `serialize` wrote; `None` for text it did not write.
    pub fn read(text: &str) -> Option<VecDeque<u32>> {
        let mut bytes = Vec::with_capacity(text.len() * 3 / 4);
        for chunk in text.as_bytes().chunks(4) {
            let mut n = 0u32;
            for (i, c) in chunk.iter().enumerate() {
                let value = ALPHABET.iter().position(|a| a == c)?;
                n |= (value as u32) << (18 - 6 * i);
            }
            for i in 0..chunk.len().saturating_sub(1) {
                bytes.push((n >> (16 - 8 * i)) as u8);
            }
        }
        Some(bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }
}

/// What each site showed the task. Serialized as the sites with their pieces, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Ledger {
    /// Read longest ago first.
    sites: Vec<SitePieces>,
    /// What the person wrote: the task and their answers. Never a crossing.
    #[serde(serialize_with = "packed_vec")]
    own: Vec<u32>,
    /// Pieces of all sites together.
    #[serde(skip)]
    total: usize,
    /// The pieces added since the ledger was last saved whole, by site, oldest first: saved
    /// after each step on their own, a small text where the whole ledger is up to 256 KB.
    #[serde(skip)]
    since_saved: Vec<(String, Vec<u32>)>,
}

/// The pieces one site showed since the last whole save, as saved.
#[derive(Serialize)]
struct Added<'a> {
    site: &'a str,
    #[serde(serialize_with = "packed_vec")]
    pieces: &'a [u32],
}

fn packed_vec<S: serde::Serializer>(pieces: &[u32], s: S) -> Result<S::Ok, S::Error> {
    packed::serialize(&pieces.iter().copied().collect(), s)
}

/// Text read on one site, on its way to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crossing {
    /// Where it was read.
    pub from_site: String,
    /// The start of the text, for the person.
    pub excerpt: String,
}

/// Lower-case words: letters and digits; each CJK character is a word of its own.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if is_cjk(c) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// FNV-1a, 32 bits: stable across builds and machines, for pieces saved and read again.
fn hash(parts: &[&str]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            h ^= 0x1f;
            h = h.wrapping_mul(0x0100_0193);
        }
        for b in part.bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h
}

/// A word distinctive alone: a code, a number, an id.
fn distinctive(word: &str) -> bool {
    word.chars().count() >= 4 && word.chars().any(|c| c.is_ascii_digit())
}

/// The pieces of a text: its runs of words and its distinctive words.
fn pieces(text: &str) -> Vec<u32> {
    let words = words(text);
    let mut out: Vec<u32> = words.iter().filter(|w| distinctive(w)).map(|w| hash(&[w.as_str()])).collect();
    for run in words.windows(RUN) {
        let parts: Vec<&str> = run.iter().map(String::as_str).collect();
        out.push(hash(&parts));
    }
    out
}

impl Ledger {
    /// Notes what `site` showed.
    pub fn note(&mut self, site: &str, text: &str) {
        if site.is_empty() || text.trim().is_empty() {
            return;
        }
        self.add_pieces(site, &pieces(text));
    }

    /// Adds pieces `site` showed (read from a text, or from what a saved task had noted).
    pub fn add_pieces(&mut self, site: &str, new: &[u32]) {
        let at = match self.sites.iter().position(|s| s.site == site) {
            Some(at) => {
                // Read again: now the most recent.
                let entry = self.sites.remove(at);
                self.sites.push(entry);
                self.sites.len() - 1
            }
            None => {
                if self.sites.len() >= MAX_SITES {
                    let gone = self.sites.remove(0);
                    self.total -= gone.pieces.len();
                }
                self.sites.push(SitePieces { site: site.to_string(), ..SitePieces::default() });
                self.sites.len() - 1
            }
        };
        let mut added = Vec::new();
        for &piece in new {
            if self.sites[at].add(piece) {
                added.push(piece);
            }
        }
        self.total += added.len();
        // Kept apart too until the next whole save (`since_saved`).
        if !added.is_empty() {
            match self.since_saved.last_mut() {
                Some((last, pieces)) if last == site => pieces.extend(added),
                _ => self.since_saved.push((site.to_string(), added)),
            }
        }
        // Over the bound: the oldest pieces of the site read longest ago go first.
        while self.total > MAX_PIECES {
            let Some(oldest) = self.sites.first_mut() else { break };
            if oldest.pieces.is_empty() {
                self.sites.remove(0);
                continue;
            }
            oldest.drop_oldest();
            self.total -= 1;
        }
    }

    /// Notes words the person wrote (the task, an answer): they may go anywhere.
    pub fn note_own(&mut self, text: &str) {
        for piece in pieces(text) {
            if !self.own.contains(&piece) {
                self.own.push(piece);
            }
        }
        let over = self.own.len().saturating_sub(MAX_PIECES);
        self.own.drain(..over);
    }

    /// Whether `text`, sent to `to_site`, carries something another site showed (other than
    /// the sites in `free_between`, between which the person lets data go: the sites they sent
    /// the task to).
    pub fn crossing(&self, text: &str, to_site: &str, free_between: &[String]) -> Option<Crossing> {
        let destination = self.sites.iter().find(|s| s.site == to_site);
        let to_free = free_between.iter().any(|s| s == to_site);
        for piece in pieces(text) {
            if self.own.contains(&piece) || destination.is_some_and(|d| d.set.contains(&piece)) {
                continue;
            }
            let from = self
                .sites
                .iter()
                .rev()
                .filter(|s| s.site != to_site && !(to_free && free_between.contains(&s.site)))
                .find(|s| s.set.contains(&piece));
            if let Some(from) = from {
                return Some(Crossing { from_site: from.site.clone(), excerpt: excerpt(text) });
            }
        }
        None
    }

    /// A ledger as `serde_json` wrote it (the saved task's), or `None` for anything else.
    pub fn from_value(value: &serde_json::Value) -> Option<Ledger> {
        let mut sites = Vec::new();
        for site in value["sites"].as_array()? {
            let pieces = packed::read(site["pieces"].as_str()?)?;
            sites.push(SitePieces { site: site["site"].as_str()?.to_string(), pieces, set: HashSet::new() });
        }
        let own = Vec::from(packed::read(value["own"].as_str()?)?);
        let keep = sites.len().saturating_sub(MAX_SITES);
        Some(Ledger { sites: sites.split_off(keep), own, total: 0, since_saved: Vec::new() }.restored())
    }

    /// After reading a saved ledger: the look-up sets again.
    fn restored(mut self) -> Self {
        for site in &mut self.sites {
            site.set = site.pieces.iter().copied().collect();
        }
        self.total = self.sites.iter().map(|s| s.pieces.len()).sum();
        self
    }

    /// The pieces added since the ledger was last saved whole, as JSON text (read back by
    /// `add_saved`).
    pub fn added_text(&self) -> String {
        let added: Vec<Added<'_>> = self.since_saved.iter().map(|(site, pieces)| Added { site, pieces }).collect();
        serde_json::to_string(&added).unwrap_or_default()
    }

    /// The ledger was saved whole: nothing is added since.
    pub fn saved_whole(&mut self) {
        self.since_saved.clear();
    }

    /// Adds what `added_text` wrote (a saved task's pieces since its last whole save).
    pub fn add_saved(&mut self, added: &serde_json::Value) {
        for entry in added.as_array().into_iter().flatten() {
            if let (Some(site), Some(pieces)) =
                (entry["site"].as_str(), entry["pieces"].as_str().and_then(packed::read))
            {
                self.add_pieces(site, &Vec::from(pieces));
            }
        }
    }

    /// The sites it remembers, read longest ago first.
    pub fn sites(&self) -> impl Iterator<Item = &str> {
        self.sites.iter().map(|s| s.site.as_str())
    }
}

/// The start of a text, for a question to the person.
fn excerpt(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = text.chars().take(40).collect();
    if out.len() < text.len() {
        out.push_str(" …");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_read_on_one_site_is_caught_on_its_way_to_another() {
        let mut ledger = Ledger::default();
        ledger.note_own("Find my last order number and post it on forum.example");
        ledger.note(
            "mail.example",
            "Your order ACME-4471 has shipped to 12 Elm Street, Springfield. Questions? Reply here.",
        );
        ledger.note("forum.example", "Post a reply. Be kind. Please enter your message below.");
        // A code alone, or a run of three words, crosses.
        let c = ledger.crossing("My number is ACME-4471", "forum.example", &[]).unwrap();
        assert_eq!(c.from_site, "mail.example");
        assert_eq!(c.excerpt, "My number is ACME-4471");
        assert!(ledger.crossing("ship to 12 elm street please", "forum.example", &[]).is_some());
        assert!(ledger.crossing("/c?d=acme 4471", "evil.example", &[]).is_some());
        // The same text on its own site, the person's own words, and ordinary words do not.
        assert_eq!(ledger.crossing("ACME-4471", "mail.example", &[]), None);
        assert_eq!(ledger.crossing("my last order number", "forum.example", &[]), None);
        assert_eq!(ledger.crossing("Thanks for the help!", "forum.example", &[]), None);
        // Words the destination showed too are not the other site's to keep.
        assert_eq!(ledger.crossing("please enter your", "forum.example", &[]), None);
        // Between two sites the person sent the task to, data goes freely.
        let both = ["mail.example".to_string(), "forum.example".to_string()];
        assert_eq!(ledger.crossing("ACME-4471", "forum.example", &both), None);
        assert!(ledger.crossing("ACME-4471", "evil.example", &both).is_some());
    }

    #[test]
    fn chinese_runs_cross_too() {
        let mut ledger = Ledger::default();
        ledger.note("bank.example", "您的账户余额为人民币八万元，卡号尾号3391");
        assert!(ledger.crossing("余额为人民币", "forum.example", &[]).is_some());
        assert!(ledger.crossing("尾号3391", "forum.example", &[]).is_some());
        assert_eq!(ledger.crossing("你好，谢谢", "forum.example", &[]), None);
    }

    #[test]
    fn bounded_and_saved() {
        let mut ledger = Ledger::default();
        for i in 0..MAX_SITES + 3 {
            ledger.note(&format!("s{i}.example"), &format!("code X{i}-0000{i}"));
        }
        assert_eq!(ledger.sites().count(), MAX_SITES);
        assert_eq!(ledger.sites().next(), Some("s3.example"));
        let long: String = (0..MAX_PIECES * 2).map(|i| format!("w{i} ")).collect();
        ledger.note("big.example", &long);
        let total: usize = ledger.sites.iter().map(|s| s.pieces.len()).sum();
        assert_eq!(total, MAX_PIECES);
        assert_eq!(ledger.total, MAX_PIECES);
        // The sites read before gave way first.
        assert!(ledger.sites().count() < MAX_SITES);
        // The newest pieces are kept.
        let last = format!("w{} w{} w{}", MAX_PIECES * 2 - 3, MAX_PIECES * 2 - 2, MAX_PIECES * 2 - 1);
        assert!(ledger.crossing(&last, "other.example", &[]).is_some());
        ledger.saved_whole();
        let text = serde_json::to_string(&ledger).unwrap();
        assert!(text.len() < MAX_PIECES * 6, "{} bytes saved", text.len());
        let read = Ledger::from_value(&crate::json::from_text(&text).unwrap()).unwrap();
        assert_eq!(read, ledger);
        assert!(read.crossing(&last, "other.example", &[]).is_some());
        let mut small = Ledger::default();
        small.note("a.example", "code X18-000018 and more");
        let small = Ledger::from_value(&serde_json::to_value(&small).unwrap()).unwrap();
        assert_eq!(Ledger::from_value(&serde_json::json!({"sites": [{"site": "a", "pieces": "!"}], "own": ""})), None);
        assert!(small.crossing("code X18-000018", "x.example", &[]).is_some());
    }

    #[test]
    fn what_was_added_since_the_last_whole_save_is_saved_apart_and_read_back() {
        let mut ledger = Ledger::default();
        ledger.note("a.example", "Order ACME-4471 shipped");
        ledger.saved_whole();
        let whole = serde_json::to_value(&ledger).unwrap();
        ledger.note("b.example", "Ticket TK-88120 opened");
        ledger.note("a.example", "Order ACME-4471 shipped");
        let added = ledger.added_text();
        assert!(added.contains("b.example") && !added.contains("a.example"), "only what is new: {added}");
        let mut read = Ledger::from_value(&whole).unwrap();
        assert!(read.crossing("TK-88120", "x.example", &[]).is_none());
        read.add_saved(&crate::json::from_text(&added).unwrap());
        assert_eq!(read.crossing("TK-88120", "x.example", &[]).map(|c| c.from_site), Some("b.example".into()));
        assert!(read.crossing("ACME-4471", "x.example", &[]).is_some());
    }
}

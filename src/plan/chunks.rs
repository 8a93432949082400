//! Cutting each lane's valid rows into chunks: the one rule of which chunk and position a row takes, and the identity that recognises a chunk again.

use super::classify::Recipient;
use crate::campaign::Lane;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Identifies a chunk: its lane and its index within the lane, both fixed by the input order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ChunkKey {
    pub lane: Lane,
    pub index: u32,
}

impl ChunkKey {
    pub fn to_bytes(self) -> [u8; 5] {
        let mut bytes = [0u8; 5];
        bytes[0] = self.lane.index();
        bytes[1..].copy_from_slice(&self.index.to_be_bytes());
        bytes
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<ChunkKey> {
        let lane = Lane::from_index(*bytes.first()?)?;
        let index = u32::from_be_bytes(bytes.get(1..5)?.try_into().ok()?);
        Some(ChunkKey { lane, index })
    }
}

impl std::fmt::Display for ChunkKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.lane.as_str(), self.index)
    }
}

/// Where a valid row goes: its chunk and its position in the chunk's request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkSlot {
    pub key: ChunkKey,
    pub position: u32,
}

/// What recognises a chunk when it is cut again: its first and last row, how many recipients,
/// and a digest of their row numbers and normalised phones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkIdentity {
    pub first_row: u64,
    pub last_row: u64,
    pub recipients: u32,
    /// xxh3-64 of every recipient's row number and normalised phone, in order (hex).
    pub digest: String,
}

impl ChunkIdentity {
    /// What differs between this chunk as cut now and as `recorded`, in words; `None` when they agree.
    pub fn difference(&self, recorded: &ChunkIdentity) -> Option<String> {
        let mut differences = Vec::new();
        let mut compare = |what: &str, now: String, then: String| {
            if now != then {
                differences.push(format!("{what} {now} now, {then} when it was sent"));
            }
        };
        compare("first row", self.first_row.to_string(), recorded.first_row.to_string());
        compare("last row", self.last_row.to_string(), recorded.last_row.to_string());
        compare(
            "recipients",
            self.recipients.to_string(),
            recorded.recipients.to_string(),
        );
        if differences.is_empty() && self.digest != recorded.digest {
            differences.push("the same rows now carry other phone numbers (recipient digest differs)".into());
        }
        (!differences.is_empty()).then(|| differences.join("; "))
    }
}

/// A chunk still being filled.
struct OpenChunk {
    index: u32,
    first_row: u64,
    last_row: u64,
    recipients: u32,
    digest: xxhash_rust::xxh3::Xxh3,
}

impl OpenChunk {
    fn new(index: u32) -> OpenChunk {
        OpenChunk {
            index,
            first_row: 0,
            last_row: 0,
            recipients: 0,
            digest: xxhash_rust::xxh3::Xxh3::new(),
        }
    }

    fn close(&self, digests: bool) -> ChunkIdentity {
        ChunkIdentity {
            first_row: self.first_row,
            last_row: self.last_row,
            recipients: self.recipients,
            digest: if digests {
                format!("{:016x}", self.digest.digest())
            } else {
                String::new()
            },
        }
    }
}

/// Cuts the valid rows of every lane, in input order, into chunks of `chunk_size`.
pub struct Cutter {
    chunk_size: u32,
    open: BTreeMap<Lane, OpenChunk>,
    /// Whether chunk identities carry the digest of their recipients (a walk that only counts
    /// needs none: the identity is for recognising a chunk sent before).
    digests: bool,
}

impl Cutter {
    pub fn new(chunk_size: usize) -> Cutter {
        Cutter {
            chunk_size: u32::try_from(chunk_size)
                .expect("chunk_size is validated to at most 1,000")
                .max(1),
            open: BTreeMap::new(),
            digests: true,
        }
    }

    /// A cutter whose chunk identities have an empty digest.
    pub fn without_digests(chunk_size: usize) -> Cutter {
        Cutter {
            digests: false,
            ..Cutter::new(chunk_size)
        }
    }

    /// Places the next valid row of its lane; answers its slot, and the chunk it closed if it filled one.
    pub fn place(&mut self, recipient: &Recipient) -> (ChunkSlot, Option<(ChunkKey, ChunkIdentity)>) {
        let open = self.open.entry(recipient.lane).or_insert_with(|| OpenChunk::new(0));
        if open.recipients == 0 {
            open.first_row = recipient.row;
        }
        open.last_row = recipient.row;
        if self.digests {
            // One update of the concatenation (the streaming hash is the same however it is fed).
            let phone = recipient.phone.as_bytes();
            let mut entry = [0u8; 8 + 24 + 1];
            if phone.len() <= 24 {
                entry[..8].copy_from_slice(&recipient.row.to_le_bytes());
                entry[8..8 + phone.len()].copy_from_slice(phone);
                entry[8 + phone.len()] = 0xff;
                open.digest.update(&entry[..8 + phone.len() + 1]);
            } else {
                open.digest.update(&recipient.row.to_le_bytes());
                open.digest.update(phone);
                open.digest.update(&[0xff]);
            }
        }
        let slot = ChunkSlot {
            key: ChunkKey {
                lane: recipient.lane,
                index: open.index,
            },
            position: open.recipients,
        };
        open.recipients += 1;
        if open.recipients < self.chunk_size {
            return (slot, None);
        }
        let closed = open.close(self.digests);
        *open = OpenChunk::new(open.index + 1);
        (slot, Some((slot.key, closed)))
    }

    /// The chunks left partly filled at the end of the input, in lane order.
    pub fn finish(self) -> Vec<(ChunkKey, ChunkIdentity)> {
        let digests = self.digests;
        self.open
            .into_iter()
            .filter(|(_, open)| open.recipients > 0)
            .map(|(lane, open)| {
                (
                    ChunkKey {
                        lane,
                        index: open.index,
                    },
                    open.close(digests),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipient(row: u64, lane: Lane) -> Recipient {
        Recipient {
            row,
            phone: format!("010{:08}", row).into(),
            name: None,
            vars: Default::default(),
            lane,
            measure: None,
        }
    }

    #[test]
    fn each_lane_is_cut_on_its_own_in_input_order() {
        let mut cutter = Cutter::new(2);
        let rows = [
            (1, Lane::Sms),
            (2, Lane::Lms),
            (3, Lane::Sms),
            (4, Lane::Sms),
            (5, Lane::Lms),
        ];
        let mut slots = Vec::new();
        let mut closed = Vec::new();
        for (row, lane) in rows {
            let (slot, full) = cutter.place(&recipient(row, lane));
            slots.push((slot.key.to_string(), slot.position));
            closed.extend(full.map(|(key, identity)| (key.to_string(), identity.first_row, identity.last_row)));
        }
        assert_eq!(
            slots,
            [("sms#0", 0), ("lms#0", 0), ("sms#0", 1), ("sms#1", 0), ("lms#0", 1)].map(|(k, p)| (k.to_string(), p))
        );
        assert_eq!(closed, [("sms#0".to_string(), 1, 3), ("lms#0".to_string(), 2, 5)]);
        let rest: Vec<(String, u32)> = cutter
            .finish()
            .into_iter()
            .map(|(key, identity)| (key.to_string(), identity.recipients))
            .collect();
        assert_eq!(rest, [("sms#1".to_string(), 1)]);
    }

    #[test]
    fn identity_tells_what_differs() {
        let cut = |rows: &[(u64, &str)]| {
            let mut cutter = Cutter::new(10);
            for (row, phone) in rows {
                cutter.place(&Recipient {
                    phone: (*phone).into(),
                    ..recipient(*row, Lane::Sms)
                });
            }
            cutter.finish().remove(0).1
        };
        let recorded = cut(&[(1, "01011112222"), (2, "01033334444")]);
        assert_eq!(
            cut(&[(1, "01011112222"), (2, "01033334444")]).difference(&recorded),
            None
        );
        let shifted = cut(&[(2, "01033334444"), (3, "01055556666")])
            .difference(&recorded)
            .unwrap();
        assert!(shifted.contains("first row 2 now, 1 when it was sent"), "{shifted}");
        let other_phone = cut(&[(1, "01011112222"), (2, "01099998888")])
            .difference(&recorded)
            .unwrap();
        assert!(other_phone.contains("digest"), "{other_phone}");
    }

    #[test]
    fn the_digest_is_of_row_phone_and_separator_for_each_recipient_as_checkpoints_recorded_it() {
        // Checkpoints written before keep matching: the digest is xxh3-64 of (row LE, phone, 0xff)
        // for each recipient in order, however the bytes are fed.
        let phones = ["01011112222", "+82 10-3333-4444 but longer than twenty-four bytes"];
        let mut cutter = Cutter::new(10);
        let mut expected = xxhash_rust::xxh3::Xxh3::new();
        for (row, phone) in [7u64, 9].into_iter().zip(phones) {
            cutter.place(&Recipient {
                phone: phone.into(),
                ..recipient(row, Lane::Sms)
            });
            expected.update(&row.to_le_bytes());
            expected.update(phone.as_bytes());
            expected.update(&[0xff]);
        }
        assert_eq!(cutter.finish()[0].1.digest, format!("{:016x}", expected.digest()));
    }

    #[test]
    fn a_cutter_without_digests_cuts_the_same_chunks() {
        let (mut with, mut without) = (Cutter::new(3), Cutter::without_digests(3));
        for row in 1..=10 {
            let lane = if row % 4 == 0 { Lane::Lms } else { Lane::Sms };
            let (a, closed_a) = with.place(&recipient(row, lane));
            let (b, closed_b) = without.place(&recipient(row, lane));
            assert_eq!(a, b);
            assert_eq!(closed_a.is_some(), closed_b.is_some());
            if let (Some((_, a)), Some((_, b))) = (closed_a, closed_b) {
                assert_eq!(
                    (a.first_row, a.last_row, a.recipients),
                    (b.first_row, b.last_row, b.recipients)
                );
                assert!(b.digest.is_empty() && !a.digest.is_empty());
            }
        }
    }
}

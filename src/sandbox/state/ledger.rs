//! The ledger and the sent log as the sandbox stores them, 16 and 8 bytes a recipient, and the `/_sandbox/ledger` and `/_sandbox/sent` answers written from them.
//!
//! The ledger's export names every entry with all its fields; consecutive entries of one request
//! share all but the recipient and the reference, so those shared fields are kept once per run.

use super::compact::{PackedNumber, Segmented};
use super::{GroupRef, GroupState, SandboxState};
use crate::api::ledger::{BillingClass, LedgerEntry, LedgerKind};
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

/// What a ledger entry belongs to: the standard `uid`, or a gateway send record by its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reference {
    Uid(u64),
    Record(u32),
}

const RECORD_TAG: u64 = 1 << 63;

impl Reference {
    fn pack(self) -> u64 {
        match self {
            Reference::Uid(uid) => {
                assert!(uid & RECORD_TAG == 0, "uids stay below 2^63");
                uid
            }
            Reference::Record(index) => RECORD_TAG | u64::from(index),
        }
    }

    fn unpack(packed: u64) -> Reference {
        if packed & RECORD_TAG == 0 {
            Reference::Uid(packed)
        } else {
            Reference::Record((packed & !RECORD_TAG) as u32)
        }
    }
}

/// The fields a run of consecutive ledger entries shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shared {
    pub date: i64,
    pub kind: LedgerKind,
    pub class: BillingClass,
    pub amount: i64,
    /// Index of the gateway send group.
    pub send_group: Option<u32>,
    /// Interned sender number of a fallback SMS/LMS.
    pub callback_no: Option<u32>,
}

struct Run {
    first: usize,
    shared: Shared,
}

struct Entry {
    recipient: PackedNumber,
    reference: u64,
}

/// Charges and refunds in order.
#[derive(Default)]
pub(super) struct LedgerBook {
    runs: Vec<Run>,
    entries: Segmented<Entry>,
}

impl LedgerBook {
    pub fn push(&mut self, shared: Shared, recipient: PackedNumber, reference: Reference) {
        if self.runs.last().is_none_or(|run| run.shared != shared) {
            self.runs.push(Run {
                first: self.entries.len(),
                shared,
            });
        }
        self.entries.push(Entry {
            recipient,
            reference: reference.pack(),
        });
    }

    /// Every entry with its sequence number (from 1) and the fields of its run.
    fn iter(&self) -> impl Iterator<Item = (u64, &Shared, PackedNumber, Reference)> + '_ {
        let mut run = 0;
        self.entries.iter().enumerate().map(move |(index, entry)| {
            while self.runs.get(run + 1).is_some_and(|next| next.first <= index) {
                run += 1;
            }
            let shared = &self.runs[run].shared;
            (
                index as u64 + 1,
                shared,
                entry.recipient,
                Reference::unpack(entry.reference),
            )
        })
    }
}

impl GroupState {
    /// The ledger as the admin path shows it, one wire entry at a time.
    fn ledger_entries(&self) -> impl Iterator<Item = LedgerEntry> + '_ {
        self.ledger
            .iter()
            .map(|(seq, shared, recipient, reference)| LedgerEntry {
                seq,
                date: shared.date,
                group_id: self.config.id.clone(),
                kind: shared.kind,
                billing_class: shared.class,
                recipient: self.numbers.text(recipient),
                amount: shared.amount,
                reference: match reference {
                    Reference::Uid(uid) => uid.to_string(),
                    Reference::Record(index) => self.record_id(index),
                },
                send_group_id: shared.send_group.map(|index| self.send_group_id(index)),
                callback_no: shared.callback_no.map(|index| self.texts.get(index).to_string()),
            })
    }
}

/// `GET /_sandbox/ledger`, written entry by entry: the same JSON as [`crate::api::ledger::Ledger`]
/// without holding every entry as a wire struct at once.
struct LedgerView<'a>(&'a GroupState);

impl Serialize for LedgerView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Entries<'a>(&'a GroupState);
        impl Serialize for Entries<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.ledger_entries())
            }
        }
        let mut ledger = serializer.serialize_struct("Ledger", 3)?;
        ledger.serialize_field("groupId", &self.0.config.id)?;
        ledger.serialize_field("balance", &self.0.balance)?;
        ledger.serialize_field("entries", &Entries(self.0))?;
        ledger.end()
    }
}

/// `GET /_sandbox/sent`: the same JSON as [`crate::api::ledger::SentCounts`], counted from the
/// sent log when asked.
struct SentView<'a>(&'a GroupState);

impl Serialize for SentView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Numbers<'a>(&'a GroupState);
        impl Serialize for Numbers<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let book = &self.0.numbers;
                let mut sorted: Vec<PackedNumber> = self.0.sent.iter().copied().collect();
                sorted.sort_unstable_by(|a, b| book.text_order(*a, *b));
                let mut map = serializer.serialize_map(None)?;
                for same in sorted.chunk_by(|a, b| a == b) {
                    map.serialize_entry(&book.text(same[0]), &(same.len() as u32))?;
                }
                map.end()
            }
        }
        let mut counts = serializer.serialize_struct("SentCounts", 3)?;
        counts.serialize_field("groupId", &self.0.config.id)?;
        counts.serialize_field("total", &(self.0.sent.len() as u64))?;
        counts.serialize_field("numbers", &Numbers(self.0))?;
        counts.end()
    }
}

impl SandboxState {
    /// The JSON body of `GET /_sandbox/ledger`.
    pub fn ledger_json(&mut self, group: GroupRef) -> Vec<u8> {
        serde_json::to_vec(&LedgerView(self.group(group))).expect("a ledger serialises")
    }

    /// The JSON body of `GET /_sandbox/sent`.
    pub fn sent_json(&mut self, group: GroupRef) -> Vec<u8> {
        serde_json::to_vec(&SentView(self.group(group))).expect("send counts serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ledger::{Ledger, SentCounts};
    use crate::sandbox::Accounts;
    use proptest::prelude::*;

    #[test]
    fn the_views_write_what_the_wire_types_write() {
        let mut state = SandboxState::new(&Accounts::demo());
        let group = GroupRef(0);
        let g = state.group(group);
        let push = |g: &mut GroupState, number: &str, reference, class, callback: Option<&str>| {
            let recipient = g.numbers.pack(number);
            let callback_no = callback.map(|c| g.texts.intern(c));
            let shared = Shared {
                date: 1_700_000_000_000,
                kind: LedgerKind::Charge,
                class,
                amount: 9,
                send_group: None,
                callback_no,
            };
            g.ledger.push(shared, recipient, reference);
            g.sent.push(recipient);
        };
        push(g, "01011112222", Reference::Uid(1_000_000_001), BillingClass::Sms, None);
        push(g, "01011112222", Reference::Uid(1_000_000_002), BillingClass::Sms, None);
        push(
            g,
            "+82 10-3333-4444",
            Reference::Uid(7),
            BillingClass::FallbackSms,
            Some("02-1234-5678"),
        );
        push(g, "0101111222", Reference::Uid(8), BillingClass::Lms, None);

        let ledger = Ledger {
            group_id: "demo".into(),
            balance: g.balance,
            entries: g.ledger_entries().collect(),
        };
        assert_eq!(ledger.entries.len(), 4);
        assert_eq!(ledger.entries[2].recipient, "+82 10-3333-4444");
        assert_eq!(ledger.entries[2].callback_no.as_deref(), Some("02-1234-5678"));
        assert_eq!(ledger.entries[3].seq, 4);
        assert_eq!(state.ledger_json(group), serde_json::to_vec(&ledger).unwrap());

        let sent = SentCounts {
            group_id: "demo".into(),
            total: 4,
            numbers: [("01011112222", 2), ("+82 10-3333-4444", 1), ("0101111222", 1)]
                .into_iter()
                .map(|(n, c)| (n.to_string(), c))
                .collect(),
        };
        assert_eq!(state.sent_json(group), serde_json::to_vec(&sent).unwrap());
    }

    #[test]
    fn an_entry_is_16_bytes_and_a_logged_number_8() {
        assert_eq!(std::mem::size_of::<Entry>(), 16);
        assert_eq!(std::mem::size_of::<PackedNumber>(), 8);
    }

    #[test]
    fn an_empty_ledger_and_log_write_empty_lists() {
        let mut state = SandboxState::new(&Accounts::demo());
        let ledger: Ledger = serde_json::from_slice(&state.ledger_json(GroupRef(0))).unwrap();
        assert!(ledger.entries.is_empty());
        let sent: SentCounts = serde_json::from_slice(&state.sent_json(GroupRef(0))).unwrap();
        assert_eq!((sent.total, sent.numbers.len()), (0, 0));
    }

    proptest! {
        #[test]
        fn references_round_trip(uid in 0u64..(1 << 63), index: u32) {
            prop_assert_eq!(Reference::unpack(Reference::Uid(uid).pack()), Reference::Uid(uid));
            prop_assert_eq!(Reference::unpack(Reference::Record(index).pack()), Reference::Record(index));
        }

        #[test]
        fn entries_keep_their_order_and_fields_across_runs(
            entries in prop::collection::vec((0i64..3, any::<bool>(), 0u32..4, "[0-9]{10,11}"), 0..60)
        ) {
            let mut state = SandboxState::new(&Accounts::demo());
            let g = state.group(GroupRef(0));
            for (index, (date, refund, amount, number)) in entries.iter().enumerate() {
                let shared = Shared {
                    date: *date,
                    kind: if *refund { LedgerKind::Refund } else { LedgerKind::Charge },
                    class: BillingClass::Sms,
                    amount: i64::from(*amount),
                    send_group: None,
                    callback_no: None,
                };
                let recipient = g.numbers.pack(number);
                g.ledger.push(shared, recipient, Reference::Uid(index as u64));
            }
            let written: Vec<LedgerEntry> = g.ledger_entries().collect();
            prop_assert_eq!(written.len(), entries.len());
            for (index, (entry, (date, refund, amount, number))) in written.iter().zip(&entries).enumerate() {
                prop_assert_eq!(entry.seq, index as u64 + 1);
                prop_assert_eq!(entry.date, *date);
                prop_assert_eq!(entry.kind == LedgerKind::Refund, *refund);
                prop_assert_eq!(entry.amount, i64::from(*amount));
                prop_assert_eq!(&entry.recipient, number);
                prop_assert_eq!(&entry.reference, &index.to_string());
            }
        }
    }
}

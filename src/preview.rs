//! Message previews for `validate --preview N`: per lane, the first rows and the longest message, rendered as recipients will get them.

use crate::api::ledger::BillingClass;
use crate::campaign::{Campaign, Lane};
use crate::phone::Masked;
use crate::plan::billing::{self, Fallback};
use crate::plan::{Fate, PlannedRow, Recipient};
use crate::text::euc_kr_len;
use serde::Serialize;
use std::collections::BTreeMap;

/// One recipient's message as it will be sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessagePreview {
    pub row: u64,
    /// Masked: previews are read by people and pasted into tickets.
    pub phone: String,
    pub lane: Lane,
    pub billing_class: BillingClass,
    /// The filled text; `None` when the service fills a template the client does not know
    /// (a BASIC brand message), or the message has no text (an image).
    pub text: Option<String>,
    /// The template variables sent, when the text is filled at the service.
    pub variables: BTreeMap<String, String>,
    pub chars: Option<usize>,
    /// Length in EUC-KR bytes, where the text can be encoded.
    pub bytes: Option<usize>,
    pub fallback: Option<Fallback>,
    /// Why this row was chosen: `first` or `longest`.
    pub chosen: &'static str,
}

/// Gathers previews while the plan is walked: per lane, the first rows and the longest message.
pub struct Previews<'a> {
    campaign: &'a Campaign,
    per_lane: usize,
    first: BTreeMap<Lane, Vec<Chosen>>,
    longest: BTreeMap<Lane, Chosen>,
}

/// A chosen row: its preview and the recipient it was made from (to send it to a test number).
#[derive(Debug, Clone)]
pub struct Chosen {
    pub preview: MessagePreview,
    pub recipient: Recipient,
    /// What "longest" compares: the message's size in its lane's unit.
    measure: usize,
}

impl MessagePreview {
    /// Its length as people read it: characters and EUC-KR bytes, or why there are none.
    pub fn length_text(&self) -> String {
        match (self.chars, self.bytes) {
            (Some(chars), Some(bytes)) => format!("{chars} characters, {bytes} bytes EUC-KR"),
            (Some(chars), None) => format!("{chars} characters, not encodable in EUC-KR"),
            _ => "filled at the service".into(),
        }
    }
}

impl<'a> Previews<'a> {
    pub fn new(campaign: &'a Campaign, per_lane: usize) -> Previews<'a> {
        Previews {
            campaign,
            per_lane,
            first: BTreeMap::new(),
            longest: BTreeMap::new(),
        }
    }

    /// The preview of one recipient's message; `chosen` says why it was picked.
    pub fn render(&self, recipient: &Recipient, chosen: &'static str) -> MessagePreview {
        let mapping = recipient.mapping(self.campaign);
        let text = self
            .campaign
            .lane_text()
            .map(|template| template.render(&mapping).unwrap_or_default());
        MessagePreview {
            row: recipient.row,
            phone: Masked(&recipient.phone).to_string(),
            lane: recipient.lane,
            billing_class: billing::primary_class(self.campaign, recipient.lane),
            chars: text.as_ref().map(|t| t.chars().count()),
            bytes: text.as_deref().and_then(|t| euc_kr_len(t).ok()),
            variables: if text.is_some() {
                BTreeMap::new()
            } else {
                mapping
                    .vars
                    .iter()
                    .map(|(key, value)| (key.to_string(), value.to_string()))
                    .collect()
            },
            text,
            fallback: billing::fallback(self.campaign, recipient),
            chosen,
        }
    }

    /// A recipient's preview with the recipient; `chosen` says why it was picked.
    pub fn choose(&self, recipient: &Recipient, chosen: &'static str) -> Chosen {
        Chosen {
            preview: self.render(recipient, chosen),
            measure: self.measure(recipient),
            recipient: recipient.clone(),
        }
    }

    /// The message's size as its lane limits it: measured when the row was drafted, else (a
    /// lane rule that measures nothing) its EUC-KR bytes, filled here.
    fn measure(&self, recipient: &Recipient) -> usize {
        if let Some(measure) = recipient.measure {
            return measure as usize;
        }
        self.campaign
            .lane_text()
            .and_then(|template| template.render(&recipient.mapping(self.campaign)).ok())
            .map(|text| euc_kr_len(&text).unwrap_or(text.len()))
            .unwrap_or(0)
    }

    /// Looks at one planned row.
    pub fn see(&mut self, planned: &PlannedRow) {
        let Fate::Valid(recipient) = &planned.fate else {
            return;
        };
        let first = self.first.entry(recipient.lane).or_default();
        if first.len() < self.per_lane {
            let chosen = self.choose(recipient, "first");
            self.first.entry(recipient.lane).or_default().push(chosen);
            return;
        }
        let first_longest = first.iter().map(|c| c.measure).max().unwrap_or(0);
        if self.campaign.lane_text().is_none() {
            return;
        }
        let length = self.measure(recipient);
        let longest_so_far = self.longest.get(&recipient.lane).map_or(0, |chosen| chosen.measure);
        if length > longest_so_far && length > first_longest {
            let chosen = self.choose(recipient, "longest");
            self.longest.insert(recipient.lane, chosen);
        }
    }

    /// Per lane: the first rows, then the longest message when it is not among them.
    pub fn finish(self) -> BTreeMap<Lane, Vec<MessagePreview>> {
        self.finish_chosen()
            .into_iter()
            .map(|(lane, chosen)| (lane, chosen.into_iter().map(|c| c.preview).collect()))
            .collect()
    }

    /// As [`Previews::finish`], with the recipients.
    pub fn finish_chosen(mut self) -> BTreeMap<Lane, Vec<Chosen>> {
        for (lane, longest) in std::mem::take(&mut self.longest) {
            self.first.entry(lane).or_default().push(longest);
        }
        self.first
    }
}

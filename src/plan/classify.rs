//! Classification of one input row: rejected (and why), suppressed, held back by the frequency cap, duplicate, or valid in a lane.

use super::capped::{CapMark, CappedList};
use super::lane_rule::{LaneRule, Unit};
use super::phone_list;
pub use super::rejection::{RejectReason, Rejection};
use super::{PlanError, PlannedRow};
use crate::campaign::{Campaign, Lane};
use crate::input::phone_set::PhoneSet;
use crate::input::{self, ColumnSpec, FieldText, RawRow, Row, RowView, Unreadable};
use crate::phone::{self, PhoneError};
use crate::template::ValueAt;
use crate::text::Unencodable;
use rayon::prelude::*;

/// A row that will be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipient {
    pub row: u64,
    pub phone: FieldText,
    pub name: Option<FieldText>,
    /// The variables' values in the campaign's order, as read (see [`Recipient::values`]).
    pub vars: input::FieldValues,
    pub lane: Lane,
    /// The filled message's size in the unit its lane rule limits (EUC-KR bytes for SMS/LMS,
    /// characters for a notification), measured when the row was drafted; `None` when the rule
    /// measures nothing. Previews rank by it instead of filling every text again.
    pub measure: Option<u32>,
}

impl Recipient {
    /// The variables' values in the campaign's order; an empty field is an empty text.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.vars.iter().map(|value| value.as_deref().unwrap_or_default())
    }

    /// The recipient's name and variables by template key, to fill a template with.
    pub fn mapping(&self, campaign: &Campaign) -> crate::api::MappingEntry {
        crate::api::MappingEntry {
            name: self.name.as_deref().map(String::from),
            vars: campaign
                .recipients
                .variables
                .iter()
                .map(|(key, _)| key.clone())
                .zip(self.values().map(String::from))
                .collect(),
        }
    }
}

/// What became of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    Rejected(Rejection),
    Suppressed,
    /// Held back by the workspace's frequency cap: sent too often lately.
    Capped(CapMark),
    Duplicate,
    Valid(Recipient),
}

/// Classification: the order-free part of each row (`Drafter`, run on every core) and the
/// part that depends on the rows before it (`Screen`, in input order).
pub struct Classifier {
    pub drafter: Drafter,
    pub screen: Screen,
}

/// What the order-free part of classification needs of the campaign, computed once.
pub struct Drafter {
    lanes: LaneRule,
    template: Option<crate::template::Template>,
    /// The measure of the template's literal text in the unit the lane rule counts (`None`
    /// when it cannot be sent), so that a row is measured by its values alone.
    literal_size: Option<usize>,
    /// Where each of the template's placeholders finds its value in a row.
    bound: Vec<ValueAt>,
    variable_keys: Vec<String>,
    variable_columns: Vec<String>,
    phone_column: String,
    name_column: Option<String>,
}

/// Suppression and duplicates: whether a valid row's number was listed or seen before.
pub struct Screen {
    suppression: Option<PhoneSet>,
    /// The opt-out list, when the campaign advertises.
    opt_outs: Option<PhoneSet>,
    /// Rows suppressed by the opt-out list alone (not also in the suppression list).
    opted_out: u64,
    /// The numbers the frequency cap holds back, when the campaign advertises.
    capped: Option<CappedList>,
    seen: Option<PhoneSet>,
}

/// A row's name and variables by template key; each value a `T` as the row holds it.
struct Vars<'a, T> {
    name: Option<&'a str>,
    keys: &'a [String],
    values: &'a [Option<T>],
}

impl<T: AsRef<str>> crate::api::VariableSource for Vars<'_, T> {
    fn name(&self) -> Option<&str> {
        self.name
    }
    fn var(&self, key: &str) -> Option<&str> {
        let index = self.keys.iter().position(|k| k == key)?;
        self.values[index].as_ref().map(AsRef::as_ref)
    }
}

impl<'a, T: AsRef<str>> Vars<'a, T> {
    /// The value where a bound placeholder finds it (see `Template::bind`).
    fn at(&self, at: ValueAt) -> Option<&'a str> {
        match at {
            ValueAt::Name => self.name,
            ValueAt::Var(index) => self.values.get(index)?.as_ref().map(AsRef::as_ref),
            ValueAt::Nowhere => None,
        }
    }
}

/// The result of the order-free part of classification. A rejection is boxed: rare, and every
/// row's draft is handed between threads, so its size costs every row.
pub enum Draft {
    Rejected(Box<Rejection>),
    Valid {
        /// The number as it is kept, when the row's phone is not already written so.
        phone: Option<FieldText>,
        lane: Lane,
        measure: Option<u32>,
    },
}

impl Classifier {
    pub fn new(campaign: &Campaign) -> Result<Classifier, PlanError> {
        Ok(Classifier {
            drafter: Drafter::new(campaign),
            screen: Screen::new(campaign)?,
        })
    }

    /// Classifies a batch in input order (see [`Drafter::draft`] and [`Screen::settle`]).
    pub fn classify(&mut self, batch: Vec<RawRow>) -> Vec<(RowRef, Fate)> {
        let drafts = self.drafter.draft(&batch);
        self.screen.settle(batch, drafts)
    }

    pub fn column_spec(campaign: &Campaign) -> ColumnSpec {
        ColumnSpec {
            phone: campaign.recipients.phone_column.clone(),
            name: campaign.recipients.name_column.clone(),
            vars: campaign.recipients.variables.iter().map(|(_, c)| c.clone()).collect(),
        }
    }
}

impl Screen {
    fn new(campaign: &Campaign) -> Result<Screen, PlanError> {
        let suppression = match &campaign.recipients.suppression {
            None => None,
            Some(path) => Some(phone_list::load(path, &campaign.recipients.suppression_column)?),
        };
        let opt_outs = match campaign.opt_outs_applied() {
            None => None,
            Some(path) => Some(phone_list::load(path, "phone")?),
        };
        let capped = match campaign.frequency_capped_applied() {
            None => None,
            Some(path) => Some(CappedList::load(path).map_err(|source| {
                PlanError::Input(crate::input::InputError::Open {
                    path: path.to_path_buf(),
                    source,
                })
            })?),
        };
        Ok(Screen {
            suppression,
            opt_outs,
            opted_out: 0,
            capped,
            seen: campaign.recipients.drop_duplicates.then(PhoneSet::new),
        })
    }

    pub fn suppression_entries(&self) -> u64 {
        self.suppression.as_ref().map_or(0, PhoneSet::len)
    }

    /// The frequency cap's list, when the campaign applies one.
    pub fn capped(&self) -> Option<&CappedList> {
        self.capped.as_ref()
    }

    pub fn opt_out_entries(&self) -> u64 {
        self.opt_outs.as_ref().map_or(0, PhoneSet::len)
    }

    /// Rows the opt-out list suppressed so far that the suppression list did not.
    pub fn opted_out(&self) -> u64 {
        self.opted_out
    }

    fn suppresses(&mut self, phone: &str) -> bool {
        if self.suppression.as_ref().is_some_and(|s| s.contains(phone)) {
            return true;
        }
        let opted_out = self.opt_outs.as_ref().is_some_and(|s| s.contains(phone));
        self.opted_out += u64::from(opted_out);
        opted_out
    }

    /// The fate of each drafted row, in input order, so that the first occurrence of a number
    /// is the one kept (see [`Screen::settle_row`]).
    pub fn settle(&mut self, mut rows: Vec<RawRow>, drafts: Vec<Draft>) -> Vec<(RowRef, Fate)> {
        debug_assert_eq!(rows.len(), drafts.len());
        rows.iter_mut()
            .zip(drafts)
            .map(|(row, draft)| {
                let settled = self.settle_row(row, draft);
                (settled.row, settled.fate)
            })
            .collect()
    }

    /// Whether a valid draft's number, `kept` (as it is kept), is held back, and why: listed for
    /// suppression (or opted out), held back by the frequency cap, or seen before. The one
    /// screening rule; it runs on every valid row in input order, so that the first occurrence of
    /// a number is the one kept.
    #[inline]
    fn held_back(&mut self, kept: &str) -> Option<Fate> {
        if self.suppresses(kept) {
            Some(Fate::Suppressed)
        } else if let Some(mark) = self.capped.as_ref().and_then(|capped| capped.lookup(kept)) {
            Some(Fate::Capped(mark))
        } else if self.seen.as_mut().is_some_and(|seen| !seen.insert(kept)) {
            Some(Fate::Duplicate)
        } else {
            None
        }
    }

    /// The fate of the next drafted row in input order, as a planned row whose chunk is still
    /// to be placed. A valid row's fields move into its `Recipient`; the others keep their phone
    /// and name in the `RowRef`. The row is emptied field by field and the planned row built in
    /// one piece rather than moved whole from step to step: rows are large, and this runs for
    /// every row on the one thread that keeps the input order.
    #[inline]
    pub fn settle_row(&mut self, row: &mut RawRow, draft: Draft) -> PlannedRow {
        match draft {
            Draft::Rejected(rejection) => unsent(row, Fate::Rejected(*rejection)),
            Draft::Valid { phone, lane, measure } => {
                // The number as it is kept: the row's own when it was written so.
                let kept = phone.as_ref().or(row.phone.as_ref()).map_or("", FieldText::as_str);
                if let Some(fate) = self.held_back(kept) {
                    return unsent(row, fate);
                }
                let recipient = Recipient {
                    row: row.row,
                    phone: phone.or_else(|| row.phone.take()).unwrap_or_default(),
                    name: row.name.take(),
                    vars: std::mem::take(&mut row.vars),
                    lane,
                    measure,
                };
                PlannedRow {
                    row: RowRef {
                        row: row.row,
                        phone: None,
                        name: None,
                    },
                    fate: Fate::Valid(recipient),
                    chunk: None,
                }
            }
        }
    }

    /// The fate of the next row drafted alone (see [`DraftedRow`]), in input order: what the
    /// accounting counts of it or, for a row with a line in rejects.csv, its fate.
    #[inline]
    pub fn settle_drafted(&mut self, draft: Draft) -> Settled {
        match draft {
            Draft::Rejected(rejection) => Settled::Listed(Box::new(Fate::Rejected(*rejection))),
            Draft::Valid { phone, lane, .. } => match self.held_back(phone.as_deref().unwrap_or_default()) {
                None => Settled::Counted(Counted::Valid(lane)),
                Some(fate @ Fate::Capped(_)) => Settled::Listed(Box::new(fate)),
                Some(fate) => Settled::Counted(fate.counted()),
            },
        }
    }
}

/// A row that is not sent keeps its phone and name as the file has them.
fn unsent(row: &mut RawRow, fate: Fate) -> PlannedRow {
    PlannedRow {
        row: RowRef::unsent(row),
        fate,
        chunk: None,
    }
}

/// What [`Screen::settle_drafted`] makes of a row.
pub enum Settled {
    /// Counted alone: what the accounting needs of its fate.
    Counted(Counted),
    /// A row with a line in rejects.csv (rejected, held back by the frequency cap). Boxed: rare,
    /// and the common answer is a few bytes.
    Listed(Box<Fate>),
}

/// A row drafted where it was read and kept no further: its number and its draft, whose
/// `Draft::Valid::phone` is always the number as it is kept. What a plan that only accounts
/// hands between threads instead of the row (see `Visitor::every_row`).
pub struct DraftedRow {
    pub row: u64,
    pub draft: Draft,
}

impl input::Numbered for DraftedRow {
    fn shift_row(&mut self, rows_before: u64) {
        self.row += rows_before;
    }
}

/// What the accounting needs of a row's fate (see `Scan::count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    Rejected(RejectReason),
    Suppressed,
    Capped,
    Duplicate,
    Valid(Lane),
}

impl Fate {
    /// What the accounting counts of this fate.
    pub fn counted(&self) -> Counted {
        match self {
            Fate::Rejected(rejection) => Counted::Rejected(rejection.reason),
            Fate::Suppressed => Counted::Suppressed,
            Fate::Capped(_) => Counted::Capped,
            Fate::Duplicate => Counted::Duplicate,
            Fate::Valid(recipient) => Counted::Valid(recipient.lane),
        }
    }
}

impl Drafter {
    fn new(campaign: &Campaign) -> Drafter {
        let lanes = LaneRule::for_kind(campaign.kind);
        let template = campaign.lane_text().cloned();
        let literal_size = match (&template, lanes.unit()) {
            (Some(template), Some(unit)) => unit.size(&template.literal_text()).ok(),
            _ => None,
        };
        let variable_keys: Vec<String> = campaign.recipients.variables.iter().map(|(k, _)| k.clone()).collect();
        Drafter {
            lanes,
            bound: template
                .as_ref()
                .map_or_else(Vec::new, |template| template.bind(&variable_keys)),
            template,
            literal_size,
            variable_keys,
            variable_columns: campaign.recipients.variables.iter().map(|(_, c)| c.clone()).collect(),
            phone_column: campaign.recipients.phone_column.clone(),
            name_column: campaign.recipients.name_column.clone(),
        }
    }

    /// Everything about each row of a batch that does not depend on the rows before it, on
    /// every core: a draft for each row, in the batch's order.
    pub fn draft(&self, batch: &[RawRow]) -> Vec<Draft> {
        batch
            .par_iter()
            .map_init(String::new, |buffer, row| self.draft_row(row, buffer))
            .collect()
    }

    /// As [`Drafter::draft`], on the calling thread: for a batch that is itself one of many
    /// drafted at once.
    pub fn draft_here(&self, batch: &[RawRow]) -> Vec<Draft> {
        let mut buffer = String::new();
        batch.iter().map(|row| self.draft_row(row, &mut buffer)).collect()
    }

    /// A row drafted where it was read, kept no further (see [`DraftedRow`]).
    #[inline]
    pub fn drafted(&self, row: RowView<'_>) -> DraftedRow {
        // A text is built only for a message that cannot be sent, to name what stops it.
        let mut draft = self.draft_row(&row, &mut String::new());
        if let Draft::Valid { phone: kept @ None, .. } = &mut draft {
            *kept = row.phone.map(input::field_text);
        }
        DraftedRow { row: row.row, draft }
    }

    fn reject(&self, reason: RejectReason, column: &str, detail: impl Into<String>) -> Draft {
        Draft::Rejected(Box::new(Rejection {
            reason,
            column: column.to_string(),
            detail: detail.into(),
        }))
    }

    /// Everything about a row that does not depend on the rows before it.
    fn draft_row<T: AsRef<str>>(&self, row: &Row<T>, buffer: &mut String) -> Draft {
        if let Some(unreadable) = row.unreadable.as_deref() {
            let reason = match unreadable {
                Unreadable::Ragged { .. } => RejectReason::Ragged,
                Unreadable::NotText { .. } => RejectReason::NotText,
                Unreadable::FieldTooLarge { .. } => RejectReason::FieldTooLarge,
                Unreadable::CellError { .. } => RejectReason::CellError,
                Unreadable::PhoneFraction { .. } => RejectReason::PhoneInvalid,
            };
            return self.reject(reason, unreadable.column(), unreadable.to_string());
        }
        let phone = match row
            .phone
            .as_ref()
            .map(|phone| phone::normalize_unless_kept(phone.as_ref()))
        {
            None | Some(Err(PhoneError::Empty)) => {
                return self.reject(RejectReason::PhoneMissing, &self.phone_column, "empty")
            }
            Some(Err(error)) => {
                return self.reject(RejectReason::PhoneInvalid, &self.phone_column, error.to_string());
            }
            Some(Ok(phone)) => phone,
        };
        let vars = Vars {
            name: row.name.as_ref().map(AsRef::as_ref),
            keys: &self.variable_keys,
            values: &row.vars,
        };
        let mut measure = None;
        let lane = match &self.template {
            Some(template) => {
                let size = match self.size(template, &vars, self.lanes.unit(), buffer) {
                    Ok(size) => size,
                    Err(missing) => {
                        let column = self.column_of(&missing.key);
                        return self.reject(
                            RejectReason::VariableMissing,
                            &column,
                            format!("{} has no value", missing.written),
                        );
                    }
                };
                // `lane` asks for the size only in the unit `unit()` names, which it was measured in.
                if let Some(Ok(size)) = &size {
                    measure = u32::try_from(*size).ok();
                }
                let measured = |_: Unit| size.expect("a lane rule that measures names its unit");
                match self.lanes.lane(measured) {
                    Ok(lane) => lane,
                    Err((reason, detail)) => return self.reject(reason, "message", detail),
                }
            }
            None => {
                // A BASIC brand template lives at the service (and a FREE image message has no
                // text): every mapped variable must have a value.
                for (index, value) in row.vars.iter().enumerate() {
                    if value.as_ref().is_none_or(|value| value.as_ref().is_empty()) {
                        let key = &self.variable_keys[index];
                        return self.reject(
                            RejectReason::VariableMissing,
                            &self.variable_columns[index],
                            format!("#{{{key}}} has no value"),
                        );
                    }
                }
                self.lanes.lane_without_text()
            }
        };
        Draft::Valid { phone, lane, measure }
    }

    /// The size of the filled text in `unit` (`None` without one), or the first value missing:
    /// one walk over the row's values, each measured and added to the literal text's size
    /// (measured once). Only a text that cannot be sent is built, to name the character that
    /// stops it where it stands.
    fn size<T: AsRef<str>>(
        &self,
        template: &crate::template::Template,
        vars: &Vars<'_, T>,
        unit: Option<Unit>,
        buffer: &mut String,
    ) -> Result<Option<Result<usize, Unencodable>>, crate::template::MissingVariable> {
        let value_at = |at| vars.at(at);
        let Some(unit) = unit else {
            return template
                .for_each_bound_value(&self.bound, value_at, |_| {})
                .map(|()| None);
        };
        let mut total = self.literal_size;
        template.for_each_bound_value(&self.bound, value_at, |value| {
            if let Some(sum) = &mut total {
                match unit.size(value) {
                    Ok(size) => *sum += size,
                    Err(_) => total = None,
                }
            }
        })?;
        if let Some(total) = total {
            return Ok(Some(Ok(total)));
        }
        let _ = template.render_into(vars, buffer);
        Ok(Some(unit.size(buffer)))
    }

    fn column_of(&self, key: &str) -> String {
        if key == "name" {
            return self.name_column.clone().unwrap_or_else(|| "name".into());
        }
        self.variable_keys
            .iter()
            .position(|k| k == key)
            .map(|i| self.variable_columns[i].clone())
            .unwrap_or_else(|| key.to_string())
    }
}

/// A row's number and, for a row that is not sent, its phone and name as the file has them.
#[derive(Debug, Clone, PartialEq)]
pub struct RowRef {
    pub row: u64,
    pub phone: Option<FieldText>,
    pub name: Option<FieldText>,
}

impl RowRef {
    /// A row that is not sent keeps its phone and name as the file has them.
    fn unsent(row: &mut RawRow) -> RowRef {
        RowRef {
            row: row.row,
            phone: row.phone.take(),
            name: row.name.take(),
        }
    }
}

#[cfg(test)]
mod tests;

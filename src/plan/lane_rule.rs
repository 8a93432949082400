//! Lane rules: how a campaign's kind sends a filled text to its lane (SMS, LMS, notification, brand), and the unit the text is measured in.

use super::classify::RejectReason;
use crate::campaign::{Kind, Lane};
use crate::text::{euc_kr_len, TextLane, Unencodable, ALIMTALK_MAX_CHARS, LMS_MAX_BYTES};

/// How a filled text finds its lane, decided once from the kind.
#[derive(Debug, Clone, Copy)]
pub(super) enum LaneRule {
    /// A notification: at most 1,000 characters, on its one lane.
    Notification(Lane),
    /// The service renders the message (brand): the lane is fixed and the text is not measured here.
    Fixed(Lane),
    /// SMS only or LMS only: at most that lane's EUC-KR bytes.
    Text(TextLane),
    /// SMS up to 90 EUC-KR bytes, else LMS up to 2,000.
    TextBySize,
}

impl LaneRule {
    pub(super) fn for_kind(kind: Kind) -> LaneRule {
        match kind {
            Kind::Alimtalk => LaneRule::Notification(Lane::Alimtalk),
            Kind::GatewayAlimtalk => LaneRule::Notification(Lane::Gateway),
            Kind::Brand => LaneRule::Fixed(Lane::Brand),
            Kind::Sms => LaneRule::Text(TextLane::Sms),
            Kind::Lms => LaneRule::Text(TextLane::Lms),
            Kind::Text => LaneRule::TextBySize,
        }
    }

    /// The lane of a campaign whose text is not known here (a BASIC brand template, an image message).
    pub(super) fn lane_without_text(self) -> Lane {
        match self {
            LaneRule::Notification(lane) | LaneRule::Fixed(lane) => lane,
            LaneRule::Text(lane) => text_lane(lane),
            LaneRule::TextBySize => Lane::Sms,
        }
    }

    /// The unit a filled text is measured in, when it is measured.
    pub(super) fn unit(self) -> Option<Unit> {
        match self {
            LaneRule::Notification(_) => Some(Unit::Chars),
            LaneRule::Fixed(_) => None,
            LaneRule::Text(_) | LaneRule::TextBySize => Some(Unit::EucKrBytes),
        }
    }

    /// The lane of a filled text, given its size in the rule's unit, or why it cannot go.
    pub(super) fn lane(
        self,
        size: impl FnOnce(Unit) -> Result<usize, Unencodable>,
    ) -> Result<Lane, (RejectReason, String)> {
        let unencodable = |error: Unencodable| (RejectReason::Unencodable, error.to_string());
        match self {
            LaneRule::Notification(lane) => {
                let chars = size(Unit::Chars).map_err(unencodable)?;
                if chars > ALIMTALK_MAX_CHARS {
                    return Err((
                        RejectReason::TooLong,
                        format!("{chars} characters, at most {ALIMTALK_MAX_CHARS}"),
                    ));
                }
                Ok(lane)
            }
            LaneRule::Fixed(lane) => Ok(lane),
            LaneRule::Text(lane) => {
                let length = size(Unit::EucKrBytes).map_err(unencodable)?;
                if length > lane.max_bytes() {
                    return Err((
                        RejectReason::TooLong,
                        format!("{length} bytes in EUC-KR, at most {}", lane.max_bytes()),
                    ));
                }
                Ok(text_lane(lane))
            }
            LaneRule::TextBySize => {
                let length = size(Unit::EucKrBytes).map_err(unencodable)?;
                match TextLane::for_bytes(length) {
                    Some(lane) => Ok(text_lane(lane)),
                    None => Err((
                        RejectReason::TooLong,
                        format!("{length} bytes in EUC-KR, over the LMS limit of {LMS_MAX_BYTES}"),
                    )),
                }
            }
        }
    }
}

/// What a lane rule counts. Both add up over joined text, which is what lets a row be measured
/// by its values (see `Template::literal_text`).
#[derive(Debug, Clone, Copy)]
pub(super) enum Unit {
    Chars,
    EucKrBytes,
}

impl Unit {
    #[inline]
    pub(super) fn size(self, text: &str) -> Result<usize, Unencodable> {
        match self {
            Unit::Chars => Ok(text.chars().count()),
            Unit::EucKrBytes => euc_kr_len(text),
        }
    }
}

fn text_lane(lane: TextLane) -> Lane {
    match lane {
        TextLane::Sms => Lane::Sms,
        TextLane::Lms => Lane::Lms,
    }
}

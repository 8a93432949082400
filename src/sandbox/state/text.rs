//! `POST {base_url}/sms` and `/sms/lms`: SMS and LMS measured in EUC-KR bytes.

use super::ledger::Reference;
use super::{send_response, GroupRef, Rejection, SandboxState};
use crate::api::ledger::BillingClass;
use crate::api::standard::{text_status, RecipientResult, SendResponse, TextMessageRequest};
use crate::api::{now_millis, Code, MappingEntry};
use crate::phone;
use crate::sandbox::accounts::Outcome;
use crate::template::Template;
use crate::text::{euc_kr_len, TextLane, LMS_SUBJECT_MAX_BYTES};

impl SandboxState {
    /// `POST {base_url}/sms` and `POST {base_url}/sms/lms`.
    pub fn text_message(
        &mut self,
        group: GroupRef,
        lane: TextLane,
        request: &TextMessageRequest,
    ) -> Result<SendResponse, Rejection> {
        let g = self.group(group);
        if !g.config.sms_services.contains(&request.service) {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_SERVICE",
                format!("service {} is not an SMS service of this group", request.service),
            ));
        }
        g.check_callback_registered(&request.callback_no, Rejection::fail)?;
        if request.numbers.is_empty() {
            return Err(Rejection::fail("SBX_NO_RECIPIENTS", "numbers must not be empty"));
        }
        if let Some(mapping) = &request.mapping {
            if mapping.len() != request.numbers.len() {
                return Err(Rejection::fail(
                    "SBX_MAPPING_LENGTH",
                    format!(
                        "mapping has {} entries for {} numbers",
                        mapping.len(),
                        request.numbers.len()
                    ),
                ));
            }
        }
        if let Some(subject) = &request.subject {
            if lane == TextLane::Sms {
                return Err(Rejection::fail("SBX_SUBJECT_NOT_ALLOWED", "subject is an LMS field"));
            }
            match euc_kr_len(subject) {
                Ok(bytes) if bytes <= LMS_SUBJECT_MAX_BYTES => {}
                Ok(bytes) => {
                    return Err(Rejection::fail(
                        "SBX_SUBJECT_TOO_LONG",
                        format!("subject is {bytes} bytes in EUC-KR, at most {LMS_SUBJECT_MAX_BYTES}"),
                    ))
                }
                Err(error) => return Err(Rejection::fail("SBX_UNENCODABLE", format!("subject: {error}"))),
            }
        }
        let template = Template::compile(&request.message);
        let no_mapping = MappingEntry::default();
        let (class, accepted) = match lane {
            TextLane::Sms => (BillingClass::Sms, text_status::SMS_IN_PROGRESS),
            TextLane::Lms => (BillingClass::Lms, text_status::LMS_IN_PROGRESS),
        };
        let date = now_millis();
        let mut value = Vec::with_capacity(request.numbers.len());
        let mut rendered = String::new();
        for (index, number) in request.numbers.iter().enumerate() {
            g.count_sent(number);
            let uid = g.next_uid();
            let mapping = request.mapping.as_ref().map_or(&no_mapping, |m| &m[index]);
            let ok = match phone::normalize(number) {
                Err(_) => None,
                Ok(digits) => {
                    let fits = template.render_into(mapping, &mut rendered).is_ok()
                        && euc_kr_len(&rendered).is_ok_and(|bytes| bytes <= lane.max_bytes());
                    let refused = g.outcome(&digits).is_some_and(|r| r.outcome == Outcome::SmsError);
                    (fits && !refused).then_some(digits)
                }
            };
            let status = match ok.and_then(|digits| g.charge(class, &digits, Reference::Uid(uid), None)) {
                Some(_) => accepted,
                None => text_status::ERROR,
            };
            value.push(RecipientResult {
                uid,
                date,
                status: status.to_string(),
            });
        }
        let mut response = send_response(None, value);
        response.code = Code::text("200");
        Ok(response)
    }
}

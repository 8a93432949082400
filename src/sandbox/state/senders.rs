//! Gateway sender profiles: verification tokens, issuing a `senderKey`, its status, and the category list.

use super::{random_hex, GroupRef, PendingToken, Rejection, SandboxState, SenderState, TOKEN_REQUESTS_PER_MINUTE};
use crate::api::channel::{CategoryList, SenderIssue, SenderProfile, TokenSent};
use crate::api::ledger::{SentToken, TokenOutbox};
use crate::api::Code;
use crate::phone;
use std::time::{Duration, Instant};

impl SandboxState {
    /// `GET {gateway_url}/channel/sender/token`.
    pub fn sender_token(
        &mut self,
        group: GroupRef,
        phone_number: Option<&str>,
        yellow_id: Option<&str>,
    ) -> Result<(TokenSent, SentToken), Rejection> {
        let g = self.group(group);
        let Some(phone_number) = phone_number.filter(|p| !p.is_empty()) else {
            return Err(Rejection::fail("SBX_PHONE_REQUIRED", "phoneNumber is required"));
        };
        let Some(yellow_id) = yellow_id.filter(|y| !y.is_empty()) else {
            return Err(Rejection {
                http: 400,
                ..Rejection::new(400, "fail", "508", "yellowId is missing: no SMS was sent")
            }
            .with_numeric_code(508));
        };
        if !yellow_id.starts_with('_') {
            return Err(Rejection::fail(
                "SBX_BAD_YELLOW_ID",
                "yellowId is the part of the channel URL that starts with _, not the @ name",
            ));
        }
        let Ok(phone_digits) = phone::normalize(phone_number).map(String::from) else {
            return Err(Rejection::fail("SBX_BAD_PHONE", "phoneNumber is not a mobile number"));
        };
        let now = Instant::now();
        while g
            .token_requests
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
        {
            g.token_requests.pop_front();
        }
        if g.token_requests.len() >= TOKEN_REQUESTS_PER_MINUTE {
            let oldest = *g.token_requests.front().expect("full window");
            let wait = Duration::from_secs(60)
                .saturating_sub(now.duration_since(oldest))
                .as_secs()
                .max(1);
            let mut rejection = Rejection::fail(
                "SBX_TOKEN_RATE_LIMITED",
                "at most 10 verification token requests per minute",
            )
            .with_http(429);
            rejection.retry_after = Some(wait);
            return Err(rejection);
        }
        g.token_requests.push_back(now);
        let token = format!("{:06}", rand::random::<u32>() % 1_000_000);
        g.tokens.insert(
            (phone_digits.clone(), yellow_id.to_string()),
            PendingToken { token: token.clone() },
        );
        let sent = SentToken {
            phone_number: phone_digits,
            yellow_id: yellow_id.to_string(),
            token,
        };
        g.outbox.push(sent.clone());
        Ok((
            TokenSent {
                status: "success".into(),
                message: "verification token sent by SMS".into(),
            },
            sent,
        ))
    }

    /// `POST {gateway_url}/channel/sender`.
    pub fn sender_issue(&mut self, group: GroupRef, request: &SenderIssue) -> Result<SenderProfile, Rejection> {
        let known_category = request
            .category_code
            .as_deref()
            .is_none_or(|code| self.categories.categories.iter().any(|c| c.code == code));
        let g = self.group(group);
        let phone_digits = phone::normalize(&request.phone_number)
            .map(String::from)
            .unwrap_or_default();
        let key = (phone_digits, request.yellow_id.clone());
        match g.tokens.get(&key) {
            Some(pending) if pending.token == request.token && !request.token.is_empty() => {}
            _ => {
                return Err(Rejection::fail(
                    "SBX_BAD_TOKEN",
                    "token does not match the one sent to this phoneNumber and yellowId",
                ))
            }
        }
        if !known_category {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_CATEGORY",
                "categoryCode is not a code of GET /category",
            ));
        }
        g.tokens.remove(&key);
        let sender_key = random_hex(40);
        let status = g.config.new_sender_status.clone();
        g.senders
            .insert(sender_key.clone(), SenderState { status: status.clone() });
        Ok(SenderProfile { sender_key, status })
    }

    /// `GET {gateway_url}/channel/sender`.
    pub fn sender_status(&mut self, group: GroupRef, sender_key: Option<&str>) -> Result<SenderProfile, Rejection> {
        let g = self.group(group);
        let Some(sender_key) = sender_key.filter(|k| !k.is_empty()) else {
            return Err(Rejection::fail("SBX_SENDER_KEY_REQUIRED", "senderKey is required"));
        };
        g.senders
            .get(sender_key)
            .map(|s| SenderProfile {
                sender_key: sender_key.to_string(),
                status: s.status.clone(),
            })
            .ok_or_else(|| Rejection::not_found("no sender profile with this senderKey"))
    }

    /// `GET {gateway_url}/category`.
    pub fn categories(&self) -> CategoryList {
        self.categories.clone()
    }

    /// `GET /_sandbox/tokens`.
    pub fn outbox(&mut self, group: GroupRef) -> TokenOutbox {
        TokenOutbox {
            tokens: self.group(group).outbox.clone(),
        }
    }
}

impl Rejection {
    fn with_numeric_code(mut self, code: i64) -> Rejection {
        self.body.code = Some(Code::Number(code));
        self
    }
}

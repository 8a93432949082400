//! The console's words in English and Korean: `--lang`, else the browser's `Accept-Language`; a missing word is a compile error, not an empty label.

use axum::http::{header, HeaderMap};

mod en;
mod ko;

pub use en::EN;
pub use ko::KO;

pub struct Words {
    pub lang: &'static str,
    pub console: &'static str,
    pub campaigns: &'static str,
    pub new_campaign: &'static str,
    pub statement: &'static str,
    pub opt_outs: &'static str,
    pub audit: &'static str,
    pub users: &'static str,
    pub account: &'static str,
    pub sign_in: &'static str,
    pub sign_out: &'static str,
    pub user_name: &'static str,
    pub password: &'static str,
    pub password_again: &'static str,
    pub set_password: &'static str,
    pub name: &'static str,
    pub kind: &'static str,
    pub state: &'static str,
    pub rows: &'static str,
    pub sent: &'static str,
    pub charged: &'static str,
    pub budget: &'static str,
    pub author: &'static str,
    pub last_change: &'static str,
    pub all: &'static str,
    pub none_yet: &'static str,
    pub campaign_file: &'static str,
    pub recipients_file: &'static str,
    pub suppression_file: &'static str,
    pub settings: &'static str,
    pub columns: &'static str,
    pub phone_column: &'static str,
    pub name_column: &'static str,
    pub sheet: &'static str,
    pub save: &'static str,
    pub create: &'static str,
    pub edit: &'static str,
    pub check: &'static str,
    pub run_check: &'static str,
    pub test_send: &'static str,
    pub test_numbers: &'static str,
    pub send_test: &'static str,
    pub submit: &'static str,
    pub approve: &'static str,
    pub start: &'static str,
    pub start_at: &'static str,
    pub type_amount: &'static str,
    pub live: &'static str,
    pub results: &'static str,
    pub pause: &'static str,
    pub resume: &'static str,
    pub stop: &'static str,
    pub change_rate: &'static str,
    pub rate: &'static str,
    pub accepted: &'static str,
    pub not_accepted: &'static str,
    pub uncertain: &'static str,
    pub in_flight: &'static str,
    pub pending: &'static str,
    pub time_left: &'static str,
    pub last_errors: &'static str,
    pub refused_file: &'static str,
    pub accounting: &'static str,
    pub rejected_rows: &'static str,
    pub row: &'static str,
    pub column: &'static str,
    pub reason: &'static str,
    pub detail: &'static str,
    pub download: &'static str,
    pub previews: &'static str,
    pub estimate: &'static str,
    pub worst_case: &'static str,
    pub warnings: &'static str,
    pub quiet_hours: &'static str,
    pub next_page: &'static str,
    pub previous_page: &'static str,
    pub downloads: &'static str,
    pub retry_failed: &'static str,
    pub role: &'static str,
    pub disabled: &'static str,
    pub add_user: &'static str,
    pub change: &'static str,
    pub when: &'static str,
    pub who: &'static str,
    pub what: &'static str,
    pub resend_uncertain: &'static str,
    pub type_uncertain: &'static str,
    pub month: &'static str,
    pub ledger_file: &'static str,
    pub numbers: &'static str,
    pub back: &'static str,
    pub approved_by: &'static str,
    pub submitted_by: &'static str,
    pub audit_of_campaign: &'static str,
    pub suppressed_rows: &'static str,
    pub list_of: &'static str,
    pub ledger: &'static str,
    pub class: &'static str,
    pub count: &'static str,
    pub gateway_results: &'static str,
    pub gateway_intro: &'static str,
    pub collect_now: &'static str,
    pub stop_collecting: &'static str,
    pub collecting: &'static str,
    pub next_read_in: &'static str,
    pub statement_intro: &'static str,
    pub make_statement: &'static str,
    pub billing_class: &'static str,
    pub refunded: &'static str,
    pub net: &'static str,
    pub day: &'static str,
    pub runs: &'static str,
    pub ledger_balanced: &'static str,
    pub ledger_mismatches: &'static str,
    pub still_sending: &'static str,
    pub not_complete: &'static str,
    /// A campaign whose run an error stopped while it sent.
    pub run_failed: &'static str,
    pub opt_outs_intro: &'static str,
    pub numbers_in_list: &'static str,
    pub add_numbers: &'static str,
    pub remove_numbers: &'static str,
    pub upload_list: &'static str,
    pub one_per_line: &'static str,
    pub opted_out: &'static str,
    pub opt_outs_not_applied: &'static str,
    pub connections: &'static str,
    pub connections_intro: &'static str,
    pub connection: &'static str,
    pub endpoint: &'static str,
    pub prices: &'static str,
    pub used_by: &'static str,
    pub quiet_hours_ack: &'static str,
    pub quiet_hours_relaxed: &'static str,
    pub quiet_hours_now: &'static str,
    pub start_at_instead: &'static str,
    pub copy_campaign: &'static str,
    pub copy_suffix: &'static str,
    pub show: &'static str,
    pub not_accepted_list: &'static str,
}

/// The words for a request: the fixed language, else the browser's first choice of the two.
impl Words {
    /// The language of the report's own words (status labels, the summary) on this page.
    pub fn report_lang(&self) -> crate::report::Lang {
        if self.lang == "ko" {
            crate::report::Lang::Ko
        } else {
            crate::report::Lang::En
        }
    }
}

pub fn for_request(fixed: Option<&'static Words>, headers: &HeaderMap) -> &'static Words {
    if let Some(words) = fixed {
        return words;
    }
    let accept = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    for choice in accept.split(',') {
        let tag = choice.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        if tag.starts_with("ko") {
            return &KO;
        }
        if tag.starts_with("en") {
            return &EN;
        }
    }
    &EN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_browsers_first_known_language_wins() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_LANGUAGE,
            "fr;q=1, ko-KR;q=0.9, en;q=0.8".parse().unwrap(),
        );
        assert_eq!(for_request(None, &headers).lang, "ko");
        headers.insert(header::ACCEPT_LANGUAGE, "en-US,ko;q=0.5".parse().unwrap());
        assert_eq!(for_request(None, &headers).lang, "en");
        assert_eq!(for_request(Some(&KO), &headers).lang, "ko");
        assert_eq!(for_request(None, &HeaderMap::new()).lang, "en");
    }
}

//! The console's words in English and Korean: `--lang`, else the browser's `Accept-Language`; a missing word is a compile error, not an empty label.
//!
//! Past 600 lines on purpose: `Words` declares every word of every page in one struct, so that
//! `en.rs` and `ko.rs` must each give all of them; pages' helpers that pick among words follow it.

use axum::http::{header, HeaderMap};

pub mod audit;
mod en;
pub mod ends;
pub mod figures;
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
    pub quiet_choice_enforce: &'static str,
    pub quiet_choice_warn: &'static str,
    pub quiet_choice_off: &'static str,
    pub field_service: &'static str,
    pub field_callback_no: &'static str,
    pub field_subject: &'static str,
    pub field_advertising: &'static str,
    pub field_template: &'static str,
    pub field_alter: &'static str,
    pub field_alter_message: &'static str,
    pub field_channel_id: &'static str,
    pub field_text_template: &'static str,
    pub field_budget: &'static str,
    pub field_messages_per_second: &'static str,
    pub field_quiet_hours: &'static str,
    pub field_text: &'static str,
    pub field_sender_key: &'static str,
    pub field_send_type: &'static str,
    pub field_chat_bubble_type: &'static str,
    pub field_targeting: &'static str,
    pub field_image: &'static str,
    pub field_header: &'static str,
    pub field_additional_content: &'static str,
    pub refuse_files_changed: &'static str,
    pub refuse_own_approval: &'static str,
    pub refuse_role: &'static str,
    pub refuse_webhook_url: &'static str,
    pub refuse_webhook_events: &'static str,
    pub refuse_webhook_progress: &'static str,
    pub refuse_cursor: &'static str,
    pub refuse_metrics_scope: &'static str,
    pub refuse_request: &'static str,
    pub refuse_not_started: &'static str,
    pub refuse_idempotency_key: &'static str,
    pub refuse_idempotency_reused: &'static str,
    pub refuse_not_running: &'static str,
    pub refuse_start_quiet_hours: &'static str,
    pub refuse_token_name: &'static str,
    pub refuse_token_days: &'static str,
    pub refuse_no_approval: &'static str,
    pub refuse_changed_since_approval: &'static str,
    pub refuse_amount: &'static str,
    pub refuse_recipients_typed: &'static str,
    pub refuse_state: &'static str,
    pub refuse_step_edit: &'static str,
    pub refuse_step_check: &'static str,
    pub refuse_step_submit: &'static str,
    pub refuse_step_approve: &'static str,
    pub refuse_step_start: &'static str,
    pub refuse_step_resume: &'static str,
    pub refuse_sending: &'static str,
    pub refuse_collecting: &'static str,
    pub refuse_collecting_resume: &'static str,
    pub refuse_uncertain_typed: &'static str,
    pub refuse_retry_needs_end: &'static str,
    pub refuse_nothing_to_retry: &'static str,
    pub refuse_no_collection: &'static str,
    pub refuse_rate: &'static str,
    pub refuse_passwords_differ: &'static str,
    pub refuse_password_short: &'static str,
    pub refuse_link_used: &'static str,
    pub refuse_password_wrong: &'static str,
    pub refuse_user_name: &'static str,
    pub refuse_user_exists: &'static str,
    pub refuse_own_administration: &'static str,
    pub refuse_file_empty: &'static str,
    pub refuse_file_kind: &'static str,
    pub refuse_file_header_only: &'static str,
    pub refuse_not_mobile: &'static str,
    pub refuse_no_number: &'static str,
    pub refuse_choose_file: &'static str,
    pub refuse_no_mobile_in_file: &'static str,
    pub refuse_choose_ledger: &'static str,
    pub refuse_month_left: &'static str,
    pub month_title: &'static str,
    pub month_intro: &'static str,
    pub month_limit: &'static str,
    pub month_charged: &'static str,
    pub month_reserved: &'static str,
    pub month_left: &'static str,
    pub month_limit_field: &'static str,
    pub month_thresholds_field: &'static str,
    pub month_reached_before: &'static str,
    pub month_reached_after: &'static str,
    pub month_link: &'static str,
    pub refuse_month_limit: &'static str,
    pub refuse_month_thresholds: &'static str,
    pub cap_title: &'static str,
    pub cap_intro: &'static str,
    pub cap_off: &'static str,
    pub cap_rule: &'static str,
    pub cap_times_field: &'static str,
    pub cap_days_field: &'static str,
    pub cap_save: &'static str,
    pub refuse_cap: &'static str,
    pub retention_title: &'static str,
    pub retention_intro: &'static str,
    pub retention_kept: &'static str,
    pub retention_rule: &'static str,
    pub retention_field: &'static str,
    pub retention_save: &'static str,
    pub refuse_retention: &'static str,
    pub purged_note: &'static str,
    pub notice_line: &'static str,
    pub notice_workspace: &'static str,
    pub notice_figures: &'static str,
    pub notice_approval_requested: &'static str,
    pub notice_approved: &'static str,
    pub notice_started: &'static str,
    pub notice_paused: &'static str,
    pub notice_month_threshold: &'static str,
    pub notice_finished: &'static str,
    pub notice_interrupted: &'static str,
    pub notifications: &'static str,
    pub notifications_intro: &'static str,
    pub notification_channels: &'static str,
    pub notification_none: &'static str,
    pub notification_address: &'static str,
    pub notification_events: &'static str,
    pub notification_event: &'static str,
    pub notification_remove: &'static str,
    pub notification_add: &'static str,
    pub notification_kind: &'static str,
    pub notification_webhook: &'static str,
    pub notification_email: &'static str,
    pub notification_url: &'static str,
    pub notification_host: &'static str,
    pub notification_port: &'static str,
    pub notification_security: &'static str,
    pub notification_plain: &'static str,
    pub notification_from: &'static str,
    pub notification_to: &'static str,
    pub notification_user: &'static str,
    pub notification_password_env: &'static str,
    pub notification_log: &'static str,
    pub notification_log_empty: &'static str,
    pub notification_attempts: &'static str,
    pub notification_result: &'static str,
    pub notification_delivered: &'static str,
    pub refuse_notice_no_event: &'static str,
    pub refuse_notice_url: &'static str,
    pub refuse_notice_email: &'static str,
    pub refuse_notice_kind: &'static str,
    pub warning_template_unknown: &'static str,
    pub warning_no_advertising_mark: &'static str,
    pub warning_no_opt_out_line: &'static str,
    pub test_answered: &'static str,
    pub test_not_sent: &'static str,
    pub test_number: &'static str,
    pub test_answer: &'static str,
    pub test_status: &'static str,
    pub test_taken: &'static str,
    pub test_taken_yes: &'static str,
    pub test_taken_no: &'static str,
    pub statement_total: &'static str,
    pub statement_unsettled: &'static str,
    pub not_delivered_list: &'static str,
    pub error_refused: &'static str,
    pub password_changed: &'static str,
    pub password_current: &'static str,
    pub password_new: &'static str,
    pub webhooks: &'static str,
    pub webhooks_intro: &'static str,
    pub webhook_endpoints: &'static str,
    pub webhook_add: &'static str,
    pub webhook_progress_every: &'static str,
    pub webhook_secret_once: &'static str,
    pub webhook_message: &'static str,
    pub webhook_redeliver: &'static str,
    pub api_tokens: &'static str,
    pub api_tokens_lead: &'static str,
    pub token_name: &'static str,
    pub token_days: &'static str,
    pub token_metrics: &'static str,
    pub make_token: &'static str,
    pub token_made: &'static str,
    pub token_created: &'static str,
    pub token_expires: &'static str,
    pub token_last_used: &'static str,
    pub token_never: &'static str,
    pub token_revoke: &'static str,
    pub token_user: &'static str,
    pub api_unauthorized: &'static str,
    pub error_unauthorized: &'static str,
    pub error_refused_lead: &'static str,
    pub error_forbidden: &'static str,
    pub error_forbidden_lead: &'static str,
    pub error_csrf_lead: &'static str,
    pub error_wrong_host_lead: &'static str,
    pub error_not_found: &'static str,
    pub error_not_found_lead: &'static str,
    pub error_busy: &'static str,
    pub error_busy_lead: &'static str,
    pub error_internal: &'static str,
    pub error_internal_lead: &'static str,
    pub error_id: &'static str,
    pub error_back: &'static str,
    pub valid: &'static str,
    pub rejected: &'static str,
    pub duplicates: &'static str,
    pub suppressed: &'static str,
    pub capped: &'static str,
    pub accounting_rows: &'static str,
    pub wrong_password: &'static str,
    pub session_ending: &'static str,
    pub draft_restored: &'static str,
    pub sign_in_to_continue: &'static str,
    pub one_time_link: &'static str,
    pub no_password_yet: &'static str,
    pub new_link: &'static str,
    pub chunks: &'static str,
    pub encoding: &'static str,
    pub suppression_list_of: &'static str,
    pub files_changed_since_check: &'static str,
    pub over_budget: &'static str,
    pub seconds: &'static str,
    pub state_draft: &'static str,
    pub state_checked: &'static str,
    pub state_awaiting_approval: &'static str,
    pub state_approved: &'static str,
    pub state_sending: &'static str,
    pub state_paused: &'static str,
    pub state_scheduled: &'static str,
    pub state_done: &'static str,
    pub state_stopped: &'static str,
    pub state_incomplete: &'static str,
    pub state_failed: &'static str,
    pub state_interrupted: &'static str,
    pub role_viewer: &'static str,
    pub role_editor: &'static str,
    pub role_approver: &'static str,
    pub role_admin: &'static str,
    pub unknown: &'static str,
    // Point 5, the live view: its progress, answers, rate chart, phases, errors and end texts
    // (`{n}`, `{t}`… are filled in by src/console/runner.rs and live_chart.rs).
    pub live_progress: &'static str,
    pub live_outcomes: &'static str,
    pub live_rate_chart: &'static str,
    pub live_chart_waiting: &'static str,
    pub live_chart_title: &'static str,
    pub live_start: &'static str,
    pub live_lane: &'static str,
    pub live_valid: &'static str,
    pub live_sending: &'static str,
    pub live_paused: &'static str,
    pub live_scheduled: &'static str,
    pub live_stopping: &'static str,
    pub live_finished: &'static str,
    pub live_in: &'static str,
    pub live_s: &'static str,
    pub live_min_s: &'static str,
    pub live_h_min: &'static str,
    pub live_d_h: &'static str,
    pub live_starts_at: &'static str,
    pub live_paused_failing: &'static str,
    pub live_paused_quiet_hours: &'static str,
    pub live_per_second: &'static str,
    pub live_at_once: &'static str,
    pub live_as_answered: &'static str,
    pub live_err_not_accepted: &'static str,
    pub live_err_uncertain: &'static str,
    pub live_err_budget: &'static str,
    pub live_no_errors: &'static str,
    pub live_ended: &'static str,
    pub live_already_ended: &'static str,
    pub live_see_results: &'static str,
    pub live_end_complete: &'static str,
    pub live_end_stopped: &'static str,
    pub live_end_budget: &'static str,
    pub live_err_month_limit: &'static str,
    pub live_end_month_limit: &'static str,
    pub live_end_failed: &'static str,
    pub live_end_error: &'static str,
    pub live_end_not_started: &'static str,
    pub live_end_interrupted: &'static str,
    // Issue 27, points 3 and 4 (composer): the new and edit forms.
    pub composer_placeholders: &'static str,
    pub composer_placeholders_intro: &'static str,
    pub composer_filled_from: &'static str,
    pub composer_no_placeholders: &'static str,
    pub composer_choose_column: &'static str,
    pub composer_not_in_file: &'static str,
    pub composer_type_column: &'static str,
    pub composer_preview: &'static str,
    pub composer_preview_no_file: &'static str,
    pub composer_preview_unmapped: &'static str,
    pub composer_preview_size: &'static str,
    pub composer_preview_unencodable: &'static str,
    pub composer_size_chars: &'static str,
    pub composer_size_chars_limit: &'static str,
    pub composer_size_bytes_limit: &'static str,
    pub composer_size_bytes_lane: &'static str,
    pub composer_lane_up_to: &'static str,
    pub composer_size_unencodable: &'static str,
    pub composer_advanced: &'static str,
    pub composer_advanced_label: &'static str,
    pub composer_remove_file: &'static str,
    pub composer_file_current: &'static str,
    pub composer_file_replace: &'static str,
    pub composer_error_title: &'static str,
    pub composer_files_again: &'static str,
    pub composer_refused_settings: &'static str,
    pub composer_refused_file: &'static str,
    pub composer_unknown_column: &'static str,
    pub composer_bad_placeholder: &'static str,
    pub composer_not_a_number: &'static str,
    pub composer_not_a_choice: &'static str,
    pub composer_in_both: &'static str,
    pub composer_choose_kind: &'static str,
    pub composer_campaign_file_refused: &'static str,
    pub composer_kind_hint: &'static str,
    // Point 6, approval as a decision.
    pub approval_from: &'static str,
    pub approval_first: &'static str,
    pub approval_longest: &'static str,
    pub approval_chars: &'static str,
    pub approval_bytes: &'static str,
    pub approval_not_encodable: &'static str,
    pub approval_filled_by_service: &'static str,
    pub approval_fallback: &'static str,
    pub kakao_channel: &'static str,
    pub approval_billed_as: &'static str,
    pub approval_cost: &'static str,
    pub approval_left: &'static str,
    pub approval_no_budget: &'static str,
    pub approval_over_budget: &'static str,
    pub quiet_enforced: &'static str,
    pub quiet_warn: &'static str,
    pub quiet_off: &'static str,
    pub quiet_not_advertising: &'static str,
    pub quiet_window: &'static str,
    pub approval_opt_outs: &'static str,
    pub approval_opted_out: &'static str,
    pub approval_list_size: &'static str,
    pub approval_changes: &'static str,
    pub approval_first_time: &'static str,
    pub approval_before: &'static str,
    pub approval_voided: &'static str,
    pub approval_nothing_changed: &'static str,
    pub approval_settings_lines: &'static str,
    pub approval_text_lines: &'static str,
    pub approval_files: &'static str,
    pub approval_was: &'static str,
    pub approval_now: &'static str,
    pub no_file: &'static str,
    pub message_text_file: &'static str,
    pub approval_by_approver: &'static str,
    pub approval_not_own: &'static str,
    pub approval_advanced: &'static str,
}

/// A word with its `{name}` holes filled.
pub fn fill(word: &str, values: &[(&str, &str)]) -> String {
    let mut text = word.to_string();
    for (name, value) in values {
        text = text.replace(&format!("{{{name}}}"), value);
    }
    text
}

/// The words for a request: the fixed language, else the browser's first choice of the two.
impl Words {
    /// A campaign's state (`awaiting_approval`, as the store and the CSS class name it) in words;
    /// an unknown one as written.
    pub fn state(&self, code: &str) -> &'static str {
        match code {
            "draft" => self.state_draft,
            "checked" => self.state_checked,
            "awaiting_approval" => self.state_awaiting_approval,
            "approved" => self.state_approved,
            "sending" => self.state_sending,
            "paused" => self.state_paused,
            "scheduled" => self.state_scheduled,
            "done" => self.state_done,
            "stopped" => self.state_stopped,
            "incomplete" => self.state_incomplete,
            "failed" => self.state_failed,
            "interrupted" => self.state_interrupted,
            _ => self.unknown,
        }
    }

    /// An action of the audit log in words (see [`audit::action`]).
    pub fn audit_action(&self, action: &str) -> String {
        audit::action(self, action)
    }

    /// A detail of the audit log in words (see [`audit::detail`]).
    pub fn audit_detail(&self, detail: &str) -> String {
        audit::detail(self, detail)
    }

    /// How a run ended, as its record keeps it, in words (see the live view's `end_words`).
    pub fn run_end(&self, end: &str) -> String {
        ends::end_words(self, end)
    }

    /// When the run's personal data was destroyed, in Korean wall time.
    pub fn purged(&self, at: &str) -> String {
        fill(self.purged_note, &[("at", &crate::campaign::quiet::wall_time(at))])
    }

    /// A person's role (`approver`) in words.
    pub fn role(&self, code: &str) -> &'static str {
        match code {
            "viewer" => self.role_viewer,
            "editor" => self.role_editor,
            "approver" => self.role_approver,
            "admin" => self.role_admin,
            _ => self.unknown,
        }
    }

    /// A campaign kind by its name in the page's language (`알림톡`, `단문 문자(SMS)`): the
    /// report's names, so that a kind reads the same on every page and in the summary.
    pub fn kind(&self, kind: &str) -> String {
        crate::report::kind_label(kind, self.report_lang())
    }

    /// A lane (`sms`, `alimtalk`…) by its name in the page's language; an unknown one as given.
    pub fn lane<'a>(&self, lane: &'a str) -> &'a str {
        crate::campaign::Lane::parse(lane).map_or(lane, |lane| crate::report::lane_label(lane, self.report_lang()))
    }

    /// A billing class (`ALIMTALK`, `FALLBACK_SMS`…) by its name in the page's language.
    pub fn class<'a>(&self, class: &'a str) -> &'a str {
        crate::api::ledger::BillingClass::parse(class)
            .map_or(class, |class| crate::report::class_label(class, self.report_lang()))
    }

    /// A setting's choice on the form in the page's words (the quiet hours' modes); the service's
    /// own codes (`FREE`, `TEXT`…) as they are.
    pub fn choice<'a>(&self, value: &'a str) -> &'a str {
        match value {
            "enforce" => self.quiet_choice_enforce,
            "warn" => self.quiet_choice_warn,
            "off" => self.quiet_choice_off,
            other => other,
        }
    }

    /// A warning of the check in the page's words; one the console does not know as given.
    pub fn warning<'a>(&self, text: &'a str) -> &'a str {
        use crate::plan::AdvertisingWarning;
        match AdvertisingWarning::of_text(text) {
            Some(AdvertisingWarning::TemplateUnknown) => self.warning_template_unknown,
            Some(AdvertisingWarning::NoAdvertisingMark) => self.warning_no_advertising_mark,
            Some(AdvertisingWarning::NoOptOutLine) => self.warning_no_opt_out_line,
            None => text,
        }
    }

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

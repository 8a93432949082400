//! The audit log's actions and its usual details in the page's language: the log keeps what happened in the console's own terms (English, for tools that read it); a page says it in its language.

use super::Words;

/// An action of the log (`approved`, `connections changed`) in words; an unknown one as kept. The
/// English page shows the log's own words, as tools that read the log see them.
pub fn action(w: &Words, action: &str) -> String {
    if w.lang == "en" {
        return action.to_string();
    }
    let words = match action {
        "created" => ["created", "만듦"],
        "copied" => ["copied", "복사함"],
        "edited" => ["edited", "수정함"],
        "checked" | "check" => ["checked", "검사함"],
        "submitted" => ["submitted for approval", "승인 요청함"],
        "approved" => ["approved", "승인함"],
        "started" => ["started", "발송 시작함"],
        "resumed" => ["resumed", "이어서 보냄"],
        "pause" => ["paused", "일시 정지함"],
        "resume" => ["resumed", "다시 시작함"],
        "stop" => ["stopped", "중지함"],
        "rate" => ["changed the rate", "속도 바꿈"],
        "voided" => ["approval voided", "승인 무효"],
        "test send" => ["test send", "테스트 발송"],
        "run ended" => ["run ended", "발송 끝남"],
        "interrupted" => ["interrupted", "중단됨"],
        "collect" => ["collecting results", "결과 수집 시작"],
        "collected" => ["results collected", "결과 수집함"],
        "stopped collecting" => ["stopped collecting", "결과 수집 멈춤"],
        "retry failed" => ["retry of the failed", "실패 건 재발송"],
        "downloaded" => ["downloaded", "내려받음"],
        "statement" => ["statement made", "명세서 만듦"],
        "opt-outs added" => ["opt-outs added", "수신 거부 추가"],
        "opt-outs removed" => ["opt-outs removed", "수신 거부 삭제"],
        "connections changed" => ["connections changed", "연결 설정 바꿈"],
        "month limit" => ["set the monthly limit", "월 한도 설정"],
        "frequency cap" => ["set the frequency cap", "발송 빈도 제한 설정"],
        "retention" => ["set how long personal data is kept", "개인정보 보관 기간 설정"],
        "purged" => ["personal data destroyed", "개인정보 파기"],
        "notification channel added" => ["added a notification channel", "알림 채널 추가"],
        "notification channel removed" => ["removed a notification channel", "알림 채널 삭제"],
        "month threshold" => ["the month reached a threshold of its limit", "월 한도 알림 기준 도달"],
        "signed in" => ["signed in", "로그인"],
        "set password" => ["set a password", "비밀번호 설정"],
        "changed password" => ["changed the password", "비밀번호 바꿈"],
        "added user" => ["added a user", "사용자 추가"],
        "changed user" => ["changed a user", "사용자 바꿈"],
        "new sign-in link" => ["new sign-in link", "새 로그인 링크"],
        "first start" => ["first start", "처음 시작"],
        "demo" => ["demo", "데모"],
        "upload" => ["uploaded", "올림"],
        _ => return action.to_string(),
    };
    pick(w, words).to_string()
}

/// A detail of the log in words: the usual ones said again, the accounting line with its figures,
/// anything else (file names, refusals, numbers) as kept.
pub fn detail(w: &Words, detail: &str) -> String {
    let words = match detail {
        "its connection changed" => ["its connection changed", "연결 설정이 바뀜"],
        "the files changed since the check" => ["the files changed since the check", "검사 후 파일이 바뀜"],
        "the opt-out list changed since the check" => [
            "the opt-out list changed since the check",
            "검사 후 수신 거부 목록이 바뀜",
        ],
        "through a sign-in link" => ["through a sign-in link", "로그인 링크로"],
        "made the user admin" => ["made the user admin", "관리자 사용자를 만듦"],
        "sample campaign" => ["sample campaign", "예시 캠페인"],
        _ => return accounting(w, detail).unwrap_or_else(|| detail.to_string()),
    };
    pick(w, words).to_string()
}

/// The accounting line as the log keeps it (in English, as [`super::figures::accounting_line`] writes it) said
/// again in `w`'s words.
fn accounting(w: &Words, detail: &str) -> Option<String> {
    let en = &super::EN;
    let mut figures = [0u64; 6];
    let mut rest = detail;
    let words = [
        en.accounting_rows,
        en.valid,
        en.rejected,
        en.duplicates,
        en.suppressed,
        en.capped,
    ];
    for (index, word) in words.into_iter().enumerate() {
        rest = rest.strip_prefix(word)?.strip_prefix(' ')?;
        // A figure holds no space: it ends at the next one, or the line does.
        let end = rest.find(' ').unwrap_or(rest.len());
        figures[index] = rest[..end].replace(',', "").parse().ok()?;
        rest = &rest[end..];
        if rest.is_empty() {
            // `capped` is written only when it holds rows.
            return (index >= 4).then(|| super::figures::accounting_line(w, figures));
        }
        rest = rest.strip_prefix(if index == 0 { " = " } else { " + " })?;
    }
    None
}

fn pick(w: &Words, [en, ko]: [&'static str; 2]) -> &'static str {
    if w.lang == "ko" {
        ko
    } else {
        en
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::words::figures::accounting_line;
    use crate::console::words::{EN, KO};
    use proptest::prelude::*;

    #[test]
    fn the_accounting_line_the_log_keeps_reads_in_korean() {
        let kept = accounting_line(&EN, [1_499, 1_484, 10, 3, 2, 0]);
        assert_eq!(
            kept,
            "rows 1,499 = valid 1,484 + rejected 10 + duplicates 3 + suppressed 2"
        );
        assert_eq!(detail(&KO, &kept), "행 1,499 = 유효 1,484 + 거부 10 + 중복 3 + 제외 2");
        assert_eq!(detail(&EN, &kept), kept);
        let capped = accounting_line(&EN, [1_499, 1_480, 10, 3, 2, 4]);
        assert_eq!(
            capped,
            "rows 1,499 = valid 1,480 + rejected 10 + duplicates 3 + suppressed 2 + capped 4"
        );
        assert_eq!(
            detail(&KO, &capped),
            "행 1,499 = 유효 1,480 + 거부 10 + 중복 3 + 제외 2 + 빈도 제한 4"
        );
    }

    proptest! {
        #[test]
        fn any_accounting_line_reads_back_with_its_figures(figures in proptest::array::uniform6(0u64..10_000_000)) {
            let kept = accounting_line(&EN, figures);
            prop_assert_eq!(detail(&KO, &kept), accounting_line(&KO, figures));
        }

        #[test]
        fn any_other_detail_is_kept_as_written(text in "\\PC{0,40}") {
            let said = detail(&KO, &text);
            prop_assert!(said == text || accounting(&KO, &text).is_some() || !said.is_ascii());
        }
    }
}

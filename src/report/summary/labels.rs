//! The words of summary.html in English and Korean, side by side in one table, and how numbers, won, times and durations are written.

use crate::api::ledger::BillingClass;
use crate::campaign::Lane;
use chrono::{DateTime, FixedOffset};

/// The language of summary.html (`report --lang`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    #[default]
    En,
    Ko,
}

impl Lang {
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ko => "ko",
        }
    }

    fn pick(self, [en, ko]: [&'static str; 2]) -> &'static str {
        match self {
            Lang::En => en,
            Lang::Ko => ko,
        }
    }
}

/// A fixed text of the page.
#[derive(Debug, Clone, Copy)]
pub enum Label {
    DeliveryReport,
    Kind,
    Complete,
    Incomplete,
    FirstSend,
    LastSend,
    Duration,
    NothingSent,
    Funnel,
    Stage,
    Rows,
    ShareOfRows,
    InputRows,
    Valid,
    Sent,
    Accepted,
    Delivered,
    NotSent,
    Rejected,
    Duplicates,
    Suppressed,
    Capped,
    FallbackSent,
    Uncertain,
    Pending,
    NotAccepted,
    Recipients,
    SentShort,
    AcceptedShort,
    DeliveredShort,
    Fallback,
    ByLane,
    Lane,
    Acceptance,
    AcceptanceNote,
    Status,
    FinalResults,
    FinalNoteStandard,
    FinalNoteGateway,
    FinalResult,
    NoFinalResults,
    Charges,
    Class,
    Messages,
    Charged,
    Refunded,
    Provisional,
    Disputed,
    Net,
    Total,
    NoPrices,
    SentOverTime,
    ChartCaption,
    UncertainNotShown,
    UntimedNotShown,
    RejectsByReason,
    Reason,
    NoRejects,
    Footer,
}

impl Label {
    pub fn text(self, lang: Lang) -> &'static str {
        lang.pick(match self {
            Label::DeliveryReport => ["Delivery report", "발송 결과 보고서"],
            Label::Kind => ["Kind", "유형"],
            Label::Complete => ["Complete", "완료"],
            Label::Incomplete => ["Incomplete", "미완료"],
            Label::FirstSend => ["First send", "첫 발송"],
            Label::LastSend => ["Last send", "마지막 발송"],
            Label::Duration => ["Duration", "소요 시간"],
            Label::NothingSent => ["Nothing has been sent yet.", "아직 발송된 메시지가 없습니다."],
            Label::Funnel => ["Delivery funnel", "발송 단계별 현황"],
            Label::Stage => ["Stage", "단계"],
            Label::Rows => ["Rows", "건수"],
            Label::ShareOfRows => ["Share of input", "입력 대비"],
            Label::InputRows => ["Input rows", "입력 행"],
            Label::Valid => ["Valid recipients", "유효 수신자"],
            Label::Sent => ["Sent (answered)", "발송(응답 받음)"],
            Label::Accepted => ["Accepted by the service", "접수 성공"],
            Label::Delivered => ["Delivered (final result OK)", "최종 성공"],
            Label::NotSent => ["Not sent", "발송 제외"],
            Label::Rejected => ["rejected", "거부"],
            Label::Duplicates => ["duplicates", "중복"],
            Label::Suppressed => ["suppressed", "수신 제외"],
            Label::Capped => ["held back by the frequency cap", "발송 빈도 제한"],
            Label::FallbackSent => ["Fallback SMS/LMS sent", "대체 문자 발송"],
            Label::Uncertain => ["Uncertain", "불확실"],
            Label::Pending => ["Not sent yet", "발송 대기"],
            Label::NotAccepted => ["Not accepted", "접수 실패"],
            Label::Recipients => ["Recipients", "수신자"],
            Label::SentShort => ["Sent", "발송"],
            Label::AcceptedShort => ["Accepted", "접수"],
            Label::DeliveredShort => ["Delivered", "최종 성공"],
            Label::Fallback => ["Fallback", "대체 발송"],
            Label::ByLane => ["By lane", "발송 경로별"],
            Label::Lane => ["Lane", "경로"],
            Label::Acceptance => ["Acceptance", "접수 결과"],
            Label::AcceptanceNote => [
                "The service's answer to each recipient when the request was sent.",
                "요청을 보냈을 때 서비스가 수신자별로 응답한 결과입니다.",
            ],
            Label::Status => ["Status", "상태"],
            Label::FinalResults => ["Final results", "최종 결과"],
            Label::FinalNoteStandard => [
                "On the standard deployment the send response is the final record.",
                "표준 배포에서는 발송 응답이 최종 결과입니다.",
            ],
            Label::FinalNoteGateway => [
                "The gateway's delivery result for each accepted recipient, as collected.",
                "게이트웨이가 접수한 수신자별 최종 전달 결과(수집된 기준)입니다.",
            ],
            Label::FinalResult => ["Result", "결과"],
            Label::NoFinalResults => ["No final result yet.", "아직 최종 결과가 없습니다."],
            Label::Charges => ["Charges", "요금"],
            Label::Class => ["Billing class", "과금 유형"],
            Label::Messages => ["Messages charged", "과금 건수"],
            Label::Charged => ["Charged", "청구"],
            Label::Refunded => ["Refunded", "환불"],
            Label::Provisional => ["Provisional", "잠정"],
            Label::Disputed => ["Disputed", "이의"],
            Label::Net => ["Net", "순 청구액"],
            Label::Total => ["Total", "합계"],
            Label::NoPrices => [
                "Amounts are ₩0: the campaign gives no [prices].",
                "캠페인에 [prices]가 없어 금액이 ₩0으로 표시됩니다.",
            ],
            Label::SentOverTime => ["Recipients sent over time", "시간대별 발송 수"],
            Label::ChartCaption => [
                "{n} recipients sent; one bar = {width} (KST).",
                "총 {n}건 발송, 막대 하나 = {width} (KST).",
            ],
            Label::UncertainNotShown => [
                "rows of uncertain requests have no send time and are not shown.",
                "건은 응답을 받지 못한(불확실) 요청이라 발송 시각이 없어 표시되지 않습니다.",
            ],
            Label::UntimedNotShown => [
                "answered rows carry no usable send time and are not shown.",
                "건은 응답에 유효한 발송 시각이 없어 표시되지 않습니다.",
            ],
            Label::RejectsByReason => ["Rejected rows by reason", "거부 사유별 행"],
            Label::Reason => ["Reason", "사유"],
            Label::NoRejects => ["No row was rejected.", "거부된 행이 없습니다."],
            Label::Footer => [
                "Times in Asia/Seoul (KST). Amounts in won (₩). Written by msgbatch",
                "시각은 한국 표준시(KST), 금액은 원(₩) 기준입니다. 작성: msgbatch",
            ],
        })
    }
}

/// A campaign kind (`alimtalk`, …, as the checkpoint names it) in words; an unknown one as written.
pub fn kind(kind: &str, lang: Lang) -> String {
    let words = match kind {
        "alimtalk" => ["Notification message (alimTalk)", "알림톡"],
        "brand" => ["Brand message", "브랜드 메시지"],
        "sms" => ["SMS", "단문 문자(SMS)"],
        "lms" => ["LMS", "장문 문자(LMS)"],
        "text" => ["SMS or LMS by length", "길이별 SMS/LMS"],
        "gateway-alimtalk" => ["Notification message via the gateway", "게이트웨이 알림톡"],
        other => return other.to_string(),
    };
    lang.pick(words).to_string()
}

pub fn lane(lane: Lane, lang: Lang) -> &'static str {
    lang.pick(match lane {
        Lane::Alimtalk => ["Notification (alimTalk)", "알림톡"],
        Lane::Brand => ["Brand message", "브랜드 메시지"],
        Lane::Sms => ["SMS", "SMS"],
        Lane::Lms => ["LMS", "LMS"],
        Lane::Gateway => ["Gateway notification", "게이트웨이 알림톡"],
    })
}

pub fn class(class: BillingClass, lang: Lang) -> &'static str {
    lang.pick(match class {
        BillingClass::Alimtalk => ["Notification (alimTalk)", "알림톡"],
        BillingClass::BmFriend => ["Brand message to friends", "브랜드 메시지(친구)"],
        BillingClass::BmNonfriend => ["Brand message to non-friends", "브랜드 메시지(비친구)"],
        BillingClass::Sms => ["SMS", "SMS"],
        BillingClass::Lms => ["LMS", "LMS"],
        BillingClass::FallbackSms => ["Fallback SMS", "대체 발송 SMS"],
        BillingClass::FallbackLms => ["Fallback LMS", "대체 발송 LMS"],
    })
}

/// What a gateway final result means; `None` for a result the service does not document.
pub fn final_result(result: &str, lang: Lang) -> Option<&'static str> {
    use crate::api::gateway::final_result::{FAILED, GIVEUP, OK, PENDING};
    let words = match result {
        OK => ["delivered", "전달 성공"],
        FAILED => ["failed; the charge is refunded", "실패(요금 환불)"],
        GIVEUP => ["no result received; charged, disputed", "결과 미수신(과금, 이의 대상)"],
        PENDING => ["not settled yet; charge provisional", "결과 대기(잠정 과금)"],
        _ => return None,
    };
    Some(lang.pick(words))
}

/// What a per-recipient status code of the service means (the spec's "States and transitions"
/// and error codes); `None` for one it does not document (the page shows the code alone).
pub fn status(code: &str, lang: Lang) -> Option<&'static str> {
    let words = match code {
        "OK" => ["accepted", "접수 완료"],
        "SMS_00" => ["SMS accepted, in progress", "SMS 접수 완료"],
        "MMS_0000" => ["LMS accepted, in progress", "LMS 접수 완료"],
        "ERROR" => ["not accepted", "접수 실패"],
        code if code.starts_with("CH_") => ["channel failure", "채널 발송 실패"],
        code if code.starts_with("ERR_") => ["refused by the service", "서비스 거부"],
        code => return final_result(code, lang),
    };
    Some(lang.pick(words))
}

/// What a reject reason means; `None` for one this table does not know (the page shows its code).
pub fn reject_reason(reason: &str, lang: Lang) -> Option<&'static str> {
    let words = match reason {
        "phone_missing" => ["no phone number", "전화번호 없음"],
        "phone_invalid" => ["not a Korean mobile number", "휴대전화 번호 아님"],
        "variable_missing" => ["a template variable has no value", "템플릿 변수 값 없음"],
        "unencodable" => [
            "text EUC-KR cannot carry (e.g. emoji)",
            "EUC-KR로 쓸 수 없는 문자(이모지 등)",
        ],
        "too_long" => ["message too long for its lane", "메시지 길이 초과"],
        "not_text" => ["a cell is not text", "텍스트가 아닌 값"],
        "ragged" => ["the row has too few or too many fields", "열 개수가 맞지 않는 행"],
        "field_too_large" => ["a field is over the size limit", "필드 크기 초과"],
        "cell_error" => [
            "a cell holds an error or an unsaved formula",
            "오류 값이나 저장되지 않은 수식이 든 셀",
        ],
        "frequency_cap" => [
            "sent too often lately (the workspace's frequency cap)",
            "최근 발송 횟수 초과 (발송 빈도 제한)",
        ],
        _ => return None,
    };
    Some(lang.pick(words))
}

/// Figures and won are written by the crate's one rule (the engine's refusals use it too).
pub use crate::text::{count, won};

/// `2026-11-23 11:00:01` (the page says the zone once).
pub fn time(at: DateTime<FixedOffset>) -> String {
    at.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// `0.4 s`, `12 s`, `5 min 3 s`, `2 h 5 min`, `3 d 4 h` (Korean units for `ko`).
pub fn duration(millis: i64, lang: Lang) -> String {
    let [day, hour, minute, second] = match lang {
        Lang::En => [" d", " h", " min", " s"],
        Lang::Ko => ["일", "시간", "분", "초"],
    };
    let seconds = millis / 1_000;
    if seconds < 10 {
        return format!("{:.1}{second}", millis as f64 / 1_000.0);
    }
    let parts = [
        (seconds / 86_400, day),
        ((seconds / 3_600) % 24, hour),
        ((seconds / 60) % 60, minute),
        (seconds % 60, second),
    ];
    let start = parts.iter().position(|(value, _)| *value > 0).unwrap_or(3);
    parts[start..(start + 2).min(4)]
        .iter()
        .filter(|(value, _)| *value > 0)
        .map(|(value, unit)| format!("{value}{unit}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A bar width: `100 ms`, `2 s`, `10 min`, `6 h`, `1 d`.
pub fn width(millis: i64, lang: Lang) -> String {
    if millis < 1_000 {
        format!("{millis}{}", lang.pick([" ms", "밀리초"]))
    } else if millis < 10_000 {
        format!("{}{}", millis / 1_000, lang.pick([" s", "초"]))
    } else {
        duration(millis, lang)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn won_has_the_sign_and_thousands_separators() {
        assert_eq!(won(1_234_567), "₩1,234,567");
        assert_eq!(won(0), "₩0");
        assert_eq!(won(999), "₩999");
        assert_eq!(won(1_000), "₩1,000");
        assert_eq!(won(-12_345), "-₩12,345");
        assert_eq!(count(100_000), "100,000");
    }

    #[test]
    fn durations_read_in_the_two_largest_units() {
        assert_eq!(duration(420, Lang::En), "0.4 s");
        assert_eq!(duration(12_300, Lang::En), "12 s");
        assert_eq!(duration(303_000, Lang::En), "5 min 3 s");
        assert_eq!(duration(7_500_000, Lang::En), "2 h 5 min");
        assert_eq!(duration(3_600_000, Lang::En), "1 h");
        assert_eq!(duration(273_600_000, Lang::Ko), "3일 4시간");
        assert_eq!(width(100, Lang::En), "100 ms");
        assert_eq!(width(2_000, Lang::En), "2 s");
        assert_eq!(width(600_000, Lang::Ko), "10분");
    }

    #[test]
    fn status_codes_carry_their_meaning_and_unknown_ones_none() {
        assert_eq!(status("MMS_0000", Lang::Ko), Some("LMS 접수 완료"));
        assert_eq!(status("OK", Lang::Ko), Some("접수 완료"));
        assert_eq!(status("CH_SBX_BLOCKED", Lang::En), Some("channel failure"));
        assert_eq!(status("ERR_201", Lang::En), Some("refused by the service"));
        assert_eq!(status("GIVEUP", Lang::En), final_result("GIVEUP", Lang::En));
        assert_eq!(status("SBX_SOMETHING", Lang::En), None);
    }
}

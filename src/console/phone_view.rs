//! One message as a recipient's phone shows it, in the page's words: the same drawing on the check, the test send and the approval.

use super::campaigns::PreviewView;
use super::words::Words;
use crate::campaign::message::Message;
use crate::campaign::Campaign;

/// One message as a phone shows it.
pub struct Phone {
    /// The lane by its name in the page's language.
    pub lane: String,
    pub row: u64,
    /// Masked.
    pub phone: String,
    /// `first` or `longest`.
    pub chosen: String,
    /// The billing class by its name in the page's language.
    pub billing_class: String,
    /// Who the message comes from: the sender number, or the Kakao channel.
    pub sender: String,
    pub text: String,
    /// As the service counts them; `None` when the service fills the text from its template.
    pub chars: Option<u64>,
    pub bytes: Option<u64>,
    /// No counts: the service fills the text from its registered template, with these values.
    pub filled_by_service: bool,
    pub variables: String,
    /// The check's own words for the size, for a check made before the counts were kept.
    pub length: String,
    /// The fallback SMS/LMS: its class in the page's words, its EUC-KR bytes and its text.
    pub fallback: Option<(String, u64, String)>,
    /// A check made before the fallback was kept apart says it in its own words.
    pub fallback_said: Option<String>,
}

impl Phone {
    pub fn of(preview: &PreviewView, sender: &str, w: &Words) -> Phone {
        let filled_by_service = preview.chars.is_none()
            && (!preview.variables.is_empty() || !preview.length.contains(|c: char| c.is_ascii_digit()));
        Phone {
            lane: w.lane(&preview.lane).to_string(),
            row: preview.row,
            phone: preview.phone.clone(),
            chosen: preview.chosen.clone(),
            billing_class: w.class(&preview.billing_class).to_string(),
            sender: sender.to_string(),
            text: preview.text.clone(),
            chars: preview.chars.map(|n| n as u64),
            bytes: preview.bytes.map(|n| n as u64),
            filled_by_service,
            variables: preview
                .variables
                .iter()
                .map(|(name, value)| format!("#{{{name}}} = {value}"))
                .collect::<Vec<_>>()
                .join(", "),
            length: preview.length.clone(),
            fallback: preview
                .fallback_message
                .as_ref()
                .map(|(class, bytes, text)| (w.class(class).to_string(), *bytes as u64, text.clone())),
            fallback_said: preview.fallback.clone(),
        }
    }
}

/// Who a recipient sees the message from: the sender number, or the brand's Kakao channel.
pub fn sender(campaign: &Campaign, w: &Words) -> String {
    let channel = |id: &Option<String>| match id {
        Some(id) => format!("{} {id}", w.kakao_channel),
        None => w.kakao_channel.to_string(),
    };
    match &campaign.message {
        Message::Text(text) => text.callback_no.clone(),
        Message::Brand(brand) => channel(&brand.channel_id),
        Message::GatewayNotification(notification) => channel(&notification.channel_id),
        Message::Notification(_) => w.kakao_channel.to_string(),
    }
}

/// The previews an approver reads: each lane's first message and its longest.
pub fn phones(previews: &[PreviewView], sender: &str, w: &Words) -> Vec<Phone> {
    let mut lanes_seen: Vec<&str> = Vec::new();
    previews
        .iter()
        .filter(|preview| {
            let first_of_lane = !lanes_seen.contains(&preview.lane.as_str());
            if first_of_lane {
                lanes_seen.push(&preview.lane);
            }
            first_of_lane || preview.chosen == "longest"
        })
        .map(|preview| Phone::of(preview, sender, w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preview(lane: &str, row: u64, chosen: &str) -> PreviewView {
        PreviewView {
            lane: lane.into(),
            row,
            phone: "010-****-0001".into(),
            chosen: chosen.into(),
            billing_class: lane.into(),
            length: String::new(),
            text: format!("row {row}"),
            fallback: None,
            chars: Some(5),
            bytes: Some(5),
            ..PreviewView::default()
        }
    }

    #[test]
    fn each_lanes_first_and_longest_are_shown() {
        let previews = [
            preview("sms", 2, "first"),
            preview("sms", 3, "first"),
            preview("sms", 9, "longest"),
            preview("lms", 4, "first"),
        ];
        let shown: Vec<(String, u64)> = phones(&previews, "0212345678", &crate::console::words::EN)
            .into_iter()
            .map(|phone| (phone.lane, phone.row))
            .collect();
        assert_eq!(shown, [("SMS".into(), 2), ("SMS".into(), 9), ("LMS".into(), 4)]);
    }

    #[test]
    fn a_phone_names_lane_and_class_in_the_pages_language_and_keeps_the_fallback_apart() {
        let mut preview = preview("alimtalk", 2, "first");
        preview.billing_class = "alimtalk".into();
        preview.fallback_message = Some(("fallback_sms".into(), 40, "문자 본문".into()));
        let phone = Phone::of(&preview, "카카오 채널", &crate::console::words::KO);
        assert_eq!(
            (phone.lane.as_str(), phone.billing_class.as_str()),
            ("알림톡", "알림톡")
        );
        assert_eq!(phone.fallback, Some(("대체 발송 SMS".into(), 40, "문자 본문".into())));
        assert!(!phone.filled_by_service);
    }

    #[test]
    fn a_template_the_service_fills_shows_its_values_not_a_size() {
        let mut preview = preview("brand", 2, "first");
        (preview.text, preview.chars, preview.bytes) = (String::new(), None, None);
        preview.variables = vec![("VAR1".into(), "A-0".into())];
        let phone = Phone::of(&preview, "", &crate::console::words::EN);
        assert!(phone.filled_by_service);
        assert_eq!(phone.variables, "#{VAR1} = A-0");
    }
}

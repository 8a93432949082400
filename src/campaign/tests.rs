//! Unit tests of the campaign file: parsing, validation into a `Campaign`, the message spec per kind and the request it builds.

use super::message::{Chunk, Request};
use super::*;
use std::path::Path;

fn parse(text: &str) -> Result<Campaign, CampaignError> {
    Campaign::parse(text, Path::new("/tmp/c/campaign.toml"))
}

const SMS: &str = r#"
kind = "sms"
[message]
service = 3001
text = "hello #{name}"
callback_no = "0212345678"
[recipients]
path = "people.csv"
name = "name"
"#;

#[test]
fn a_minimal_sms_campaign_is_valid_with_defaults() {
    let campaign = parse(SMS).unwrap();
    assert_eq!(campaign.name, "campaign");
    assert_eq!(campaign.endpoint, Endpoint::Sandbox { accounts: None });
    assert_eq!(campaign.recipients.path, Path::new("/tmp/c/people.csv"));
    assert_eq!(campaign.recipients.format, InputFormat::Csv);
    assert_eq!(campaign.send.chunk_size, DEFAULT_CHUNK_SIZE);
    assert_eq!(campaign.send.quiet_hours, QuietHoursMode::Enforce);
}

#[test]
fn the_recipients_format_comes_from_the_name_or_the_setting() {
    let format = |path: &str, extra: &str| {
        parse(&SMS.replace("path = \"people.csv\"", &format!("path = \"{path}\"\n{extra}")))
            .map(|c| c.recipients.format)
    };
    for (path, expected) in [
        ("people.XLSX", InputFormat::Xlsx),
        ("people.xlsm", InputFormat::Xlsx),
        ("people.xls", InputFormat::Xls),
        ("people.ods", InputFormat::Ods),
        ("people.pq", InputFormat::Parquet),
        ("people.tsv", InputFormat::Csv),
    ] {
        assert_eq!(format(path, "").unwrap(), expected, "{path}");
    }
    assert_eq!(format("export.dat", "format = \"xlsx\"").unwrap(), InputFormat::Xlsx);
    let error = format("export.dat", "").unwrap_err().to_string();
    assert!(
        error.contains("recipients.format") && error.contains("\"xlsx\""),
        "{error}"
    );
}

#[test]
fn a_recipients_file_whose_name_tells_no_format_is_refused_naming_it_and_what_to_do() {
    let refusal = |path: &str| {
        parse(&SMS.replace("path = \"people.csv\"", &format!("path = \"{path}\"")))
            .unwrap_err()
            .to_string()
    };
    // calamine could read it, but this reader does not: the way out is Excel's own "Save As".
    let binary = refusal("people.xlsb");
    assert!(
        binary.contains("/tmp/c/people.xlsb") && binary.contains("Excel binary workbook") && binary.contains(".xlsx"),
        "{binary}"
    );
    for path in ["people.numbers", "people"] {
        let unknown = refusal(path);
        assert!(
            unknown.contains(&format!("/tmp/c/{path}:"))
                && unknown.contains("recipients.format")
                && [".csv", ".parquet", ".xlsx", ".xls", ".ods"]
                    .iter()
                    .all(|extension| unknown.contains(extension)),
            "{unknown}"
        );
    }
}

#[test]
fn a_sheet_is_read_from_spreadsheets_only_and_encoding_from_csv_only() {
    let recipients = |path: &str, extra: &str| {
        parse(&SMS.replace("path = \"people.csv\"", &format!("path = \"{path}\"\n{extra}"))).map(|c| c.recipients)
    };
    let named = recipients("people.xlsx", "sheet = \"고객\"").unwrap();
    assert_eq!(named.sheet.as_deref(), Some("고객"));
    assert_eq!(recipients("people.ods", "").unwrap().sheet, None);
    for (path, extra, key) in [
        ("people.csv", "sheet = \"고객\"", "recipients.sheet"),
        ("people.parquet", "sheet = \"고객\"", "recipients.sheet"),
        ("people.xlsx", "sheet = \" \"", "recipients.sheet"),
        ("people.xlsx", "encoding = \"cp949\"", "recipients.encoding"),
    ] {
        let error = recipients(path, extra).unwrap_err().to_string();
        assert!(error.contains(key), "{path} {extra}: {error}");
    }
}

#[test]
fn unknown_keys_are_refused_by_name() {
    let error = parse(&SMS.replace("callback_no", "callback_number"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("callback_number"), "{error}");
    let error = parse(&format!("{SMS}\n[send]\nchunksize = 3\n"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("chunksize"), "{error}");
}

#[test]
fn chunk_size_over_one_thousand_is_refused() {
    let error = parse(&format!("{SMS}\n[send]\nchunk_size = 1001\n"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("send.chunk_size"), "{error}");
    assert!(parse(&format!("{SMS}\n[send]\nchunk_size = 1000\n")).is_ok());
}

#[test]
fn a_variable_without_a_column_names_the_variable() {
    let error = parse(&SMS.replace("hello #{name}", "hi #{VAR2}"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("recipients.variables.VAR2"), "{error}");
}

#[test]
fn kind_specific_keys_are_checked() {
    let error = parse(&SMS.replace("kind = \"sms\"", "kind = \"alimtalk\""))
        .unwrap_err()
        .to_string();
    assert!(error.contains("message.template"), "{error}");
    let brand = "kind = \"brand\"\n[message]\nservice = 2001\nchat_bubble_type = \"COMMERCE\"\ntext = \"x\"\n[recipients]\npath = \"a.csv\"\n";
    let error = parse(brand).unwrap_err().to_string();
    assert!(
        error.contains("message.chat_bubble_type") && error.contains("BASIC"),
        "{error}"
    );
}

#[test]
fn a_basic_brand_fallback_needs_its_own_text() {
    let brand = "kind = \"brand\"\n[message]\nservice = 2001\nchat_bubble_type = \"PREMIUM_VIDEO\"\nsend_type = \"BASIC\"\ntemplate = \"WINTER_SALE\"\nalter = true\ncallback_no = \"0212345678\"\n[recipients]\npath = \"a.csv\"\n";
    let error = parse(brand).unwrap_err().to_string();
    assert!(error.contains("message.alter_message"), "{error}");
    assert!(parse(&brand.replace("alter = true", "alter = true\nalter_message = \"(광고) 세일\"")).is_ok());
}

#[test]
fn endpoint_table_needs_both_urls() {
    let text = SMS.replace(
        "kind = \"sms\"",
        "kind = \"sms\"\nendpoint = { base_url = \"http://h/standard\" }",
    );
    let error = parse(&text).unwrap_err().to_string();
    assert!(error.contains("endpoint.gateway_url"), "{error}");
}

// ---------------------------------------------------------------------------------------------
// The endpoint table.

#[test]
fn endpoint_table_carries_insecure_http_and_defaults_it_to_false() {
    let table = "endpoint = { base_url = \"http://10.0.0.5/standard/\", gateway_url = \"http://10.0.0.5/gateway\"";
    let with = parse(&SMS.replace(
        "kind = \"sms\"",
        &format!("kind = \"sms\"\n{table}, insecure_http = true }}"),
    ))
    .unwrap();
    assert_eq!(
        with.endpoint,
        Endpoint::Urls {
            base_url: "http://10.0.0.5/standard".into(),
            gateway_url: "http://10.0.0.5/gateway".into(),
            insecure_http: true,
        }
    );
    let without = parse(&SMS.replace("kind = \"sms\"", &format!("kind = \"sms\"\n{table} }}"))).unwrap();
    assert!(matches!(
        without.endpoint,
        Endpoint::Urls {
            insecure_http: false,
            ..
        }
    ));
}

#[test]
fn endpoint_errors_name_the_setting() {
    let unknown_key = SMS.replace(
        "kind = \"sms\"",
        "kind = \"sms\"\n[endpoint]\nbase_url = \"https://a\"\ngateway_url = \"https://b\"\ninsecure = true\n",
    );
    let error = parse(&unknown_key).unwrap_err().to_string();
    assert!(error.contains("unknown field `insecure`"), "{error}");
    let bad_url = SMS.replace(
        "kind = \"sms\"",
        "kind = \"sms\"\nendpoint = { base_url = \"ftp://a\", gateway_url = \"https://b\" }",
    );
    let error = parse(&bad_url).unwrap_err().to_string();
    assert!(error.contains("endpoint.base_url"), "{error}");
    let unknown_name = SMS.replace("kind = \"sms\"", "kind = \"sms\"\nendpoint = \"production\"");
    let error = parse(&unknown_name).unwrap_err().to_string();
    assert!(error.contains("`endpoint`") && error.contains("production"), "{error}");
}

// ---------------------------------------------------------------------------------------------
// Message text: both placeholder spellings, malformed placeholders, empty text.

const ALIMTALK: &str = r##"
kind = "alimtalk"
[message]
service = 1001
template = "ORDER_SHIPPED"
text = "#<이름>님, 주문하신 상품이 발송되었습니다. 송장번호: #<VAR1>"
alter = true
callback_no = "0212345678"
[recipients]
path = "people.csv"
name = "name"
variables = { VAR1 = "order_no" }
"##;

const GATEWAY: &str = r##"
kind = "gateway-alimtalk"
[message]
sender_key = "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567"
template = "ORDER_SHIPPED"
text = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #<VAR1>"
alter = true
alter_message = "#<name>님 송장 #<VAR1>"
callback_no = "0212345678"
[recipients]
path = "people.csv"
name = "name"
variables = { VAR1 = "order_no" }
"##;

const ORDER_SHIPPED: &str = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}";

fn recipients(lane: Lane) -> Vec<crate::plan::Recipient> {
    (1..=2)
        .map(|row| crate::plan::Recipient {
            row,
            phone: format!("0101234000{row}").into(),
            name: Some(format!("고객{row}").into()),
            vars: smallvec::smallvec![Some(format!("A-{row}").into())],
            lane,
            measure: None,
        })
        .collect()
}

fn request(campaign: &Campaign, lane: Lane) -> Request {
    let recipients = recipients(lane);
    let chunk = Chunk {
        group_id: "demo",
        variables: &campaign.recipients.variables,
        recipients: &recipients,
    };
    campaign.message.request(lane, &chunk)
}

fn setting_error(text: &str) -> (String, String) {
    match parse(text) {
        Err(CampaignError::Setting { key, message, .. }) => (key, message),
        other => panic!("expected a setting error, got {other:?}"),
    }
}

#[test]
fn a_notification_written_with_angle_brackets_goes_out_in_the_registered_spelling() {
    let campaign = parse(ALIMTALK).unwrap();
    let Request::Alimtalk(request) = request(&campaign, Lane::Alimtalk) else {
        panic!("an alimtalk campaign sends /alimTalk");
    };
    assert_eq!(request.message, ORDER_SHIPPED);
    assert_eq!(
        (request.alter, request.callback_no.as_deref()),
        (Some(true), Some("0212345678"))
    );
    assert_eq!(request.numbers[1].vars.get("VAR1"), Some("A-2"));
    // As written for the user: the fingerprint, the warnings and reject details.
    assert_eq!(
        campaign.message_text(),
        Some("#<이름>님, 주문하신 상품이 발송되었습니다. 송장번호: #<VAR1>")
    );
    let filled = campaign.lane_text().unwrap().render(&request.numbers[0]).unwrap();
    assert_eq!(filled, "고객1님, 주문하신 상품이 발송되었습니다. 송장번호: A-1");
}

#[test]
fn a_gateway_notification_and_its_fallback_go_out_in_braces() {
    let campaign = parse(GATEWAY).unwrap();
    let Request::Gateway(request) = request(&campaign, Lane::Gateway) else {
        panic!("a gateway campaign sends the gateway /alimTalk");
    };
    assert_eq!(request.message, ORDER_SHIPPED);
    assert_eq!(request.alter_message.as_deref(), Some("#{name}님 송장 #{VAR1}"));
    assert_eq!(
        request.callback_no.as_deref(),
        Some("0212345678"),
        "the fallback goes from the campaign's own number"
    );
    assert_eq!(campaign.fallback_text(), Some("#<name>님 송장 #<VAR1>"));
}

#[test]
fn an_sms_with_angle_brackets_maps_its_variables_and_sends_braces() {
    let campaign = parse(&SMS.replace("hello #{name}", "hello #<name>")).unwrap();
    let Request::Sms(request) = request(&campaign, Lane::Sms) else {
        panic!("an sms campaign sends /sms");
    };
    assert_eq!(request.message, "hello #{name}");
    let mapping = request.mapping.expect("a text with placeholders sends its mapping");
    assert_eq!(mapping[0].name.as_deref(), Some("고객1"));
}

#[test]
fn a_text_campaign_sends_its_subject_on_the_lms_lane_only() {
    let text = SMS
        .replace("kind = \"sms\"", "kind = \"text\"")
        .replace("callback_no", "subject = \"겨울 세일\"\ncallback_no");
    let campaign = parse(&text).unwrap();
    let Request::Lms(lms) = request(&campaign, Lane::Lms) else {
        panic!("the LMS lane sends /sms/lms");
    };
    assert_eq!(lms.subject.as_deref(), Some("겨울 세일"));
    let Request::Sms(sms) = request(&campaign, Lane::Sms) else {
        panic!("the SMS lane sends /sms");
    };
    assert_eq!(sms.subject, None);
}

#[test]
fn a_basic_brand_sends_its_template_and_no_structure() {
    let brand = "kind = \"brand\"\n[message]\nservice = 2001\nchat_bubble_type = \"PREMIUM_VIDEO\"\nsend_type = \"BASIC\"\ntemplate = \"WINTER_SALE\"\ntargeting = \"M\"\nchannel_id = \"ch-demo-large\"\nalter = true\nalter_message = \"(광고) #<name>님 세일\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"a.csv\"\nname = \"name\"\n";
    let campaign = parse(brand).unwrap();
    assert!(campaign.reaches_non_friends());
    assert_eq!(campaign.lane_text(), None, "the template's text lives at the service");
    let Request::Brand(request) = request(&campaign, Lane::Brand) else {
        panic!("a brand campaign sends /friendTalk/brand");
    };
    assert_eq!(request.send_type, Some(crate::api::standard::SendType::Basic));
    assert_eq!(request.template.as_deref(), Some("WINTER_SALE"));
    assert!(
        request.structural_fields().is_empty(),
        "{:?}",
        request.structural_fields()
    );
    assert_eq!(request.alter_message.as_deref(), Some("(광고) #{name}님 세일"));
    assert_eq!(request.channel_id.as_deref(), Some("ch-demo-large"));
}

#[test]
fn a_free_brand_refuses_placeholders_in_either_spelling() {
    let brand = "kind = \"brand\"\n[message]\nservice = 2001\nchat_bubble_type = \"TEXT\"\ntext = \"(광고) #<name>님\"\n[recipients]\npath = \"a.csv\"\nname = \"name\"\n";
    let (key, message) = setting_error(brand);
    assert_eq!(key, "message.text");
    assert!(message.contains("BASIC"), "{message}");
}

#[test]
fn an_unmapped_angle_placeholder_names_its_variable_as_written() {
    let (key, message) = setting_error(&SMS.replace("hello #{name}", "hi #<VAR2>"));
    assert_eq!(key, "recipients.variables.VAR2");
    assert!(message.contains("#<VAR2>"), "{message}");
}

#[test]
fn an_unclosed_or_empty_placeholder_is_refused_with_its_position() {
    for (text, written, at) in [
        ("hello #{name", "#{name", "line 1, column 7"),
        ("hello #<name", "#<name", "line 1, column 7"),
        ("주문 #{} 도착", "#{}", "line 1, column 4"),
        ("주문 #<> 도착", "#<>", "line 1, column 4"),
    ] {
        let (key, message) = setting_error(&SMS.replace("hello #{name}", text));
        assert_eq!(key, "message.text", "{text}");
        assert!(message.contains(written) && message.contains(at), "{text}: {message}");
    }
    let (key, message) = setting_error(&GATEWAY.replace("#<name>님 송장", "#<name님 송장"));
    assert_eq!(key, "message.alter_message");
    assert!(message.contains("line 1, column 1"), "{message}");
}

#[test]
fn a_malformed_placeholder_in_text_file_names_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("message.txt"),
        "(광고) 겨울 세일\n#{name}님 쿠폰 #<VAR1\n무료거부 080\n",
    )
    .unwrap();
    let text = SMS.replace("text = \"hello #{name}\"", "text_file = \"message.txt\"");
    let error = Campaign::parse(&text, &dir.path().join("campaign.toml")).unwrap_err();
    let CampaignError::Setting { key, message, .. } = &error else {
        panic!("expected a setting error, got {error:?}");
    };
    assert_eq!(key, "message.text_file");
    assert!(message.contains("line 2, column 13"), "{message}");
}

#[test]
fn an_empty_text_is_refused_for_every_kind_that_sends_text() {
    for campaign in [SMS, ALIMTALK, GATEWAY] {
        let empty = campaign
            .lines()
            .map(|line| {
                if line.starts_with("text = ") {
                    "text = \"\""
                } else {
                    line
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let (key, message) = setting_error(&empty);
        assert_eq!(key, "message.text", "{campaign}");
        assert!(message.contains("empty"), "{message}");
    }
    let (key, _) = setting_error(&SMS.replace("hello #{name}", " \\n "));
    assert_eq!(key, "message.text", "whitespace only is empty too");
    let (key, _) = setting_error(&GATEWAY.replace("#<name>님 송장 #<VAR1>", ""));
    assert_eq!(key, "message.alter_message");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("message.txt"), "\n").unwrap();
    let text = SMS.replace("text = \"hello #{name}\"", "text_file = \"message.txt\"");
    let error = Campaign::parse(&text, &dir.path().join("campaign.toml")).unwrap_err();
    assert!(
        matches!(&error, CampaignError::Setting { key, .. } if key == "message.text_file"),
        "{error:?}"
    );
}

#[test]
fn pause_when_failing_is_a_share_and_a_window_or_false() {
    let with =
        |rule: &str| parse(&format!("{SMS}[send]\npause_when_failing = {rule}\n")).map(|c| c.send.pause_when_failing);
    assert_eq!(parse(SMS).unwrap().send.pause_when_failing, None, "off when absent");
    assert_eq!(
        with("{ percent = 20, window = 500 }").unwrap(),
        Some(FailingRule {
            percent: 20,
            window: 500
        })
    );
    assert_eq!(with("false").unwrap(), None);
    for (bad, says) in [
        ("true", "percent = 20, window = 500"),
        ("{ percent = 0, window = 500 }", "percent must be 1 to 100"),
        ("{ percent = 20 }", "window is missing"),
        ("{ percent = 20, window = 500, after = 3 }", "unknown key \"after\""),
        (
            "{ percent = 20.5, window = 500 }",
            "percent is missing or not a whole number",
        ),
    ] {
        let error = with(bad).unwrap_err().to_string();
        assert!(
            error.contains("send.pause_when_failing") && error.contains(says),
            "{bad}: {error}"
        );
    }
}

proptest::proptest! {
    /// Any whole percent and window: taken exactly when in range, else refused naming the setting.
    #[test]
    fn any_failing_rule_is_taken_in_range_and_refused_by_name_outside(percent in -5i64..110, window in -5i64..1_000_010) {
        let result = parse(&format!("{SMS}[send]\npause_when_failing = {{ percent = {percent}, window = {window} }}\n"));
        let in_range = (1..=100).contains(&percent) && (1..=1_000_000).contains(&window);
        match result {
            Ok(campaign) => {
                proptest::prop_assert!(in_range);
                proptest::prop_assert_eq!(campaign.send.pause_when_failing.map(|rule| (i64::from(rule.percent), i64::from(rule.window))), Some((percent, window)));
            }
            Err(error) => {
                proptest::prop_assert!(!in_range);
                proptest::prop_assert!(error.to_string().contains("send.pause_when_failing"));
            }
        }
    }
}

mod arbitrary;

#[test]
fn a_gateway_fallback_needs_its_own_sender_number() {
    let gateway = "kind = \"gateway-alimtalk\"\n[message]\nsender_key = \"k\"\ntemplate = \"T\"\ntext = \"hello\"\nalter = true\n[recipients]\npath = \"people.csv\"\n";
    let error = parse(gateway).unwrap_err().to_string();
    assert!(
        error.contains("message.callback_no") && error.contains("alter = true"),
        "{error}"
    );
    let with_number = gateway.replace("alter = true\n", "alter = true\ncallback_no = \"0212345678\"\n");
    assert!(parse(&with_number).is_ok());
    assert!(
        parse(&gateway.replace("alter = true\n", "")).is_ok(),
        "without alter, no number needed"
    );
}

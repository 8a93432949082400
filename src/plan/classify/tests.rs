//! Tests of classification: measuring a row by its values against measuring the filled text.

use super::*;
use crate::text::euc_kr_len;
use proptest::prelude::*;
use std::path::Path;

fn campaign(kind: &str, text: &str) -> Campaign {
    let extra = match kind {
        "alimtalk" => "template = \"T\"\n",
        "sms" => "callback_no = \"0212345678\"\n",
        _ => "callback_no = \"0212345678\"\nsubject = \"s\"\n",
    };
    let toml = format!(
        "name = \"c\"\nkind = \"{kind}\"\n[message]\nservice = 1\ntext = {text:?}\n{extra}\
         [recipients]\npath = \"r.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"v1\", VAR2 = \"v2\" }}\n"
    );
    Campaign::parse(&toml, Path::new("/tmp/c/campaign.toml")).expect("campaign")
}

fn row(name: &str, v1: &str, v2: &str) -> RawRow {
    RawRow {
        row: 1,
        phone: Some("010-1234-5678".into()),
        name: Some(name.into()),
        vars: smallvec::smallvec![Some(v1.into()), Some(v2.into())],
        unreadable: None,
    }
}

/// The fate by building the text and measuring it whole: what measuring by values must equal.
fn fate_by_rendering(drafter: &Drafter, row: &RawRow) -> Result<Lane, (RejectReason, String)> {
    let row = row.view();
    let vars = Vars {
        name: row.name,
        keys: &drafter.variable_keys,
        values: &row.vars,
    };
    let template = drafter.template.as_ref().expect("a text");
    let text = template
        .render(&vars)
        .map_err(|missing| (RejectReason::VariableMissing, missing.written))?;
    drafter.lanes.lane(|unit| unit.size(&text))
}

fn fate_by_drafting(drafter: &Drafter, row: &RawRow) -> Result<Lane, (RejectReason, String)> {
    match drafter.draft_row(row, &mut String::new()) {
        Draft::Valid { lane, .. } => Ok(lane),
        Draft::Rejected(rejection) if rejection.reason == RejectReason::VariableMissing => {
            Err((rejection.reason, rejection.detail.replace(" has no value", "")))
        }
        Draft::Rejected(rejection) => Err((rejection.reason, rejection.detail.clone())),
    }
}

#[test]
fn an_unencodable_value_is_named_where_it_stands_in_the_filled_text() {
    let campaign = campaign("text", "안녕 #{이름}님 #{VAR1}");
    let drafter = Drafter::new(&campaign);
    let Draft::Rejected(rejection) = drafter.draft_row(&row("김😀", "x", "y"), &mut String::new()) else {
        panic!("an emoji cannot go in EUC-KR");
    };
    assert_eq!(rejection.reason, RejectReason::Unencodable);
    assert_eq!(rejection.detail, euc_kr_len("안녕 김😀님 x").unwrap_err().to_string());
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z0-9 가-힣똠뷁漢字①é\u{3000}]{1,40}",
        1 => "[a-z가-힣😀]{1,6}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Measuring a row by the literal text's size (once) plus its values' gives the lane and
    /// the reject, detail included, that building and measuring the whole text gives.
    #[test]
    fn measuring_by_values_equals_measuring_the_filled_text(
        kind in prop_oneof![Just("text"), Just("sms"), Just("lms"), Just("alimtalk")],
        literal in "[a-z 가-힣!]{0,30}",
        repeat in 1usize..60,
        name in value(),
        v1 in value(),
        v2 in value(),
    ) {
        let text = format!("{literal}#{{이름}} {} #<VAR1>{literal}#{{VAR2}}", "가".repeat(repeat));
        let campaign = campaign(kind, &text);
        let drafter = Drafter::new(&campaign);
        let row = row(&name, &v1, &v2);
        prop_assert_eq!(fate_by_drafting(&drafter, &row), fate_by_rendering(&drafter, &row));
        let view = row.view();
        let vars = Vars { name: view.name, keys: &drafter.variable_keys, values: &view.vars };
        let template = drafter.template.as_ref().expect("a text");
        let unit = drafter.lanes.unit().expect("a measured kind");
        let filled = template.render(&vars).expect("every value present");
        prop_assert_eq!(
            drafter.size(template, &vars, Some(unit), &mut String::new()),
            Ok(Some(unit.size(&filled)))
        );
        // A valid row carries that size, which previews rank by.
        if let Draft::Valid { measure, .. } = drafter.draft_row(&view, &mut String::new()) {
            prop_assert_eq!(measure.map(|m| m as usize), unit.size(&filled).ok());
        }
    }
}

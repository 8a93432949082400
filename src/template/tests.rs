//! Tests of templates: placeholders parsed, filled and measured, and the problems named.

use super::*;
use crate::api::MappingEntry;
use proptest::prelude::*;

fn recipient(name: Option<&str>, vars: &[(&str, &str)]) -> MappingEntry {
    MappingEntry {
        name: name.map(str::to_string),
        vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    }
}

#[test]
fn fills_name_in_both_spellings_and_numbered_variables() {
    let template = Template::compile("#{이름}님 #{name} 주문 #{VAR1}, #{VAR2}");
    let filled = template
        .render(&recipient(Some("김민수"), &[("VAR1", "A-1"), ("VAR2", "3")]))
        .unwrap();
    assert_eq!(filled, "김민수님 김민수 주문 A-1, 3");
}

#[test]
fn angle_brackets_fill_like_braces() {
    let template = Template::parse("#<이름>님 #<name> 주문 #<VAR1>, #{VAR2}").unwrap();
    let filled = template
        .render(&recipient(Some("김민수"), &[("VAR1", "A-1"), ("VAR2", "3")]))
        .unwrap();
    assert_eq!(filled, "김민수님 김민수 주문 A-1, 3");
    assert_eq!(
        template.placeholders(),
        [
            &Placeholder::Name,
            &Placeholder::Var("VAR1".into()),
            &Placeholder::Var("VAR2".into())
        ]
    );
}

#[test]
fn service_text_writes_every_placeholder_in_braces() {
    let template = Template::parse("#<이름>님, 송장번호: #<VAR1> (#{VAR2}) #name>").unwrap();
    assert_eq!(template.service_text(), "#{이름}님, 송장번호: #{VAR1} (#{VAR2}) #name>");
    let braces = "#{이름}님 #{VAR1}";
    assert_eq!(Template::parse(braces).unwrap().service_text(), braces);
}

#[test]
fn missing_or_empty_variable_is_named_as_written() {
    let template = Template::compile("주문 #{VAR1} #<VAR2>");
    let error = template
        .render(&recipient(None, &[("VAR1", "x"), ("VAR2", "")]))
        .unwrap_err();
    assert_eq!((error.key.as_str(), error.written.as_str()), ("VAR2", "#<VAR2>"));
    let error = Template::compile("#{이름}").render(&recipient(None, &[])).unwrap_err();
    assert_eq!((error.key.as_str(), error.written.as_str()), ("name", "#{이름}"));
}

#[test]
fn compile_leaves_unclosed_or_empty_placeholders_literal() {
    let text = "a #{ b #{} c #<> d #<VAR1 e #{VAR1";
    let template = Template::compile(text);
    assert!(!template.has_placeholders());
    assert_eq!(template.render(&recipient(None, &[])).unwrap(), text);
}

#[test]
fn parse_names_an_unclosed_placeholder_and_where_it_starts() {
    let error = Template::parse("주문 #{VAR1 도착").unwrap_err();
    assert_eq!(error.problem, PlaceholderProblem::Unclosed);
    assert_eq!((error.line, error.column, error.offset), (1, 4, 3));
    assert_eq!(error.written, "#{VAR1 도착");
    let error = Template::parse("첫 줄\n둘째 #<VAR1\n셋째 #<VAR2>").unwrap_err();
    assert_eq!((error.line, error.column, error.offset), (2, 4, 7));
    assert_eq!(error.written, "#<VAR1");
    assert!(error.to_string().contains("line 2, column 4"), "{error}");
    assert!(error.to_string().contains('>'), "names the closer: {error}");
}

#[test]
fn parse_refuses_an_opener_closed_by_the_other_spelling() {
    for text in ["#{VAR1>", "#<VAR1}", "#{VAR1 #{VAR2}"] {
        let error = Template::parse(text).unwrap_err();
        assert_eq!(
            (error.problem, error.column),
            (PlaceholderProblem::Unclosed, 1),
            "{text}"
        );
    }
}

#[test]
fn parse_names_an_empty_placeholder_in_either_spelling() {
    for (text, written, column) in [("안녕 #{} 님", "#{}", 4), ("#<>", "#<>", 1)] {
        let error = Template::parse(text).unwrap_err();
        assert_eq!(error.problem, PlaceholderProblem::Empty, "{text}");
        assert_eq!((error.written.as_str(), error.column), (written, column), "{text}");
    }
}

#[test]
fn a_long_unclosed_placeholder_is_shortened() {
    let error = Template::parse(&format!("#<{}", "가".repeat(100))).unwrap_err();
    assert_eq!(error.written.chars().count(), Malformed::SHOWN_CHARS + 1);
    assert!(error.written.ends_with('…'));
}

#[test]
fn recognises_a_caller_filled_message() {
    let template = Template::compile("#{이름}님, 송장 #{VAR1} 발송");
    assert!(template.matches_filled("김님, 송장 123 발송"));
    assert!(template.matches_filled("#{이름}님, 송장 #{VAR1} 발송"));
    assert!(!template.matches_filled("김님, 송장  발송x"));
    assert!(!template.matches_filled("님, 송장 123 발송"));
}

/// Text rich in the characters placeholders are made of.
fn bracket_soup() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[#{}<>a-zA-Z0-9이름 \n\r_😀]{0,60}").expect("valid regex")
}

/// A key a placeholder may hold: never a bracket or a line break.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("name".to_string()),
        Just("이름".to_string()),
        "VAR[0-9]{1,2}",
        "[a-zA-Z가-힣 _#.-]{1,8}",
    ]
}

/// Literal text between placeholders: no `#`, so it can never open one.
fn literal() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9가-힣 ,.!()\n{}<>😀-]{0,12}"
}

struct Everyone;

impl VariableSource for Everyone {
    fn name(&self) -> Option<&str> {
        Some("김민수")
    }
    fn var(&self, key: &str) -> Option<&str> {
        Some(if key.len().is_multiple_of(2) { "짝" } else { "odd" })
    }
}

proptest! {
    #[test]
    fn compile_parse_and_render_never_panic(text in prop_oneof![any::<String>(), bracket_soup()]) {
        let template = Template::compile(&text);
        let _ = template.render(&Everyone);
        let _ = template.render(&recipient(None, &[]));
        let _ = template.service_text();
        let _ = template.matches_filled(&text);
        if let Err(error) = Template::parse(&text) {
            prop_assert!(error.line >= 1 && error.column >= 1);
            prop_assert!(error.offset <= text.chars().count());
        }
    }

    #[test]
    fn without_placeholders_render_is_the_identity(text in prop_oneof![any::<String>(), bracket_soup()]) {
        let text = text.replace("#{", "# {").replace("#<", "# <");
        let template = Template::parse(&text).expect("nothing opens a placeholder");
        prop_assert!(!template.has_placeholders());
        prop_assert_eq!(template.render(&recipient(None, &[])).unwrap(), text.clone());
        prop_assert_eq!(template.service_text(), text);
    }

    #[test]
    fn braces_and_angles_render_alike(
        parts in proptest::collection::vec((literal(), key(), any::<bool>()), 0..6),
        tail in literal(),
    ) {
        let mut mixed = String::new();
        let mut braces = String::new();
        for (literal, key, angles) in &parts {
            mixed.push_str(literal);
            braces.push_str(literal);
            mixed.push_str(&if *angles { format!("#<{key}>") } else { format!("#{{{key}}}") });
            braces.push_str(&format!("#{{{key}}}"));
        }
        mixed.push_str(&tail);
        braces.push_str(&tail);
        let mixed = Template::parse(&mixed).expect("well-formed placeholders");
        let braces = Template::parse(&braces).expect("well-formed placeholders");
        prop_assert_eq!(mixed.render(&Everyone).unwrap(), braces.render(&Everyone).unwrap());
        prop_assert_eq!(mixed.placeholders(), braces.placeholders());
        prop_assert_eq!(mixed.service_text(), braces.source());
    }
}

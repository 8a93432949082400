//! The spend cap as a property: over chunk sizes, prices, `alter`, concurrency and outcomes, charged + reserved never passes the budget at any step, and what the service would bill never passes it either.

mod common;

use msgbatch::campaign::{Campaign, Lane};
use msgbatch::engine::budget::{Budget, Spend};
use msgbatch::plan::billing::Pricer;
use msgbatch::plan::Recipient;
use proptest::prelude::*;
use std::path::Path;

/// What the service answers one recipient.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Accepted,
    /// A channel failure: with `alter`, a fallback SMS/LMS follows and is billed.
    ChannelFailure,
    /// Any other refusal: nothing billed.
    Refused,
}

/// What becomes of one chunk's request.
#[derive(Debug, Clone)]
enum Outcome {
    Answered(Vec<Answer>),
    /// The request may or may not have reached the service (a dropped connection).
    Uncertain {
        reached: bool,
        answers: Vec<Answer>,
    },
    /// 429/503 until the attempts ran out: provably not taken.
    Released,
}

fn answer() -> impl Strategy<Value = Answer> + Clone {
    prop_oneof![
        3 => Just(Answer::Accepted),
        1 => Just(Answer::ChannelFailure),
        1 => Just(Answer::Refused),
    ]
}

fn outcome(recipients: usize) -> impl Strategy<Value = Outcome> {
    let answers = proptest::collection::vec(answer(), recipients);
    prop_oneof![
        6 => answers.clone().prop_map(Outcome::Answered),
        2 => (any::<bool>(), answers).prop_map(|(reached, answers)| Outcome::Uncertain { reached, answers }),
        1 => Just(Outcome::Released),
    ]
}

/// A notification campaign (a fallback SMS/LMS when `alter`) or an SMS one, with these prices.
fn campaign(alimtalk: bool, alter: bool, prices: [i64; 4], long_fallback: bool) -> Campaign {
    // The fallback of a notification is its text: long enough, it goes as an LMS.
    let message = if long_fallback {
        format!("#{{이름}}님 {}", "긴 안내 문구입니다 ".repeat(8))
    } else {
        "#{이름}님 안녕하세요".to_string()
    };
    let text = if alimtalk {
        format!(
            "kind = \"alimtalk\"\n[message]\nservice = 1001\ntemplate = \"T\"\ntext = \"{message}\"\nalter = {alter}\ncallback_no = \"0212345678\"\n"
        )
    } else {
        "kind = \"sms\"\n[message]\nservice = 3001\ntext = \"안녕하세요\"\ncallback_no = \"0212345678\"\n".to_string()
    };
    let [primary, sms, fallback_sms, fallback_lms] = prices;
    let toml = format!(
        "{text}[recipients]\npath = \"people.csv\"\nname = \"name\"\n[prices]\nalimtalk = {primary}\nsms = {sms}\nfallback_sms = {fallback_sms}\nfallback_lms = {fallback_lms}\n"
    );
    Campaign::parse(&toml, Path::new("/tmp/budget/campaign.toml")).expect("a valid test campaign")
}

fn recipient(row: u64, lane: Lane) -> Recipient {
    Recipient {
        row,
        phone: format!("010{:08}", row).into(),
        name: Some("홍길동".into()),
        vars: Default::default(),
        lane,
        measure: None,
    }
}

/// What the service bills for one answered recipient: the primary price when taken, the
/// fallback's when a channel failure is followed by one.
fn billed(campaign: &Campaign, pricer_prices: [i64; 4], recipient: &Recipient, answer: Answer) -> i64 {
    let [primary, sms, fallback_sms, fallback_lms] = pricer_prices;
    match (recipient.lane, answer) {
        (Lane::Alimtalk, Answer::Accepted) => primary,
        (Lane::Sms, Answer::Accepted) => sms,
        (Lane::Alimtalk, Answer::ChannelFailure) => {
            match msgbatch::plan::billing::fallback(campaign, recipient).map(|f| f.class) {
                Some(msgbatch::api::ledger::BillingClass::FallbackSms) => fallback_sms,
                Some(_) => fallback_lms,
                None => 0,
            }
        }
        _ => 0,
    }
}

fn status_of(answer: Answer) -> (&'static str, bool) {
    match answer {
        Answer::Accepted => ("OK", true),
        Answer::ChannelFailure => ("CH_NOT_FRIEND", false),
        Answer::Refused => ("ERR_BAD_NUMBER", false),
    }
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    #[test]
    fn charged_plus_reserved_never_passes_the_budget_and_neither_does_the_bill(
        alimtalk in any::<bool>(),
        alter in any::<bool>(),
        prices in proptest::array::uniform4(0i64..60),
        long_fallback in any::<bool>(),
        chunk_size in 1usize..12,
        concurrency in 1usize..9,
        limit in 0i64..3_000,
        outcomes in proptest::collection::vec(outcome(12), 1..40),
        // Which request in flight answers next, at each step.
        order in proptest::collection::vec(any::<prop::sample::Index>(), 40),
    ) {
        let campaign = campaign(alimtalk, alter, prices, long_fallback);
        let pricer = Pricer::new(&campaign).expect("the campaign gives prices");
        let lane = if alimtalk { Lane::Alimtalk } else { Lane::Sms };
        let budget = Budget::new(Some(limit), Spend::default());
        let mut in_flight: Vec<(Vec<Recipient>, i64, Outcome)> = Vec::new();
        let mut bill = 0i64;
        let mut next_row = 1u64;
        let mut chunks = outcomes.into_iter();
        let mut order = order.into_iter();
        let mut stopped = false;
        loop {
            // Dispatch while a request is free and the budget lets the next chunk go.
            while !stopped && in_flight.len() < concurrency {
                let Some(outcome) = chunks.next() else { break };
                let recipients: Vec<Recipient> = (0..chunk_size)
                    .map(|i| recipient(next_row + i as u64, lane))
                    .collect();
                let worst = pricer.worst_case_of(&campaign, &recipients);
                match budget.reserve(worst) {
                    Ok(()) => {
                        next_row += chunk_size as u64;
                        in_flight.push((recipients, worst, outcome));
                    }
                    Err(reached) => {
                        prop_assert!(reached.charged + reached.reserved + worst > limit);
                        stopped = true;
                    }
                }
                prop_assert!(budget.spend().total() <= limit, "{:?} over {limit}", budget.spend());
            }
            if in_flight.is_empty() {
                break;
            }
            let index = order.next().map_or(0, |index| index.index(in_flight.len()));
            let (recipients, worst, outcome) = in_flight.swap_remove(index);
            match outcome {
                Outcome::Answered(answers) => {
                    let mut charged = 0;
                    let mut kept = 0;
                    for (recipient, answer) in recipients.iter().zip(answers) {
                        let (status, accepted) = status_of(answer);
                        let cost = pricer.cost(&campaign, recipient, status, accepted);
                        prop_assert_eq!(cost.charged, billed(&campaign, prices, recipient, answer));
                        charged += cost.charged;
                        kept += cost.kept;
                        bill += billed(&campaign, prices, recipient, answer);
                    }
                    prop_assert!(charged + kept <= worst, "the answer cost {charged}+{kept}, reserved {worst}");
                    budget.settle(worst, charged, kept);
                }
                Outcome::Uncertain { reached, answers } => {
                    if reached {
                        bill += recipients
                            .iter()
                            .zip(answers)
                            .map(|(recipient, answer)| billed(&campaign, prices, recipient, answer))
                            .sum::<i64>();
                    }
                }
                Outcome::Released => budget.release(worst),
            }
            let spend = budget.spend();
            prop_assert!(spend.total() <= limit, "{spend:?} over {limit}");
            prop_assert!(bill <= spend.total(), "every won billed so far is counted: {bill} > {spend:?}");
        }
        prop_assert!(bill <= limit, "the service billed {bill}, over the budget {limit}");
        prop_assert!(bill <= budget.spend().total(), "every won billed is counted: {bill} > {:?}", budget.spend());
    }
}

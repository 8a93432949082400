//! The frequency cap's cost: the check (`validate`) of a realistic 1 M-row advertising list against a history of 10 M sends, against the same check without a cap — with the list of held-back numbers made from the history first (cold: the first check after a change of day or rule) and with the list the console keeps made at each run's end (warm: every other check); wall time and peak memory of each, in a process of its own under `/usr/bin/time`.
//!
//! Run: `cargo bench --bench frequency_cap` (ROWS, SENDS and SHARE in the environment change the
//! sizes and the percent of the sends that reach the list).
//! The history is ten campaigns' segments written as the console writes them, spread over the
//! last seven days; a third of the list's numbers are in it, most of them twice or more.

use msgbatch::console::frequency::history::{packed, write_segment};
use msgbatch::plan::capped::{number_key, today, CapRule};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const RULE: CapRule = CapRule { times: 2, days: 7 };
const CAMPAIGNS: usize = 10;

/// A small deterministic generator (xorshift), so that every run measures the same files.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn size(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// The list's i-th number (eight digits after 010, spread over the range).
fn number(i: u64) -> u64 {
    10_000_000 + (i * 7_919) % 90_000_000
}

fn campaign_text(capped: bool) -> String {
    format!(
        "name = \"winter-sale\"\nkind = \"sms\"\n[message]\nservice = 3001\n\
         text = \"(광고) #{{name}}님, 쿠폰 #{{VAR1}}을 #{{VAR2}}까지 쓰세요. 무료거부 0801234567\"\n\
         callback_no = \"0212345678\"\nadvertising = true\n\
         [recipients]\npath = \"list.csv\"\nname = \"name\"\nphone = \"hp\"\n\
         variables = {{ VAR1 = \"VAR1\", VAR2 = \"VAR2\" }}\n{}",
        if capped {
            "frequency_capped = \"capped.bin\"\n"
        } else {
            ""
        }
    )
}

/// Writes the list (realistic rows, as benches/scale.sh makes them) and the history.
fn prepare(dir: &Path, rows: usize, sends: usize, share: u64) {
    let mut dice = Dice(0x9E37_79B9_7F4A_7C15);
    let family = ["김", "이", "박", "최", "정", "강", "조", "윤", "장", "임"];
    let given = ["민", "서", "지", "현", "우", "준", "하", "윤", "예", "도", "수", "영"];
    let file = std::fs::File::create(dir.join("list.csv")).unwrap();
    let mut out = std::io::BufWriter::new(file);
    writeln!(out, "hp,name,VAR1,VAR2").unwrap();
    for i in 0..rows as u64 {
        let n = number(i);
        let (head, tail) = (n / 10_000, n % 10_000);
        let phone = match dice.below(100) {
            0..60 => format!("010{head:04}{tail:04}"),
            60..90 => format!("010-{head:04}-{tail:04}"),
            90..99 => format!("+82 10-{head:04}-{tail:04}"),
            _ => format!("02-{:03}-{tail:04}", head % 1000),
        };
        let name = format!(
            "{}{}{}",
            family[dice.below(10) as usize],
            given[dice.below(12) as usize],
            given[dice.below(12) as usize]
        );
        writeln!(
            out,
            "{phone},{name},WIN{:05},2026-12-{:02}",
            dice.below(100_000),
            1 + dice.below(28)
        )
        .unwrap();
    }
    out.flush().unwrap();
    for (capped, file) in [(false, "plain.toml"), (true, "capped.toml")] {
        std::fs::write(dir.join(file), campaign_text(capped)).unwrap();
    }
    let history = dir.join("history");
    let _ = std::fs::remove_dir_all(&history);
    let today = today();
    let per_campaign = sends / CAMPAIGNS;
    for campaign in 0..CAMPAIGNS {
        let mut segment = Vec::with_capacity(per_campaign);
        let day = today - (campaign as u32 % 7);
        for _ in 0..per_campaign {
            // A share of the sends (SHARE percent, a third by default) reach the list's first
            // half (so that its numbers recur); the rest reach numbers the list does not hold.
            let n = if dice.below(100) < share {
                number(dice.below(rows as u64 / 2))
            } else {
                10_000_000 + dice.below(90_000_000)
            };
            let key = number_key(&format!("010{n:08}")).unwrap();
            segment.push(packed(key, day));
        }
        segment.sort_unstable();
        segment.dedup();
        write_segment(&history, &format!("c{campaign}"), segment).unwrap();
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Plain,
    Cold,
    Warm,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Plain => "plain",
            Phase::Cold => "cold",
            Phase::Warm => "warm",
        }
    }
}

/// One measured check, in this process: answers the line the parent reads.
fn phase(dir: &Path, phase: Phase) {
    use msgbatch::console::frequency::history;
    let started = Instant::now();
    let mut made = 0.0;
    let list = dir.join("capped.bin");
    let capped = phase != Phase::Plain;
    match phase {
        Phase::Plain => {}
        Phase::Cold => {
            let written = history::write_capped(&dir.join("history"), RULE, today(), &list).unwrap();
            eprintln!("capped list: {written} numbers");
        }
        Phase::Warm => {
            // As the console's check: the kept list (made when the last run ended), linked in.
            let kept = history::capped_list(&dir.join("history"), RULE, today()).unwrap();
            let _ = std::fs::remove_file(&list);
            std::fs::hard_link(kept, &list).unwrap();
        }
    }
    if capped {
        made = started.elapsed().as_secs_f64();
    }
    let campaign =
        msgbatch::campaign::Campaign::load(&dir.join(if capped { "capped.toml" } else { "plain.toml" })).unwrap();
    let scan = msgbatch::engine::validate_with(
        &campaign,
        &dir.join("rejects.csv"),
        &msgbatch::engine::events::Ignore,
        None,
    )
    .unwrap();
    assert!(scan.balanced());
    println!(
        "rows {} valid {} capped {} list-made {:.3} s total {:.3} s",
        scan.rows,
        scan.valid,
        scan.capped,
        made,
        started.elapsed().as_secs_f64()
    );
}

/// Runs a phase in a process of its own; answers (wall seconds, peak KB, its line).
fn measured(dir: &Path, phase: Phase) -> (f64, u64, String) {
    let output = Command::new("/usr/bin/time")
        .args(["-f", "time %e %M"])
        .arg(std::env::current_exe().unwrap())
        .args(["phase", phase.name()])
        .arg(dir)
        .output()
        .expect("/usr/bin/time runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let timing = stderr.lines().rev().find(|line| line.starts_with("time ")).unwrap();
    let mut parts = timing.split_whitespace().skip(1);
    let wall: f64 = parts.next().unwrap().parse().unwrap();
    let kb: u64 = parts.next().unwrap().parse().unwrap();
    (wall, kb, String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("phase") {
        let which = [Phase::Plain, Phase::Cold, Phase::Warm]
            .into_iter()
            .find(|phase| phase.name() == args[2])
            .expect("plain, cold or warm");
        phase(Path::new(&args[3]), which);
        return;
    }
    let rows = size("ROWS", 1_000_000);
    let sends = size("SENDS", 10_000_000);
    let share = size("SHARE", 33) as u64;
    let dir: PathBuf = std::env::var("BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir().join("msgbatch-frequency-cap"));
    std::fs::create_dir_all(&dir).unwrap();
    let started = Instant::now();
    prepare(&dir, rows, sends, share);
    println!(
        "{rows} rows, {sends} sends ({share} % to the list's first half) in {CAMPAIGNS} segments ({:.1} s to write them); rule {} in {} days",
        started.elapsed().as_secs_f64(),
        RULE.times,
        RULE.days
    );
    // The kept list, as the end of the last run leaves it.
    msgbatch::console::frequency::history::capped_list(&dir.join("history"), RULE, today()).unwrap();
    let (mut plain, mut cold, mut warm) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..3 {
        // Alternated, so that drift in the machine's speed falls on all three.
        let a = measured(&dir, Phase::Plain);
        let b = measured(&dir, Phase::Cold);
        let c = measured(&dir, Phase::Warm);
        println!(
            "round {round}: no cap {:.2} s {} KB | list made {:.2} s {} KB | list kept {:.2} s {} KB ({})",
            a.0, a.1, b.0, b.1, c.0, c.1, c.2
        );
        plain.push(a);
        cold.push(b);
        warm.push(c);
    }
    let best = |runs: &[(f64, u64, String)]| runs.iter().map(|run| run.0).fold(f64::INFINITY, f64::min);
    let peak = |runs: &[(f64, u64, String)]| runs.iter().map(|run| run.1).max().unwrap_or(0) as f64 / 1024.0;
    println!(
        "best: no cap {:.2} s ({:.1} MB); cap, list kept {:.2} s ({:.1} MB): ratio {:.2}; cap, list made {:.2} s ({:.1} MB): ratio {:.2} (target <= 2)",
        best(&plain),
        peak(&plain),
        best(&warm),
        peak(&warm),
        best(&warm) / best(&plain),
        best(&cold),
        peak(&cold),
        best(&cold) / best(&plain)
    );
}

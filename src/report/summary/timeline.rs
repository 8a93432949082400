//! Recipients sent over time, kept in at most [`BARS`] bars whose width grows as the sends spread, so the summary's memory does not grow with the run.
//!
//! A send time is the per-recipient `date` the checkpoint stored with a chunk's results: on the
//! standard deployment the service's own `date` (epoch ms), on the gateway the moment its answer
//! arrived. Rows of uncertain chunks have no results, hence no send time: they are not in the bars,
//! and the page says how many there are.

use chrono::{DateTime, FixedOffset, TimeZone};
use serde::Serialize;

/// The most bars the chart holds.
pub const BARS: usize = 60;
/// Korea Standard Time, UTC+9 all year: bars start on whole widths of Seoul's wall clock.
const KST_MS: i64 = 9 * 3600 * 1000;
/// Bar widths, each a whole multiple of the one before, so widening merges whole bars and loses
/// nothing; past the last one the width doubles.
const WIDTHS_MS: [i64; 15] = [
    100, 200, 1_000, 2_000, 10_000, 20_000, 60_000, 120_000, 600_000, 1_200_000, 3_600_000, 7_200_000, 21_600_000,
    43_200_000, 86_400_000,
];
/// A `date` beyond this (the year 5138) is taken for garbage, like one at or before 1970.
const LATEST_MS: i64 = 100_000_000_000_000;

fn wider(width: i64) -> i64 {
    WIDTHS_MS.iter().copied().find(|w| *w > width).unwrap_or(width * 2)
}

/// When the recipients were sent: first, last, and a count per bar.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(into = "SendTimesJson")]
pub struct SendTimes {
    /// Earliest and latest send time (epoch ms).
    range: Option<(i64, i64)>,
    /// Start of the first bar on Seoul's wall clock (epoch ms + 9 h), a multiple of `width`.
    origin: i64,
    width: i64,
    counts: [u64; BARS],
    untimed: u64,
}

impl Default for SendTimes {
    fn default() -> SendTimes {
        SendTimes {
            range: None,
            origin: 0,
            width: WIDTHS_MS[0],
            counts: [0; BARS],
            untimed: 0,
        }
    }
}

impl SendTimes {
    /// Counts one recipient sent at `date` (epoch ms).
    pub fn record(&mut self, date: i64) {
        if date <= 0 || date > LATEST_MS {
            self.untimed += 1;
            return;
        }
        let (first, last) = self.range.map_or((date, date), |(f, l)| (f.min(date), l.max(date)));
        let (low, high) = (first + KST_MS, last + KST_MS);
        let mut width = self.width;
        while high.div_euclid(width) - low.div_euclid(width) >= BARS as i64 {
            width = wider(width);
        }
        let origin = low.div_euclid(width) * width;
        if (origin, width) != (self.origin, self.width) {
            self.rebin(origin, width);
        }
        self.range = Some((first, last));
        self.counts[((date + KST_MS - origin) / width) as usize] += 1;
    }

    /// Moves the counts to bars of `width` from `origin`. Every old bar lies inside one new bar:
    /// both origins are multiples of the old width, and the new width is a multiple of it.
    fn rebin(&mut self, origin: i64, width: i64) {
        let mut counts = [0; BARS];
        for (index, count) in self.counts.iter().enumerate().filter(|(_, count)| **count > 0) {
            let start = self.origin + index as i64 * self.width;
            counts[((start - origin) / width) as usize] += count;
        }
        (self.origin, self.width, self.counts) = (origin, width, counts);
    }

    pub fn first(&self) -> Option<DateTime<FixedOffset>> {
        self.range.map(|(first, _)| seoul(first))
    }

    pub fn last(&self) -> Option<DateTime<FixedOffset>> {
        self.range.map(|(_, last)| seoul(last))
    }

    pub fn duration_ms(&self) -> Option<i64> {
        self.range.map(|(first, last)| last - first)
    }

    /// The bars from the first send's to the last send's.
    pub fn bars(&self) -> &[u64] {
        let used = self
            .counts
            .iter()
            .rposition(|count| *count > 0)
            .map_or(0, |last| last + 1);
        &self.counts[..used]
    }

    pub fn bar_ms(&self) -> i64 {
        self.width
    }

    /// When bar `index` starts.
    pub fn bar_start(&self, index: usize) -> DateTime<FixedOffset> {
        seoul(self.origin - KST_MS + index as i64 * self.width)
    }

    /// Answered recipients whose send time is missing or out of range (not in the bars).
    pub fn untimed(&self) -> u64 {
        self.untimed
    }
}

fn seoul(millis: i64) -> DateTime<FixedOffset> {
    crate::campaign::quiet::kst()
        .timestamp_millis_opt(millis)
        .single()
        .expect("send times are kept within chrono's range")
}

/// `sends` in summary.json.
#[derive(Serialize)]
struct SendTimesJson {
    first_sent_at: Option<String>,
    last_sent_at: Option<String>,
    duration_ms: Option<i64>,
    /// Recipients per bar of `bar_ms`, from `bars_start_at` (Asia/Seoul).
    bars_start_at: Option<String>,
    bar_ms: i64,
    bars: Vec<u64>,
    untimed: u64,
}

impl From<SendTimes> for SendTimesJson {
    fn from(times: SendTimes) -> SendTimesJson {
        let text = |time: DateTime<FixedOffset>| time.to_rfc3339_opts(chrono::SecondsFormat::Millis, false);
        SendTimesJson {
            first_sent_at: times.first().map(text),
            last_sent_at: times.last().map(text),
            duration_ms: times.duration_ms(),
            bars_start_at: times.range.map(|_| text(times.bar_start(0))),
            bar_ms: times.width,
            bars: times.bars().to_vec(),
            untimed: times.untimed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-23 11:00:00 KST.
    const T0: i64 = 1_795_399_200_000;

    #[test]
    fn sends_within_a_bar_width_stay_in_fine_bars_aligned_to_seoul_time() {
        let mut times = SendTimes::default();
        for offset in [0, 50, 150, 990] {
            times.record(T0 + offset);
        }
        assert_eq!(times.bar_ms(), 100);
        assert_eq!(times.bars(), &[2, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(times.bar_start(0).to_rfc3339(), "2026-11-23T11:00:00+09:00");
        assert_eq!(times.duration_ms(), Some(990));
    }

    #[test]
    fn widening_keeps_every_count_and_memory_stays_fixed() {
        let mut times = SendTimes::default();
        // An hour and a half of sends, out of order, one a second.
        let seconds: Vec<i64> = (0..5_400).map(|i| (i * 7_919) % 5_400).collect();
        for second in &seconds {
            times.record(T0 + second * 1_000);
        }
        assert!(times.bars().len() <= BARS);
        assert_eq!(times.bars().iter().sum::<u64>(), seconds.len() as u64);
        assert_eq!(
            times.bar_ms(),
            120_000,
            "the narrowest width that fits 90 minutes in 60 bars"
        );
        // Two minutes a bar, from 11:00: 120 sends in each.
        assert!(times.bars().iter().all(|count| *count == 120), "{:?}", times.bars());
        assert_eq!(times.first().unwrap().to_rfc3339(), "2026-11-23T11:00:00+09:00");
        assert_eq!(times.last().unwrap().to_rfc3339(), "2026-11-23T12:29:59+09:00");
    }

    #[test]
    fn an_earlier_send_moves_the_first_bar_back() {
        let mut times = SendTimes::default();
        times.record(T0 + 5_000);
        times.record(T0);
        assert_eq!(times.bar_ms(), 100);
        assert_eq!(times.bars().len(), 51);
        assert_eq!((times.bars()[0], times.bars()[50]), (1, 1));
    }

    #[test]
    fn dates_out_of_range_are_counted_apart() {
        let mut times = SendTimes::default();
        for date in [0, -5, i64::MAX] {
            times.record(date);
        }
        assert_eq!(times.untimed(), 3);
        assert!(times.bars().is_empty());
        assert_eq!(times.first(), None);
        let json = serde_json::to_value(&times).unwrap();
        assert_eq!(json["untimed"], 3);
        assert!(json["first_sent_at"].is_null());
    }
}

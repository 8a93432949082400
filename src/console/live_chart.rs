//! The live page's pictures, drawn by the server as SVG: the rate over time (a bounded history of samples, never growing with the recipients) and the answers so far as a stacked bar; and the words they are labelled with.

use super::words::fill;
use super::words::Words;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// The most points the rate history keeps: past it, neighbours are merged two by two and the
/// samples are taken half as often, so a run of hours keeps its whole curve in this many points.
pub const MAX_POINTS: usize = 120;
/// The first spacing of the samples.
const FIRST_EVERY: Duration = Duration::from_secs(1);

/// One stretch of the run: `sent` messages in the `span` seconds that end `at` seconds after the
/// first sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatePoint {
    pub at: f64,
    pub span: f64,
    pub sent: u64,
}

impl RatePoint {
    pub fn rate(&self) -> f64 {
        if self.span > 0.0 {
            self.sent as f64 / self.span
        } else {
            0.0
        }
    }
}

/// Messages sent over time, sampled at most once a spacing (one second, doubled each time the
/// history is full).
#[derive(Debug)]
pub struct RateHistory {
    first: Option<Instant>,
    last: Option<(Instant, u64)>,
    every: Duration,
    points: VecDeque<RatePoint>,
}

impl Default for RateHistory {
    fn default() -> Self {
        RateHistory {
            first: None,
            last: None,
            every: FIRST_EVERY,
            points: VecDeque::new(),
        }
    }
}

impl RateHistory {
    /// Whether a sample taken `now` would be kept (the caller may skip reading the count).
    pub fn due(&self, now: Instant) -> bool {
        self.last
            .is_none_or(|(last, _)| now.saturating_duration_since(last) >= self.every)
    }

    /// Notes that `count` messages had been sent by `now`: kept when a spacing has passed since
    /// the last sample, or when it is the `closing` one (the run's end) and any time has.
    pub fn record(&mut self, now: Instant, count: u64, closing: bool) {
        let Some((last, last_count)) = self.last else {
            self.first = Some(now);
            self.last = Some((now, count));
            return;
        };
        let span = now.saturating_duration_since(last);
        let kept = span >= self.every || (closing && !span.is_zero());
        if !kept {
            return;
        }
        let first = self.first.unwrap_or(last);
        self.points.push_back(RatePoint {
            at: now.saturating_duration_since(first).as_secs_f64(),
            span: span.as_secs_f64(),
            sent: count.saturating_sub(last_count),
        });
        self.last = Some((now, count));
        if self.points.len() > MAX_POINTS {
            self.merge();
        }
    }

    /// Neighbours merged two by two (an odd last point stays as it is); samples half as often.
    fn merge(&mut self) {
        let old = std::mem::take(&mut self.points);
        let mut old = old.into_iter();
        while let Some(first) = old.next() {
            match old.next() {
                Some(second) => self.points.push_back(RatePoint {
                    at: second.at,
                    span: first.span + second.span,
                    sent: first.sent + second.sent,
                }),
                None => self.points.push_back(first),
            }
        }
        self.every *= 2;
    }

    pub fn points(&self) -> Vec<RatePoint> {
        self.points.iter().copied().collect()
    }
}

/// A duration as people read it: `42 s`, `3 min 5 s`, `1 h 2 min` (`42초`, `3분 5초`…).
pub fn duration_text(w: &Words, seconds: u64) -> String {
    let text = |n: u64| crate::text::count(n);
    match seconds {
        0..60 => fill(w.live_s, &[("n", &text(seconds))]),
        60..3600 => fill(w.live_min_s, &[("m", &text(seconds / 60)), ("s", &text(seconds % 60))]),
        3600..172_800 => fill(
            w.live_h_min,
            &[("h", &text(seconds / 3600)), ("m", &text(seconds % 3600 / 60))],
        ),
        // A start scheduled days ahead reads in days, not in thousands of hours.
        _ => fill(
            w.live_d_h,
            &[("d", &text(seconds / 86_400)), ("h", &text(seconds % 86_400 / 3600))],
        ),
    }
}

/// A rate as people read it: `1,234 / s` (`초당 1,234건`); below ten and not whole, one decimal.
pub fn rate_text(w: &Words, rate: f64) -> String {
    let number = if rate > 0.0 && rate < 10.0 && rate.fract() != 0.0 {
        format!("{rate:.1}")
    } else {
        crate::text::count(rate.round() as u64)
    };
    fill(w.live_per_second, &[("n", &number)])
}

/// Text for SVG (the words and figures are ours, but nothing goes out unescaped).
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The smallest of 1, 2, 5 × 10ⁿ at or above `value` (at least 1): the chart's top line.
fn nice_ceiling(value: f64) -> f64 {
    let mut step = 1.0;
    loop {
        for factor in [1.0, 2.0, 5.0] {
            if step * factor >= value {
                return step * factor;
            }
        }
        step *= 10.0;
    }
}

const CHART_WIDTH: f64 = 600.0;
const CHART_HEIGHT: f64 = 150.0;
const CHART_LEFT: f64 = 78.0;
const CHART_RIGHT: f64 = 10.0;
const CHART_TOP: f64 = 10.0;
const CHART_BOTTOM: f64 = 24.0;

/// The rate over time as an SVG line chart: a polyline of the samples, the top rate and zero on
/// the left, the start and the time since on the bottom; titled for screen readers.
pub fn rate_svg(w: &Words, points: &[RatePoint], now: f64) -> String {
    let top = nice_ceiling(points.iter().map(RatePoint::rate).fold(0.0, f64::max));
    let (left, right) = (CHART_LEFT, CHART_WIDTH - CHART_RIGHT);
    let (high, low) = (CHART_TOP, CHART_HEIGHT - CHART_BOTTOM);
    let title = fill(
        w.live_chart_title,
        &[("now", &rate_text(w, now)), ("max", &rate_text(w, top))],
    );
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="rate-chart" viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}" role="img" aria-label="{title}"><title>{title}</title>"#,
        title = escape(&title)
    );
    for (y, label) in [(high, rate_text(w, top)), (low, rate_text(w, 0.0))] {
        let _ = write!(
            svg,
            r#"<line class="grid" x1="{left}" y1="{y}" x2="{right}" y2="{y}"/><text class="tick" x="{x}" y="{ty:.1}" text-anchor="end">{label}</text>"#,
            x = left - 6.0,
            ty = y + 4.0,
            label = escape(&label)
        );
    }
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        let _ = write!(
            svg,
            r#"<text class="waiting" x="{x}" y="{y}" text-anchor="middle">{text}</text></svg>"#,
            x = (left + right) / 2.0,
            y = (high + low) / 2.0,
            text = escape(w.live_chart_waiting)
        );
        return svg;
    };
    let start = first.at - first.span;
    let length = (last.at - start).max(f64::EPSILON);
    let x = |at: f64| left + (at - start) / length * (right - left);
    let y = |rate: f64| low - rate / top * (low - high);
    let mut line = format!("{:.1},{:.1}", x(start), y(first.rate()));
    for point in points {
        let _ = write!(line, " {:.1},{:.1}", x(point.at), y(point.rate()));
    }
    let _ = write!(
        svg,
        r#"<polyline class="rate-line" points="{line}"/><text class="tick" x="{left}" y="{by}">{start_word}</text><text class="tick" x="{right}" y="{by}" text-anchor="end">{elapsed}</text></svg>"#,
        by = CHART_HEIGHT - 6.0,
        start_word = escape(w.live_start),
        elapsed = escape(&duration_text(w, last.at.round() as u64)),
    );
    svg
}

/// What the stacked bar is made of, each a share of every recipient to send.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shares {
    pub accepted: u64,
    pub not_accepted: u64,
    pub uncertain: u64,
    pub in_flight: u64,
    pub pending: u64,
}

/// The answers so far as one bar of segments (accepted, not accepted, uncertain, in flight,
/// pending), each as wide as its share; each segment titled with its word and figure.
pub fn stack_svg(w: &Words, shares: &Shares) -> String {
    let segments = [
        ("accepted", w.accepted, shares.accepted),
        ("not-accepted", w.not_accepted, shares.not_accepted),
        ("uncertain", w.uncertain, shares.uncertain),
        ("in-flight", w.in_flight, shares.in_flight),
        ("pending", w.pending, shares.pending),
    ];
    let total: u64 = segments.iter().map(|(_, _, count)| count).sum();
    let label = segments
        .iter()
        .map(|(_, word, count)| format!("{word} {}", crate::text::count(*count)))
        .collect::<Vec<_>>()
        .join(", ");
    let mut svg = format!(
        r#"<svg class="stack" viewBox="0 0 1000 24" preserveAspectRatio="none" role="img" aria-label="{label}"><title>{label}</title>"#,
        label = escape(&label)
    );
    if total == 0 {
        svg.push_str(r#"<rect class="seg empty" x="0" y="0" width="1000" height="24"/></svg>"#);
        return svg;
    }
    let mut x = 0.0;
    for (class, word, count) in segments {
        if count == 0 {
            continue;
        }
        let width = count as f64 / total as f64 * 1000.0;
        let _ = write!(
            svg,
            r#"<rect class="seg {class}" x="{x:.2}" y="0" width="{width:.2}" height="24"><title>{title}</title></rect>"#,
            title = escape(&format!("{word} {}", crate::text::count(count)))
        );
        x += width;
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::words::{EN, KO};

    #[test]
    fn the_history_stays_bounded_and_keeps_the_whole_run() {
        let mut history = RateHistory::default();
        let start = Instant::now();
        // Ten hours of a run at 7 a second, looked at ten times a second.
        for tenth in 0..360_000u64 {
            let now = start + Duration::from_millis(tenth * 100);
            if history.due(now) {
                history.record(now, tenth * 7 / 10, false);
            }
        }
        // Samples are sparse by now (minutes apart); the run's end is sampled whatever the spacing.
        assert!(history.points().last().unwrap().at > 30_000.0);
        history.record(start + Duration::from_millis(359_999 * 100), 359_999 * 7 / 10, true);
        let points = history.points();
        assert!(points.len() <= MAX_POINTS, "{}", points.len());
        assert!(points.len() > MAX_POINTS / 4, "{}", points.len());
        let sent: u64 = points.iter().map(|p| p.sent).sum();
        assert!(sent > 250_000 - 2_000, "every stretch is counted: {sent}");
        assert!(points.last().unwrap().at > 35_900.0, "the whole run");
        for point in &points[1..] {
            assert!((point.rate() - 7.0).abs() < 0.5, "{point:?}");
        }
    }

    #[test]
    fn the_chart_draws_the_samples_and_says_what_it_shows() {
        let points = [
            RatePoint {
                at: 1.0,
                span: 1.0,
                sent: 4,
            },
            RatePoint {
                at: 2.0,
                span: 1.0,
                sent: 8,
            },
        ];
        let svg = rate_svg(&KO, &points, 8.0);
        assert!(svg.starts_with("<svg class=\"rate-chart\""), "{svg}");
        assert!(svg.contains("초당 8건") && svg.contains("초당 10건"), "{svg}");
        let line = svg.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(line.split(' ').count(), 3, "the start and two samples: {line}");
        let empty = rate_svg(&EN, &[], 0.0);
        assert!(empty.contains(EN.live_chart_waiting) && !empty.contains("polyline"));
    }

    #[test]
    fn the_stack_is_as_wide_as_the_shares() {
        let svg = stack_svg(
            &EN,
            &Shares {
                accepted: 1_500,
                not_accepted: 500,
                uncertain: 0,
                in_flight: 0,
                pending: 2_000,
            },
        );
        assert!(
            svg.contains(r#"class="seg accepted" x="0.00" y="0" width="375.00""#),
            "{svg}"
        );
        assert!(
            svg.contains(r#"class="seg pending" x="500.00" y="0" width="500.00""#),
            "{svg}"
        );
        assert!(!svg.contains("seg uncertain"), "no empty segment: {svg}");
        assert!(svg.contains("Accepted 1,500"), "{svg}");
    }

    #[test]
    fn durations_and_rates_read_in_the_pages_language() {
        assert_eq!(duration_text(&EN, 185), "3 min 5 s");
        assert_eq!(duration_text(&KO, 3_720), "1시간 2분");
        assert_eq!(duration_text(&KO, 3 * 86_400 + 2 * 3600 + 59), "3일 2시간");
        assert_eq!(duration_text(&EN, 47 * 3600), "47 h 0 min");
        assert_eq!(rate_text(&EN, 1_234.4), "1,234 / s");
        assert_eq!(rate_text(&KO, 0.0), "초당 0건");
        assert_eq!(rate_text(&EN, 2.5), "2.5 / s");
    }
}

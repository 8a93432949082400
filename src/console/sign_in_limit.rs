//! The sign-in limits: failures counted per (name, client) and per client, with a slower limit per name across clients, so that a stranger cannot lock a real user out and guessing stays slow; the client is told by `client_address.rs`.

use super::error::ConsoleError;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv6Addr};
use std::time::{Duration, Instant};

/// Failed sign-ins allowed for one name from one client within [`CLIENT_WINDOW`]: the guesser is
/// slowed, and only the guesser.
const FAILURES_PER_NAME_AND_CLIENT: usize = 5;
/// Failed sign-ins allowed from one client across all names within [`CLIENT_WINDOW`]: a client
/// trying many names (made up or not) is stopped, and it alone.
const FAILURES_PER_CLIENT: usize = 20;
const CLIENT_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Failed sign-ins allowed for one name from everywhere within [`NAME_WINDOW`]: guessing one
/// person's password from many addresses stays slow. A client the name signed in from lately is
/// exempt, so a crowd of strangers cannot lock the person out of their usual place.
const FAILURES_PER_NAME: usize = 50;
const NAME_WINDOW: Duration = Duration::from_secs(60 * 60);
/// How long, and how many, clients a name signed in from count as its own.
const KNOWN_CLIENT_MEMORY: Duration = Duration::from_secs(30 * 24 * 60 * 60);
const KNOWN_CLIENTS_PER_NAME: usize = 8;
/// User names have at most 40 characters: a longer one is kept cut at 41, which is nobody's name,
/// so a stranger cannot make the limiter hold megabytes of names.
const LONGEST_NAME_KEPT: usize = 41;
/// Entries one table keeps before the oldest are forgotten: only a flood from very many addresses
/// gets there, and memory stays bounded even then.
const MOST_ENTRIES: usize = 100_000;
/// Expired entries are swept after this many attempts (the sweep reads every entry).
const PRUNE_EVERY: usize = 1024;

// One stranger at one client must never reach the per-name limit alone, or they could lock the
// person out everywhere: the most failures of one name they can make in a `NAME_WINDOW` stay below it.
const ONE_CLIENTS_MOST_FAILURES_OF_A_NAME: usize =
    FAILURES_PER_NAME_AND_CLIENT * NAME_WINDOW.as_secs().div_ceil(CLIENT_WINDOW.as_secs()) as usize;
const _: () = assert!(ONE_CLIENTS_MOST_FAILURES_OF_A_NAME < FAILURES_PER_NAME);

/// Where failures are counted: an IPv4 address, or an IPv6 address's /64, since one subscriber
/// is commonly given a whole /64 and could otherwise take a fresh address for every guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Origin(IpAddr);

impl Origin {
    fn of(address: IpAddr) -> Origin {
        match address.to_canonical() {
            IpAddr::V6(address) => Origin(IpAddr::V6(Ipv6Addr::from(u128::from(address) & !u128::from(u64::MAX)))),
            address => Origin(address),
        }
    }
}

/// A name as the limiter counts it: case does not make a fresh name, length is bounded.
fn name_key(name: &str) -> String {
    name.chars()
        .take(LONGEST_NAME_KEPT)
        .flat_map(char::to_lowercase)
        .collect()
}

/// The times of the latest failures, oldest first, no more than the limit needs to see.
#[derive(Default)]
struct Recent(VecDeque<Instant>);

impl Recent {
    fn forget_before(&mut self, now: Instant, window: Duration) {
        while self.0.front().is_some_and(|at| now.duration_since(*at) >= window) {
            self.0.pop_front();
        }
    }

    fn count(&mut self, now: Instant, window: Duration) -> usize {
        self.forget_before(now, window);
        self.0.len()
    }

    /// Whether any failure is still within `window` (those that are not are forgotten).
    fn still_counted(&mut self, now: Instant, window: Duration) -> bool {
        self.forget_before(now, window);
        !self.0.is_empty()
    }

    fn push(&mut self, at: Instant, keep: usize) {
        self.0.push_back(at);
        while self.0.len() > keep {
            self.0.pop_front();
        }
    }

    fn take_back(&mut self, at: Instant) {
        if let Some(position) = self.0.iter().rposition(|time| *time == at) {
            self.0.remove(position);
        }
    }

    fn latest(&self) -> Option<Instant> {
        self.0.back().copied()
    }

    /// Whole minutes until the oldest counted failure is forgotten (and one more attempt allowed).
    fn minutes_left(&self, now: Instant, window: Duration) -> u64 {
        let left = self.0.front().map_or(Duration::ZERO, |oldest| {
            window.saturating_sub(now.duration_since(*oldest))
        });
        left.as_secs().div_ceil(60).max(1)
    }
}

/// Forgets the entries whose latest failure is oldest until about three quarters of `most` remain.
fn keep_newest<K: Eq + std::hash::Hash>(table: &mut HashMap<K, Recent>, most: usize) {
    if table.len() <= most {
        return;
    }
    let keep = most * 3 / 4;
    let mut latest: Vec<Instant> = table.values().filter_map(Recent::latest).collect();
    latest.sort_unstable();
    if latest.len() > keep {
        let cutoff = latest[latest.len() - keep];
        table.retain(|_, recent| recent.latest().is_some_and(|at| at >= cutoff));
    }
}

fn too_many(what: &str, minutes: u64) -> ConsoleError {
    ConsoleError::TooMany(format!(
        "too many failed sign-ins {what}: wait {minutes} minutes, or ask an administrator for a new sign-in link"
    ))
}

#[derive(Default)]
struct Failures {
    by_name_and_client: HashMap<(String, Origin), Recent>,
    by_client: HashMap<Origin, Recent>,
    by_name: HashMap<String, Recent>,
    /// The clients each name signed in from, and when: exempt from the per-name limit.
    known: HashMap<String, VecDeque<(Origin, Instant)>>,
    attempts_since_pruning: usize,
}

impl Failures {
    fn refuse_if_over(&mut self, name: &str, origin: Origin, now: Instant) -> Result<(), ConsoleError> {
        if let Some(recent) = self.by_name_and_client.get_mut(&(name.to_string(), origin)) {
            if recent.count(now, CLIENT_WINDOW) >= FAILURES_PER_NAME_AND_CLIENT {
                return Err(too_many(
                    "for this user from your address",
                    recent.minutes_left(now, CLIENT_WINDOW),
                ));
            }
        }
        if let Some(recent) = self.by_client.get_mut(&origin) {
            if recent.count(now, CLIENT_WINDOW) >= FAILURES_PER_CLIENT {
                return Err(too_many("from your address", recent.minutes_left(now, CLIENT_WINDOW)));
            }
        }
        if !self.is_known(name, origin, now) {
            if let Some(recent) = self.by_name.get_mut(name) {
                if recent.count(now, NAME_WINDOW) >= FAILURES_PER_NAME {
                    return Err(too_many(
                        "for this user from many addresses (where this user signed in lately, signing in still works)",
                        recent.minutes_left(now, NAME_WINDOW),
                    ));
                }
            }
        }
        Ok(())
    }

    fn is_known(&self, name: &str, origin: Origin, now: Instant) -> bool {
        self.known.get(name).is_some_and(|clients| {
            clients
                .iter()
                .any(|(client, at)| *client == origin && now.duration_since(*at) < KNOWN_CLIENT_MEMORY)
        })
    }

    fn count_failure(&mut self, name: &str, origin: Origin, now: Instant) {
        self.by_name_and_client
            .entry((name.to_string(), origin))
            .or_default()
            .push(now, FAILURES_PER_NAME_AND_CLIENT);
        self.by_client.entry(origin).or_default().push(now, FAILURES_PER_CLIENT);
        self.by_name
            .entry(name.to_string())
            .or_default()
            .push(now, FAILURES_PER_NAME);
        self.attempts_since_pruning += 1;
        if self.attempts_since_pruning >= PRUNE_EVERY || self.by_name_and_client.len() > MOST_ENTRIES {
            self.prune(now);
        }
    }

    fn prune(&mut self, now: Instant) {
        self.attempts_since_pruning = 0;
        self.by_name_and_client
            .retain(|_, recent| recent.still_counted(now, CLIENT_WINDOW));
        self.by_client
            .retain(|_, recent| recent.still_counted(now, CLIENT_WINDOW));
        self.by_name.retain(|_, recent| recent.still_counted(now, NAME_WINDOW));
        self.known.retain(|_, clients| {
            clients.retain(|(_, at)| now.duration_since(*at) < KNOWN_CLIENT_MEMORY);
            !clients.is_empty()
        });
        keep_newest(&mut self.by_name_and_client, MOST_ENTRIES);
        keep_newest(&mut self.by_client, MOST_ENTRIES);
        keep_newest(&mut self.by_name, MOST_ENTRIES);
    }

    #[cfg(test)]
    fn entries(&self) -> usize {
        self.by_name_and_client.len() + self.by_client.len() + self.by_name.len()
    }
}

/// A sign-in under way. It counts as failed from the start until [`SignInLimiter::succeeded`]
/// takes it back, so many attempts sent at once cannot all pass before the first one fails.
#[must_use = "a sign-in counts as failed unless `succeeded` is told otherwise"]
pub struct Attempt {
    name: String,
    origin: Origin,
    at: Instant,
}

/// Failed sign-ins per (name, client), per client, and per name; see the constants above for the
/// limits and why each exists.
#[derive(Default)]
pub struct SignInLimiter {
    failures: parking_lot::Mutex<Failures>,
}

impl SignInLimiter {
    /// Refuses before the password is even checked once a limit is reached; otherwise counts the
    /// attempt as failed until it succeeds. `client` is the client's address
    /// ([`super::client_address::TrustedProxies::client_address`]).
    pub fn attempt(&self, name: &str, client: IpAddr) -> Result<Attempt, ConsoleError> {
        self.attempt_at(name, client, Instant::now())
    }

    fn attempt_at(&self, name: &str, client: IpAddr, now: Instant) -> Result<Attempt, ConsoleError> {
        let name = name_key(name);
        let origin = Origin::of(client);
        let mut failures = self.failures.lock();
        failures.refuse_if_over(&name, origin, now)?;
        failures.count_failure(&name, origin, now);
        Ok(Attempt { name, origin, at: now })
    }

    /// The password was right: this name's failures from this client are forgiven and the client
    /// becomes one of the name's own. The client's failures under other names stay counted, or a
    /// stranger with an account could sign in between guesses to keep guessing.
    pub fn succeeded(&self, attempt: Attempt) {
        let mut failures = self.failures.lock();
        failures
            .by_name_and_client
            .remove(&(attempt.name.clone(), attempt.origin));
        if let Some(recent) = failures.by_client.get_mut(&attempt.origin) {
            recent.take_back(attempt.at);
        }
        if let Some(recent) = failures.by_name.get_mut(&attempt.name) {
            recent.take_back(attempt.at);
        }
        let clients = failures.known.entry(attempt.name).or_default();
        clients.retain(|(client, _)| *client != attempt.origin);
        clients.push_back((attempt.origin, attempt.at));
        while clients.len() > KNOWN_CLIENTS_PER_NAME {
            clients.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    const MINUTE: Duration = Duration::from_secs(60);

    /// `count` failed sign-ins of `name` from `client`, each allowed, the time moving on a second each.
    fn fail(limiter: &SignInLimiter, name: &str, client: &str, count: usize, now: &mut Instant) {
        for _ in 0..count {
            let attempt = limiter.attempt_at(name, ip(client), *now);
            assert!(attempt.is_ok(), "{name} from {client} may still try");
            *now += Duration::from_secs(1);
        }
    }

    #[test]
    fn five_failures_of_one_name_refuse_that_name_from_that_client_only() {
        let limiter = SignInLimiter::default();
        let mut now = Instant::now();
        fail(&limiter, "Mina", "203.0.113.9", FAILURES_PER_NAME_AND_CLIENT, &mut now);
        assert!(
            limiter.attempt_at("mina", ip("203.0.113.9"), now).is_err(),
            "case makes no fresh name"
        );
        assert!(limiter.attempt_at("other", ip("203.0.113.9"), now).is_ok());
        assert!(
            limiter.attempt_at("mina", ip("198.51.100.7"), now).is_ok(),
            "mina herself, elsewhere"
        );
        // Forgotten after the window.
        assert!(limiter
            .attempt_at("mina", ip("203.0.113.9"), now + CLIENT_WINDOW)
            .is_ok());
    }

    #[test]
    fn twenty_failures_under_made_up_names_refuse_that_client_only() {
        let limiter = SignInLimiter::default();
        let mut now = Instant::now();
        for n in 0..FAILURES_PER_CLIENT {
            fail(&limiter, &format!("made-up-{n}"), "203.0.113.9", 1, &mut now);
        }
        let refused = limiter.attempt_at("admin", ip("203.0.113.9"), now).err().unwrap();
        assert!(refused.to_string().contains("from your address"), "{refused}");
        assert!(limiter.attempt_at("admin", ip("198.51.100.7"), now).is_ok());
    }

    #[test]
    fn one_client_alone_never_reaches_the_per_name_limit() {
        let limiter = SignInLimiter::default();
        let start = Instant::now();
        // A guess every 20 seconds for three hours; between guesses the admin signs in, each time
        // from a place the limiter has not seen (so no exemption helps).
        for step in 0..(3 * 60 * 3u32) {
            let now = start + Duration::from_secs(20 * u64::from(step));
            let _ = limiter.attempt_at("admin", ip("203.0.113.9"), now);
            let elsewhere = IpAddr::from(std::net::Ipv4Addr::from(0xc633_6400 + step));
            let admin = limiter.attempt_at("admin", elsewhere, now);
            assert!(admin.is_ok(), "the admin from {elsewhere} after {step} guesses");
            limiter.succeeded(admin.unwrap());
        }
    }

    #[test]
    fn the_per_name_limit_refuses_new_clients_but_not_where_the_name_signed_in() {
        let limiter = SignInLimiter::default();
        let mut now = Instant::now();
        let home = limiter.attempt_at("admin", ip("198.51.100.7"), now).unwrap();
        limiter.succeeded(home);
        for client in 0..FAILURES_PER_NAME {
            fail(
                &limiter,
                "admin",
                &format!("10.0.{}.{}", client / 200, client % 200 + 1),
                1,
                &mut now,
            );
        }
        let refused = limiter.attempt_at("admin", ip("192.0.2.44"), now).err().unwrap();
        assert!(refused.to_string().contains("many addresses"), "{refused}");
        assert!(limiter.attempt_at("someone-else", ip("192.0.2.44"), now).is_ok());
        assert!(
            limiter.attempt_at("admin", ip("198.51.100.7"), now).is_ok(),
            "the admin's own place is exempt"
        );
        assert!(limiter.attempt_at("admin", ip("192.0.2.44"), now + NAME_WINDOW).is_ok());
    }

    #[test]
    fn a_success_forgives_that_name_there_but_not_the_clients_other_failures() {
        let limiter = SignInLimiter::default();
        let mut now = Instant::now();
        fail(
            &limiter,
            "mina",
            "203.0.113.9",
            FAILURES_PER_NAME_AND_CLIENT - 1,
            &mut now,
        );
        for n in 0..(FAILURES_PER_CLIENT - FAILURES_PER_NAME_AND_CLIENT) {
            fail(&limiter, &format!("other-{n}"), "203.0.113.9", 1, &mut now);
        }
        let right = limiter.attempt_at("mina", ip("203.0.113.9"), now).unwrap();
        limiter.succeeded(right);
        // Mina's four failures are forgiven, but the client's 19 failures stay: one more fills 20.
        fail(&limiter, "mina", "203.0.113.9", 1, &mut now);
        assert!(limiter.attempt_at("mina", ip("203.0.113.9"), now).is_err());
    }

    #[test]
    fn attempts_under_way_count_before_they_fail() {
        let limiter = SignInLimiter::default();
        let now = Instant::now();
        let under_way: Vec<Attempt> = (0..FAILURES_PER_NAME_AND_CLIENT)
            .map(|_| limiter.attempt_at("admin", ip("203.0.113.9"), now).unwrap())
            .collect();
        assert!(limiter.attempt_at("admin", ip("203.0.113.9"), now).is_err());
        drop(under_way);
    }

    #[test]
    fn addresses_of_one_ipv6_64_are_one_client_and_mapped_ipv4_is_ipv4() {
        let limiter = SignInLimiter::default();
        let mut now = Instant::now();
        for n in 1..=FAILURES_PER_NAME_AND_CLIENT {
            fail(&limiter, "admin", &format!("2001:db8:0:7::{n:x}"), 1, &mut now);
        }
        assert!(limiter.attempt_at("admin", ip("2001:db8:0:7:ffff::1"), now).is_err());
        assert!(limiter.attempt_at("admin", ip("2001:db8:0:8::1"), now).is_ok());
        fail(&limiter, "mina", "203.0.113.9", FAILURES_PER_NAME_AND_CLIENT, &mut now);
        assert!(limiter.attempt_at("mina", ip("::ffff:203.0.113.9"), now).is_err());
    }

    #[test]
    fn long_names_are_kept_short() {
        let long = "x".repeat(1 << 20);
        assert_eq!(name_key(&long).len(), LONGEST_NAME_KEPT);
        assert_eq!(name_key("Mina.Kim@Example"), "mina.kim@example");
    }

    #[test]
    fn expired_entries_are_swept_and_a_full_table_keeps_its_newest() {
        let limiter = SignInLimiter::default();
        let start = Instant::now();
        for n in 0..PRUNE_EVERY as u32 - 1 {
            let client = IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            let _ = limiter.attempt_at(&format!("name-{n}"), client, start);
        }
        assert_eq!(limiter.failures.lock().entries(), 3 * (PRUNE_EVERY - 1));
        // The sweep after two hours leaves only the attempt that triggered it.
        let _ = limiter.attempt_at("late", ip("192.0.2.1"), start + 2 * NAME_WINDOW);
        assert_eq!(limiter.failures.lock().entries(), 3);

        let mut table: HashMap<u32, Recent> = HashMap::new();
        for n in 0..11u32 {
            table
                .entry(n)
                .or_default()
                .push(start + Duration::from_secs(n.into()), 5);
        }
        keep_newest(&mut table, 10);
        let mut kept: Vec<u32> = table.keys().copied().collect();
        kept.sort_unstable();
        assert_eq!(kept, vec![4, 5, 6, 7, 8, 9, 10], "three quarters of 10, the newest");
    }

    #[test]
    fn a_refusal_says_how_long_to_wait() {
        let limiter = SignInLimiter::default();
        let mut now = Instant::now();
        fail(&limiter, "admin", "203.0.113.9", FAILURES_PER_NAME_AND_CLIENT, &mut now);
        let refused = limiter
            .attempt_at("admin", ip("203.0.113.9"), now + 10 * MINUTE)
            .err()
            .unwrap();
        assert!(refused.to_string().contains("wait 5 minutes"), "{refused}");
    }
}

//! Template variables of one recipient entry (`VAR1`, `VAR2`, ...): a JSON object on the wire, a few pairs held inline in memory.

use compact_str::CompactString;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use smallvec::SmallVec;
use std::fmt;

/// Template variables of one recipient: `VAR1`, `VAR2`, ... (and any other key the caller maps).
/// A request carries one set per recipient, so the pairs are held in place, each text inline up
/// to 24 bytes: building a recipient's set allocates nothing for the usual two or three short
/// values. Keys are unique, a later value replacing the earlier as in a JSON object; two sets are
/// equal when they hold the same pairs, in any order.
#[derive(Debug, Clone, Default)]
pub struct Variables(SmallVec<[(CompactString, CompactString); 3]>);

impl Variables {
    pub fn new() -> Variables {
        Variables::default()
    }

    /// The value of `key`, if the set has it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    /// Sets `key` to `value`, replacing the value it had.
    pub fn insert(&mut self, key: impl Into<CompactString>, value: impl Into<CompactString>) {
        let (key, value) = (key.into(), value.into());
        match self.0.iter_mut().find(|(name, _)| *name == key) {
            Some((_, old)) => *old = value,
            None => self.0.push((key, value)),
        }
    }

    /// The pairs, in the order they were first set.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(key, value)| (key.as_str(), value.as_str()))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl PartialEq for Variables {
    fn eq(&self, other: &Variables) -> bool {
        self.len() == other.len() && self.iter().all(|(key, value)| other.get(key) == Some(value))
    }
}

impl<K: Into<CompactString>, V: Into<CompactString>> FromIterator<(K, V)> for Variables {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Variables {
        let mut variables = Variables::new();
        for (key, value) in pairs {
            variables.insert(key, value);
        }
        variables
    }
}

impl Serialize for Variables {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Variables {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Variables, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = Variables;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("template variables: an object of texts")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Variables, A::Error> {
                let mut variables = Variables::new();
                while let Some((key, value)) = map.next_entry::<String, String>()? {
                    variables.insert(key, value);
                }
                Ok(variables)
            }
        }
        deserializer.deserialize_map(Pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_later_value_of_a_key_replaces_the_earlier_and_order_does_not_matter_to_equality() {
        let mut variables: Variables = [("VAR1", "A"), ("VAR2", "B")].into_iter().collect();
        variables.insert("VAR1", "C");
        assert_eq!(variables.get("VAR1"), Some("C"));
        assert_eq!(variables.len(), 2);
        let reversed: Variables = [("VAR2", "B"), ("VAR1", "C")].into_iter().collect();
        assert_eq!(variables, reversed);
        assert_ne!(variables, [("VAR1", "C")].into_iter().collect());
    }

    #[test]
    fn a_value_that_is_not_text_is_refused() {
        assert!(serde_json::from_str::<Variables>(r#"{"VAR1": 5}"#).is_err());
    }

    proptest! {
        /// The wire form is the JSON object a map of the same pairs gives, read back the same.
        #[test]
        fn json_is_the_object_of_the_pairs(pairs in proptest::collection::vec(("[A-Z0-9_]{1,8}", "\\PC{0,30}"), 0..6)) {
            let variables: Variables = pairs.iter().cloned().collect();
            let map: std::collections::BTreeMap<String, String> = pairs.iter().cloned().collect();
            let json = serde_json::to_value(&variables).unwrap();
            prop_assert_eq!(&json, &serde_json::to_value(&map).unwrap());
            let back: Variables = serde_json::from_value(json).unwrap();
            prop_assert_eq!(back, variables);
        }
    }
}

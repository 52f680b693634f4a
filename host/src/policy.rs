//! Which guest targets an operator allows. Deny by default: an empty
//! allow-list allows nothing, and only allowed targets are registered.

use std::collections::BTreeSet;
use std::fmt;

/// The targets guests may serve (`--allow T`, repeatable, or `--allow-all`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    all: bool,
    targets: BTreeSet<String>,
}

impl AllowList {
    /// Allows nothing (the default).
    pub fn none() -> AllowList {
        AllowList::default()
    }

    /// Allows every target any guest declares (`--allow-all`).
    pub fn all() -> AllowList {
        AllowList {
            all: true,
            targets: BTreeSet::new(),
        }
    }

    /// Allows exactly these targets (`--allow T ...`).
    pub fn targets<I, S>(targets: I) -> AllowList
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        AllowList {
            all: false,
            targets: targets.into_iter().map(Into::into).collect(),
        }
    }

    /// Adds one target.
    pub fn allow(&mut self, target: impl Into<String>) -> &mut AllowList {
        self.targets.insert(target.into());
        self
    }

    /// Whether `target` may be registered.
    pub fn allows(&self, target: &str) -> bool {
        self.all || self.targets.contains(target)
    }

    /// Whether this is `--allow-all`.
    pub fn allows_all(&self) -> bool {
        self.all
    }

    /// The targets named explicitly, sorted.
    pub fn named(&self) -> impl Iterator<Item = &str> {
        self.targets.iter().map(String::as_str)
    }
}

impl fmt::Display for AllowList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.all {
            return f.write_str("all targets");
        }
        if self.targets.is_empty() {
            return f.write_str("no targets");
        }
        for (i, target) in self.targets.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{target}`")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_by_default() {
        assert!(!AllowList::none().allows("x"));
        assert!(AllowList::all().allows("x"));
        let list = AllowList::targets(["a", "b"]);
        assert!(list.allows("a") && !list.allows("c"));
        assert_eq!(list.to_string(), "`a`, `b`");
        assert_eq!(AllowList::none().to_string(), "no targets");
    }
}

//! Which guest targets an operator allows. Deny by default: an empty
//! allow-list allows nothing, and only allowed targets are registered.

use std::collections::BTreeSet;
use std::fmt;

/// The targets guests may serve (`--allow T`, repeatable, or `--allow-all`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    all: bool,
    targets: BTreeSet<String>,
    /// Glob patterns (`*` any run of characters, `?` one character).
    patterns: BTreeSet<String>,
    /// Targets refused whatever the rules say (see [`AllowList::except`]).
    denied: BTreeSet<String>,
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
            patterns: BTreeSet::new(),
            denied: BTreeSet::new(),
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
            patterns: BTreeSet::new(),
            denied: BTreeSet::new(),
        }
    }

    /// An allow-list from rules: target names, glob patterns (`scale_*`,
    /// `rms_norm_?wd`), or `*` alone for every target.
    ///
    /// # Errors
    ///
    /// A rule that is neither a target name nor a pattern of name
    /// characters, or `*` beside other rules.
    pub fn from_rules<'a>(rules: impl IntoIterator<Item = &'a str>) -> Result<AllowList, String> {
        let rules: Vec<&str> = rules
            .into_iter()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .collect();
        if rules.iter().any(|r| *r == "*" || *r == "all") {
            if rules.len() > 1 {
                return Err("`*` (all targets) cannot be combined with other rules".to_owned());
            }
            return Ok(AllowList::all());
        }
        let mut list = AllowList::none();
        for rule in rules {
            if !rule
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-$*?".contains(c))
            {
                return Err(format!(
                    "`{rule}` is not a target name or pattern (letters, digits, `_`, `.`, `-`, \
                     `$`; `*` and `?` in patterns)"
                ));
            }
            if rule.contains(['*', '?']) {
                list.patterns.insert(rule.to_owned());
            } else {
                list.targets.insert(rule.to_owned());
            }
        }
        Ok(list)
    }

    /// Adds one target.
    pub fn allow(&mut self, target: impl Into<String>) -> &mut AllowList {
        self.targets.insert(target.into());
        self
    }

    /// Whether `target` may be registered.
    pub fn allows(&self, target: &str) -> bool {
        !self.denied.contains(target) && self.allows_by_rule(target)
    }

    /// This list less `targets` (served elsewhere, or refused by a pin).
    pub fn except<'a>(&self, targets: impl IntoIterator<Item = &'a str>) -> AllowList {
        let mut list = self.clone();
        list.denied.extend(targets.into_iter().map(str::to_owned));
        list
    }

    fn allows_by_rule(&self, target: &str) -> bool {
        self.all
            || self.targets.contains(target)
            || self
                .patterns
                .iter()
                .any(|p| glob(p.as_bytes(), target.as_bytes()))
    }

    /// The rule that allows `target`: `*`, its name, or a pattern.
    pub fn rule_for(&self, target: &str) -> Option<&str> {
        if self.denied.contains(target) {
            return None;
        }
        if self.all {
            return Some("*");
        }
        if let Some(name) = self.targets.get(target) {
            return Some(name);
        }
        self.patterns
            .iter()
            .find(|p| glob(p.as_bytes(), target.as_bytes()))
            .map(String::as_str)
    }

    /// Whether this is `--allow-all`.
    pub fn allows_all(&self) -> bool {
        self.all
    }

    /// The targets named explicitly (and not excepted), sorted.
    pub fn named(&self) -> impl Iterator<Item = &str> {
        self.targets
            .iter()
            .filter(|t| !self.denied.contains(*t))
            .map(String::as_str)
    }
}

impl fmt::Display for AllowList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.all {
            return f.write_str("all targets");
        }
        if self.targets.is_empty() && self.patterns.is_empty() {
            return f.write_str("no targets");
        }
        for (i, target) in self.targets.iter().chain(&self.patterns).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{target}`")?;
        }
        Ok(())
    }
}

/// Whether `text` matches the glob `pattern` (`*`: any run, `?`: one byte).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative matching with one backtrack point: linear in practice.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
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

    #[test]
    fn rules_take_names_and_patterns() {
        let list = AllowList::from_rules(["rms_norm", "scale_*", "tri?iag_solve"]).unwrap();
        for yes in ["rms_norm", "scale_any", "scale_", "tridiag_solve"] {
            assert!(list.allows(yes), "{yes}");
        }
        for no in ["rms_norm_fwd", "scal", "xscale_any", "tridiag_solve2"] {
            assert!(!list.allows(no), "{no}");
        }
        assert_eq!(list.rule_for("scale_any"), Some("scale_*"));
        assert_eq!(list.named().collect::<Vec<_>>(), ["rms_norm"]);
        assert!(AllowList::from_rules(["*"]).unwrap().allows_all());
        assert!(AllowList::from_rules(["*", "a"]).is_err());
        assert!(AllowList::from_rules(["a b"]).is_err());
        assert!(glob(b"*a*b*", b"xxaxxbxx") && !glob(b"*a*b", b"xxaxxbxx"));
        let fewer = list.except(["scale_any", "rms_norm"]);
        assert!(!fewer.allows("scale_any") && fewer.allows("scale_x") && !fewer.allows("rms_norm"));
        assert_eq!(fewer.named().count(), 0);
    }
}

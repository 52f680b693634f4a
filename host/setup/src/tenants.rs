//! Tenant policy: one TOML file, owned by the operator, that names tenants
//! and says what each gets: guests folders, allowed targets (names, globs,
//! `*`), limits, LAPACK, native registrations from client code, sha256
//! pins of guest modules, and which Unix users and groups are which tenant.
//!
//! ```toml
//! default_tenant = "guest"          # for users the maps below do not name
//!
//! [defaults]                        # every tenant, unless it says otherwise
//! guests = ["/srv/cyxla/shared"]    # earlier folders win a target
//! allow = ["rms_norm*"]
//! allow_native = false
//! [defaults.limits]
//! call_timeout = "2s"
//!
//! [tenants.research]
//! guests = ["/srv/cyxla/shared", "~/cyxla"]   # `~`, `$USER`: the user's
//! allow = ["*"]
//! pins = { rms_norm = "<sha256 of the module that must serve it>" }
//! [tenants.guest]
//!
//! [users]
//! alice = "research"
//! [groups]
//! students = "guest"
//! ```
//!
//! Which tenant a process is: the one the `[users]` or `[groups]` maps give
//! its Unix user, which `--tenant` / `CYXLA_TENANT` cannot change; else the
//! tenant those name; else `default_tenant`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::config::{Config, TenantSettings};
pub use crate::config::{MAX_DEVICES, POLICY_ENV, TENANT_ENV, Tenant};
use crate::settings::{Located, Paths};
use cyxla_sandbox::toml_error::{line_column, toml_error};

/// The policy file as written: every key optional, unknown keys rejected.
/// What a tenant (or `[defaults]`) may say are the tenant keys of the
/// settings table ([`crate::config::SETTINGS`]).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    default_tenant: Option<Spanned<String>>,
    #[serde(default)]
    defaults: TenantSettings,
    #[serde(default)]
    tenants: BTreeMap<String, TenantSettings>,
    #[serde(default)]
    users: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    groups: BTreeMap<String, Spanned<String>>,
}

/// A parsed policy file.
#[derive(Debug)]
pub struct Policy {
    path: PathBuf,
    text: String,
    file: File,
}

/// The Unix user a process runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnixUser {
    /// Login name.
    pub name: String,
    /// Home folder.
    pub home: PathBuf,
    /// Names of its groups (primary and supplementary).
    pub groups: Vec<String>,
}

impl Policy {
    /// Reads and parses the policy at `path`.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or is not a policy (TOML syntax, unknown
    /// key, wrong type: the first such error, with line and column).
    pub fn load(path: &Path) -> Result<Policy, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the policy {}: {e}", path.display()))?;
        let file: File =
            toml::from_str(&text).map_err(|e| format!("policy {}", toml_error(path, &text, &e)))?;
        Ok(Policy {
            path: path.to_owned(),
            text,
            file,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tenants it names, sorted.
    pub fn tenants(&self) -> impl Iterator<Item = &str> {
        self.file.tenants.keys().map(String::as_str)
    }

    /// Every problem of a parsed policy, each with line and column where the
    /// file has them: unknown tenants in the maps, bad allow rules and pins,
    /// limits out of range; and, for folders that exist, pins that match no
    /// module there.
    pub fn check(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let f = &self.file;
        let known = |t: &str| f.tenants.contains_key(t);
        if let Some(t) = &f.default_tenant
            && !known(t.get_ref())
        {
            problems.push(self.at(
                t.span(),
                format!("default_tenant `{}` is not a tenant", t.get_ref()),
            ));
        }
        for (kind, map) in [("user", &f.users), ("group", &f.groups)] {
            for (who, tenant) in map {
                if !known(tenant.get_ref()) {
                    problems.push(self.at(
                        tenant.span(),
                        format!(
                            "{kind} `{who}` is mapped to `{}`, which is not a tenant (tenants: {})",
                            tenant.get_ref(),
                            self.tenant_list()
                        ),
                    ));
                }
            }
        }
        let mut sections: Vec<(String, &TenantSettings)> =
            vec![("[defaults]".to_owned(), &f.defaults)];
        sections.extend(f.tenants.iter().map(|(n, s)| (format!("tenant `{n}`"), s)));
        for (section, settings) in &sections {
            let mut scratch = Config::default();
            scratch.apply_tenant(settings, &self.paths(None), &mut |key, e| {
                problems.push(self.located(&format!("{section} {key}"), e));
            });
        }
        problems
    }

    /// Whom the policy gives a tenant without asking: `None` when
    /// `default_tenant` or an entry of `[users]` or `[groups]` does, else
    /// why a process started without `--tenant` or `CYXLA_TENANT` (a
    /// notebook kernel from a kernel spec) gets none.
    pub fn unmapped(&self) -> Option<String> {
        let f = &self.file;
        if f.default_tenant.is_some() || !f.users.is_empty() || !f.groups.is_empty() {
            return None;
        }
        Some(if f.tenants.is_empty() {
            format!("the policy {} has no tenant", self.path.display())
        } else {
            format!(
                "the policy {} maps no user or group to a tenant and has no default_tenant \
                 (tenants: {})",
                self.path.display(),
                self.tenant_list()
            )
        })
    }

    /// Pins that no module in their tenant's folders satisfies (the first
    /// module, in folder order, declaring a pinned target has another
    /// sha256), each with line and column. Not part of [`Policy::check`]: a
    /// running host serves a mismatched pin's target from nothing and says
    /// so, while `cyxla-host policy check` reports it.
    pub fn check_pins(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let f = &self.file;
        let user = UnixUser::current().ok();
        for (name, own) in &f.tenants {
            let mut config = Config::default();
            for section in [&f.defaults, own] {
                config.apply_tenant(section, &self.paths(user.as_ref()), &mut |_, _| {});
            }
            let guests = &config.setup.guests;
            for (target, want) in &config.setup.pins {
                if let Some(problem) = pin_problem(name, guests, target, want) {
                    let span = [own, &f.defaults]
                        .into_iter()
                        .find_map(|s| s.pins.as_ref().and_then(|p| p.get(target)))
                        .map(Spanned::span);
                    problems.push(match span {
                        Some(span) => self.at(span, problem),
                        None => format!("{}: {problem}", self.path.display()),
                    });
                }
            }
        }
        problems
    }

    /// The tenant of a process run by `user`, asking for `requested`
    /// (`--tenant` / `CYXLA_TENANT`).
    ///
    /// # Errors
    ///
    /// The user is mapped to another tenant than the one requested, the
    /// requested tenant does not exist, or nothing names a tenant.
    pub fn select(
        &self,
        requested: Option<&str>,
        user: &UnixUser,
    ) -> Result<(String, String), String> {
        let f = &self.file;
        let mapped = f
            .users
            .get(&user.name)
            .map(|t| {
                (
                    t.get_ref().clone(),
                    format!("user `{}` in [users]", user.name),
                )
            })
            .or_else(|| {
                user.groups.iter().find_map(|g| {
                    f.groups.get(g).map(|t| {
                        (
                            t.get_ref().clone(),
                            format!("group `{g}` of user `{}` in [groups]", user.name),
                        )
                    })
                })
            });
        if let Some((tenant, why)) = mapped {
            if let Some(requested) = requested
                && requested != tenant
            {
                return Err(format!(
                    "the policy {} makes {why} tenant `{tenant}`: tenant `{requested}` \
                     ({TENANT_ENV} or --tenant) cannot be selected",
                    self.path.display()
                ));
            }
            return Ok((tenant, why));
        }
        if let Some(requested) = requested {
            if !f.tenants.contains_key(requested) {
                return Err(format!(
                    "tenant `{requested}` ({TENANT_ENV} or --tenant) is not in the policy {} \
                     (tenants: {})",
                    self.path.display(),
                    self.tenant_list()
                ));
            }
            return Ok((requested.to_owned(), format!("{TENANT_ENV} or --tenant")));
        }
        if let Some(t) = &f.default_tenant {
            return Ok((t.get_ref().clone(), "default_tenant".to_owned()));
        }
        Err(format!(
            "no tenant for user `{}`: the policy {} maps neither the user nor its groups and \
             has no default_tenant; pass --tenant or set {TENANT_ENV} (tenants: {})",
            user.name,
            self.path.display(),
            self.tenant_list()
        ))
    }

    /// What tenant `name` gets, as a configuration: its settings over
    /// `[defaults]` over [`Config::default`], paths expanded for `user`
    /// (`~`, `$USER`) and relative to the policy file.
    ///
    /// # Errors
    ///
    /// An unknown tenant, a bad allow rule, limits out of range.
    pub fn resolve(
        &self,
        name: &str,
        selected_by: &str,
        user: Option<&UnixUser>,
    ) -> Result<Config, String> {
        let mut config = Config::default();
        self.apply_to(&mut config, name, selected_by, user)?;
        Ok(config)
    }

    /// Applies what tenant `name` gets to `config`, as [`Policy::resolve`]
    /// does to the default configuration.
    ///
    /// # Errors
    ///
    /// As for [`Policy::resolve`].
    pub fn apply_to(
        &self,
        config: &mut Config,
        name: &str,
        selected_by: &str,
        user: Option<&UnixUser>,
    ) -> Result<(), String> {
        let f = &self.file;
        let own = f.tenants.get(name).ok_or_else(|| {
            format!(
                "tenant `{name}` is not in the policy {} (tenants: {})",
                self.path.display(),
                self.tenant_list()
            )
        })?;
        let mut first: Option<String> = None;
        let at = self.paths(user);
        for (section, settings) in [("[defaults] ", &f.defaults), ("", own)] {
            config.apply_tenant(settings, &at, &mut |key, e| {
                first.get_or_insert_with(|| {
                    format!(
                        "policy {}: tenant `{name}`: {section}{key}: {}",
                        self.path.display(),
                        e.message
                    )
                });
            });
        }
        if let Some(e) = first {
            return Err(e);
        }
        config.tenant = Some(Tenant {
            name: name.to_owned(),
            selected_by: selected_by.to_owned(),
            policy: self.path.clone(),
        });
        Ok(())
    }

    /// Where paths in the policy are resolved from: its folder, and `~`,
    /// `$USER` for `user`.
    fn paths<'a>(&'a self, user: Option<&'a UnixUser>) -> Paths<'a> {
        Paths {
            base: self.path.parent().unwrap_or(Path::new(".")),
            user,
        }
    }

    /// A problem of `what`, at its place in the file if known.
    fn located(&self, what: &str, e: Located) -> String {
        match e.span {
            Some(span) => self.at(span, format!("{what}: {}", e.message)),
            None => format!("{}: {what}: {}", self.path.display(), e.message),
        }
    }

    fn tenant_list(&self) -> String {
        let names: Vec<&str> = self.tenants().collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    }

    fn at(&self, span: std::ops::Range<usize>, what: String) -> String {
        let (line, column) = line_column(&self.text, span.start);
        format!("{}:{line}:{column}: {what}", self.path.display())
    }
}

/// Why `target`'s pin does not hold in tenant `tenant`'s folders (checked
/// on the modules' bytes: the first module in folder order that declares
/// it), if it does not.
pub fn pin_problem(tenant: &str, guests: &[PathBuf], target: &str, want: &str) -> Option<String> {
    for dir in guests {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
            .collect();
        files.sort();
        for file in files {
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            if !declares(&bytes, target) {
                continue;
            }
            let got = cyxla_sandbox::sha256_hex_of(&bytes);
            if got == want {
                return None;
            }
            return Some(format!(
                "tenant `{tenant}` pins `{target}` to sha256 {}…, but {} serves it with sha256 {}…",
                &want[..want.len().min(12)],
                file.display(),
                &got[..12]
            ));
        }
    }
    None
}

/// Whether a module's `cyxla.targets` records declare `target`.
fn declares(bytes: &[u8], target: &str) -> bool {
    let record = format!("{}{target} ", cyxla_guest_abi::RECORD_PREFIX);
    bytes.windows(record.len()).any(|w| w == record.as_bytes())
}

impl UnixUser {
    /// The user this process runs as, with its groups.
    ///
    /// # Errors
    ///
    /// The user database has no entry for the process's uid.
    pub fn current() -> Result<UnixUser, String> {
        // SAFETY: getuid/getgid cannot fail and touch no memory of ours.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let (name, home, _) =
            passwd_entry(uid).ok_or_else(|| format!("no user database entry for uid {uid}"))?;
        let mut gids = vec![gid];
        // SAFETY: with a zero size, getgroups only returns the count.
        let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
        if let Ok(n) = usize::try_from(n) {
            let mut more = vec![0 as libc::gid_t; n];
            // SAFETY: `more` has room for `n` gids, the size passed.
            let got = unsafe { libc::getgroups(n as libc::c_int, more.as_mut_ptr()) };
            if let Ok(got) = usize::try_from(got) {
                more.truncate(got);
                gids.extend(more);
            }
        }
        let mut groups: BTreeSet<String> = BTreeSet::new();
        groups.extend(gids.into_iter().filter_map(group_name));
        Ok(UnixUser {
            name,
            home,
            groups: groups.into_iter().collect(),
        })
    }

    /// The user with `uid` in the user database, with its groups there
    /// (primary and supplementary): who owns a file, as opposed to
    /// [`UnixUser::current`], this process's user.
    ///
    /// # Errors
    ///
    /// The user database has no entry for `uid`.
    pub fn of_uid(uid: libc::uid_t) -> Result<UnixUser, String> {
        let (name, home, gid) =
            passwd_entry(uid).ok_or_else(|| format!("no user database entry for uid {uid}"))?;
        let c_name = std::ffi::CString::new(name.clone())
            .map_err(|_| format!("the user name of uid {uid} holds a NUL"))?;
        let mut gids: Vec<libc::gid_t> = vec![0; 64];
        loop {
            let mut n = gids.len() as libc::c_int;
            // SAFETY: `c_name` is NUL-terminated; `gids` has room for `n`
            // gids, and getgrouplist writes at most `n`, setting `n` to how
            // many there are (more than it had room for: it returns -1).
            let rc = unsafe { libc::getgrouplist(c_name.as_ptr(), gid, gids.as_mut_ptr(), &mut n) };
            let n = usize::try_from(n).unwrap_or(0);
            if rc >= 0 {
                gids.truncate(n);
                break;
            }
            if n <= gids.len() {
                gids = vec![gid];
                break;
            }
            gids = vec![0; n];
        }
        let groups: BTreeSet<String> = gids.into_iter().filter_map(group_name).collect();
        Ok(UnixUser {
            name,
            home,
            groups: groups.into_iter().collect(),
        })
    }
}

fn passwd_entry(uid: libc::uid_t) -> Option<(String, PathBuf, libc::gid_t)> {
    // SAFETY: an all-zero passwd is a valid value to be overwritten, and
    // getpwuid_r is a lookup of the shape `user_database` wants: on success
    // `pw_name` and `pw_dir` point into the scratch buffer, NUL-terminated.
    unsafe {
        user_database(
            16 << 10,
            |entry, buffer, size, result| libc::getpwuid_r(uid, entry, buffer, size, result),
            |entry: &libc::passwd| {
                let home = c_string(entry.pw_dir);
                (c_string(entry.pw_name), PathBuf::from(home), entry.pw_gid)
            },
        )
    }
}

fn group_name(gid: libc::gid_t) -> Option<String> {
    // SAFETY: as in `passwd_entry`, with getgrgid_r and `gr_name`.
    unsafe {
        user_database(
            64 << 10,
            |entry, buffer, size, result| libc::getgrgid_r(gid, entry, buffer, size, result),
            |entry: &libc::group| c_string(entry.gr_name),
        )
    }
}

/// One entry of the user database, from a reentrant lookup such as
/// `getpwuid_r` given an entry to fill, a scratch buffer of `scratch` bytes
/// and where to say whether it found one; `read` takes what is wanted from
/// the entry while the buffer its strings point into still lives.
///
/// # Safety
///
/// An all-zero `E` must be a valid value, and `lookup` must be such a call:
/// on success (0, `result` not NULL) the entry's strings point into the
/// buffer, NUL-terminated, as `read` expects.
unsafe fn user_database<E, R>(
    scratch: usize,
    lookup: impl FnOnce(*mut E, *mut libc::c_char, usize, *mut *mut E) -> libc::c_int,
    read: impl FnOnce(&E) -> R,
) -> Option<R> {
    let mut buffer = vec![0 as libc::c_char; scratch];
    // SAFETY: the caller vouches that an all-zero `E` is valid.
    let mut entry: E = unsafe { std::mem::zeroed() };
    let mut result: *mut E = std::ptr::null_mut();
    let rc = lookup(&mut entry, buffer.as_mut_ptr(), buffer.len(), &mut result);
    if rc != 0 || result.is_null() {
        return None;
    }
    Some(read(&entry))
}

/// The NUL-terminated string at `ptr`, lossily as UTF-8.
///
/// # Safety
///
/// `ptr` points to a NUL-terminated string that lives for the call.
unsafe fn c_string(ptr: *const libc::c_char) -> String {
    // SAFETY: the caller vouches for `ptr`.
    unsafe { std::ffi::CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = r#"
default_tenant = "guest"

[defaults]
guests = ["shared"]
allow = ["rms_norm*"]
allow_native = false
[defaults.limits]
call_timeout = "2s"

[tenants.research]
guests = ["shared", "~/kernels", "/srv/$USER"]
allow = ["*"]
lapack = false
[tenants.research.limits]
memory = "64MiB"

[tenants.guest]

[users]
alice = "research"

[groups]
students = "guest"
"#;

    fn policy(text: &str) -> (tempfile::TempDir, Result<Policy, String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, text).unwrap();
        let p = Policy::load(&path);
        (dir, p)
    }

    fn user(name: &str, groups: &[&str]) -> UnixUser {
        UnixUser {
            name: name.to_owned(),
            home: PathBuf::from(format!("/home/{name}")),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        }
    }

    #[test]
    fn tenants_get_their_settings_over_the_defaults() {
        let (dir, p) = policy(POLICY);
        let p = p.unwrap();
        assert!(p.check().is_empty(), "{:?}", p.check());
        let alice = user("alice", &[]);
        let research = p.resolve("research", "test", Some(&alice)).unwrap();
        assert_eq!(
            research.setup.guests,
            [
                dir.path().join("shared"),
                PathBuf::from("/home/alice/kernels"),
                PathBuf::from("/srv/alice")
            ]
        );
        assert!(
            research.setup.allow.allows_all() && !research.setup.lapack && !research.allow_native
        );
        assert_eq!(research.setup.limits.memory, 64 << 20);
        assert_eq!(
            research.setup.limits.call_timeout,
            std::time::Duration::from_secs(2)
        );
        let guest = p.resolve("guest", "test", Some(&alice)).unwrap();
        assert!(guest.setup.allow.allows("rms_norm_fwd") && !guest.setup.allow.allows("scale_any"));
        assert!(guest.setup.lapack);
    }

    #[test]
    fn the_user_map_cannot_be_overridden() {
        let (_dir, p) = policy(POLICY);
        let p = p.unwrap();
        assert_eq!(p.select(None, &user("alice", &[])).unwrap().0, "research");
        assert_eq!(
            p.select(Some("research"), &user("alice", &[])).unwrap().0,
            "research"
        );
        let err = p.select(Some("guest"), &user("alice", &[])).unwrap_err();
        assert!(
            err.contains("user `alice` in [users] tenant `research`")
                && err.contains("cannot be selected"),
            "{err}"
        );
        let err = p
            .select(Some("research"), &user("carol", &["students"]))
            .unwrap_err();
        assert!(err.contains("group `students`"), "{err}");
        assert_eq!(
            p.select(Some("research"), &user("dave", &[])).unwrap().0,
            "research"
        );
        assert_eq!(p.select(None, &user("dave", &[])).unwrap().0, "guest");
        assert!(
            p.select(Some("nope"), &user("dave", &[]))
                .unwrap_err()
                .contains("not in the policy")
        );
    }

    #[test]
    fn every_problem_is_reported_with_line_and_column() {
        let text = "default_tenant = \"ghost\"\n[tenants.a]\nallow = [\"ok\", \"bad name\"]\n\
                    pins = { t = \"abc\" }\n[users]\nbob = \"nobody\"\n";
        let (_dir, p) = policy(text);
        let problems = p.unwrap().check();
        assert_eq!(problems.len(), 4, "{problems:#?}");
        for (want, at) in [
            ("default_tenant `ghost`", ":1:18"),
            ("bad name", ":3:16"),
            ("pin of `t`", ":4:14"),
            ("user `bob` is mapped to `nobody`", ":6:7"),
        ] {
            assert!(
                problems.iter().any(|p| p.contains(want) && p.contains(at)),
                "{want} at {at}: {problems:#?}"
            );
        }
        for (text, want) in [
            ("colour = 1\n", "line 1, column 1"),
            ("[tenants.a]\nlimits = { speed = \"1s\" }\n", "line 2"),
            ("[tenants.a]\nlapack = \"yes\"\n", "line 2, column 10"),
        ] {
            let (_dir, p) = policy(text);
            let err = p.unwrap_err();
            assert!(
                err.contains(want) && err.contains("policy.toml"),
                "{text:?}: {err}"
            );
        }
        let (_dir, p) = policy("[tenants.a.limits]\nmemory = \"1KiB\"\n");
        let problems = p.unwrap().check();
        assert!(
            problems
                .iter()
                .any(|p| p.contains("tenant `a`") && p.contains("memory")),
            "{problems:?}"
        );
    }

    #[test]
    fn the_current_user_is_found() {
        let me = UnixUser::current().unwrap();
        assert!(!me.name.is_empty() && !me.groups.is_empty(), "{me:?}");
    }
}

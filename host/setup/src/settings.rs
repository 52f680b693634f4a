//! The `settings!` macro and what its rows are made of: from the one table
//! of settings in [`crate::config`] it makes every spelling of a setting
//! (flag, environment variable, configuration file key, tenant policy key),
//! the [`Setting`] rows the launcher, the docs and the tests read, and the
//! one function per source that applies it to a [`Config`].
//!
//! A row names the setting's [`Kind`]: how its value is read from a
//! variable's text and from a TOML value, and which field of [`Config`] it
//! sets. Limits have a table of their own (`cyxla_sandbox::limits`): the
//! row `limits` carries all of them.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use toml::Spanned;

use crate::config::{Config, MAX_DEVICES, Platform};
use crate::process::NativeSpec;
use crate::tenants::UnixUser;
use cyxla_sandbox::AllowList;
use cyxla_sandbox::limits::{LimitOverrides, Limits, parse_time};

/// One setting: every name users write for it. The table in
/// [`crate::config`] has one per setting, in [`crate::config::SETTINGS`].
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// Its name (the row's).
    pub name: &'static str,
    /// The environment variable (`CYXLA_*`), if it has one.
    pub env: Option<&'static str>,
    /// The key of the configuration file (`CYXLA_CONFIG`), if it has one.
    pub file: Option<&'static str>,
    /// The key of a tenant in the policy (`[defaults]`, `[tenants.NAME]`),
    /// if the policy decides it.
    pub tenant: Option<&'static str>,
    /// What its variable does beside a tenant policy.
    pub beside_policy: Beside,
    /// The launcher's flags that stand for it (each sets the variable).
    pub flags: &'static [Flag],
    /// What it means (the docs' column).
    pub doc: &'static str,
    /// Its default, as the docs show it.
    pub default: &'static str,
}

/// What a setting's variable does where a tenant policy decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Beside {
    /// The policy decides it: the variable set beside a policy is an error.
    Refused,
    /// The variable applies, under what the tenant's policy sets.
    Applies,
}

/// How a flag gives its setting's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagValue {
    /// A switch: given, it sets the variable to this text.
    Switch(&'static str),
    /// A value, named so in the help (`DIR`).
    Text(&'static str),
    /// A path (absolute in the launched command's environment).
    Path(&'static str),
    /// `TARGET=LIBRARY:SYMBOL` (LIBRARY as a path).
    Native(&'static str),
}

/// A command-line flag of `cyxla-host` that stands for a setting: given, it
/// sets the setting's variable (for `-- COMMAND`, in COMMAND's
/// environment).
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    /// `--name`, without the dashes.
    pub long: &'static str,
    /// What it takes.
    pub value: FlagValue,
    /// Repeatable: the values are joined with this separator.
    pub many: Option<&'static str>,
    /// Taken after a subcommand too (`cyxla-host run --guests DIR`).
    pub global: bool,
    /// Its default is the setting's variable, where set.
    pub env_default: bool,
    /// The values it accepts, if only a few.
    pub choices: &'static [&'static str],
    /// Checks a value when the command line is parsed (a usage error).
    pub check: fn(&str) -> Result<(), String>,
    /// The help line.
    pub help: &'static str,
}

fn any_value(_: &str) -> Result<(), String> {
    Ok(())
}

impl Flag {
    /// `--long VALUE_NAME`.
    pub const fn text(long: &'static str, value_name: &'static str, help: &'static str) -> Flag {
        Flag {
            long,
            value: FlagValue::Text(value_name),
            many: None,
            global: false,
            env_default: false,
            choices: &[],
            check: any_value,
            help,
        }
    }

    /// `--long PATH`.
    pub const fn path(long: &'static str, value_name: &'static str, help: &'static str) -> Flag {
        Flag {
            value: FlagValue::Path(value_name),
            ..Flag::text(long, value_name, help)
        }
    }

    /// `--long TARGET=LIBRARY:SYMBOL`.
    pub const fn native(long: &'static str, help: &'static str) -> Flag {
        let value_name = "TARGET=LIBRARY:SYMBOL";
        Flag {
            value: FlagValue::Native(value_name),
            check: check_native,
            ..Flag::text(long, value_name, help)
        }
    }

    /// `--long`, which sets the variable to `sets`.
    pub const fn switch(long: &'static str, sets: &'static str, help: &'static str) -> Flag {
        Flag {
            value: FlagValue::Switch(sets),
            ..Flag::text(long, "", help)
        }
    }

    /// Repeatable, the values joined with `separator`.
    pub const fn many(self, separator: &'static str) -> Flag {
        Flag {
            many: Some(separator),
            ..self
        }
    }

    /// Taken after a subcommand too.
    pub const fn global(self) -> Flag {
        Flag {
            global: true,
            ..self
        }
    }

    /// Defaults to the setting's variable.
    pub const fn env_default(self) -> Flag {
        Flag {
            env_default: true,
            ..self
        }
    }

    /// Only these values.
    pub const fn choices(self, choices: &'static [&'static str]) -> Flag {
        Flag { choices, ..self }
    }

    /// Values checked by `check` when the command line is parsed.
    pub const fn check(self, check: fn(&str) -> Result<(), String>) -> Flag {
        Flag { check, ..self }
    }

    /// How the docs show it: `--long VALUE` or `--long`.
    pub fn usage(&self) -> String {
        match self.value {
            FlagValue::Switch(_) => format!("--{}", self.long),
            FlagValue::Text(v) | FlagValue::Path(v) | FlagValue::Native(v) => {
                format!("--{} {v}", self.long)
            }
        }
    }
}

fn check_native(s: &str) -> Result<(), String> {
    s.parse::<NativeSpec>().map(drop)
}

/// Where a configuration file or policy is, for the paths in it: relative
/// ones are relative to its folder, and in a policy `~` and `$USER` are the
/// user's.
#[derive(Clone, Copy, Debug)]
pub struct Paths<'a> {
    /// The file's folder.
    pub base: &'a Path,
    /// The user `~` and `$USER` stand for (a policy's), if any.
    pub user: Option<&'a UnixUser>,
}

impl Paths<'_> {
    /// `text` as a path: `~` and `$USER` expanded for the user, relative
    /// paths taken from the file's folder.
    pub fn resolve(&self, text: &str) -> PathBuf {
        let mut text = text.to_owned();
        if let Some(user) = self.user {
            if let Some(rest) = text.strip_prefix("~/") {
                text = format!("{}/{rest}", user.home.display());
            } else if text == "~" {
                text = user.home.display().to_string();
            }
            text = text
                .replace("${USER}", &user.name)
                .replace("$USER", &user.name);
        }
        let p = PathBuf::from(text);
        if p.is_relative() {
            self.base.join(p)
        } else {
            p
        }
    }
}

/// A problem of a TOML value, where the file has its place.
#[derive(Clone, Debug)]
pub struct Located {
    /// Byte range in the file, if known.
    pub span: Option<Range<usize>>,
    /// What is wrong.
    pub message: String,
}

impl Located {
    /// A problem at `span` in the file: `.map_err(Located::at(value.span()))`.
    pub fn at(span: Range<usize>) -> impl FnOnce(String) -> Located {
        move |message| Located {
            span: Some(span),
            message,
        }
    }
}

impl From<String> for Located {
    fn from(message: String) -> Located {
        Located {
            span: None,
            message,
        }
    }
}

/// How one setting's value is read, from each source, into its field.
pub trait Kind {
    /// The field of [`Config`] it sets.
    type Field;
    /// What the configuration file and the policy hold for it.
    type Toml: DeserializeOwned + Clone + Debug;
    /// Sets the field from the variable's text (not empty).
    ///
    /// # Errors
    ///
    /// What is wrong with the text (the caller names the variable).
    fn env(field: &mut Self::Field, text: &str) -> Result<(), String>;
    /// Sets the field from a configuration file's or a policy's value.
    ///
    /// # Errors
    ///
    /// What is wrong with the value (the caller names the key and file).
    fn toml(field: &mut Self::Field, value: Self::Toml, at: &Paths) -> Result<(), Located>;
}

/// A setting read elsewhere, by whom its row says (the launcher, the
/// library's logging, the sandbox library): the table has it for its
/// names and docs.
pub struct Elsewhere;

impl Kind for Elsewhere {
    type Field = ();
    type Toml = ();
    fn env(_: &mut (), _: &str) -> Result<(), String> {
        Ok(())
    }
    fn toml(_: &mut (), _: (), _: &Paths) -> Result<(), Located> {
        Ok(())
    }
}

/// The place of an [`Elsewhere`] setting in a [`Config`]: none.
pub fn nowhere(_: &mut Config) -> &mut () {
    // A box of `()` holds no memory: leaking it allocates and loses nothing.
    Box::leak(Box::new(()))
}

/// A path; `None` until set.
pub struct OnePath;

impl Kind for OnePath {
    type Field = Option<PathBuf>;
    type Toml = String;
    fn env(field: &mut Option<PathBuf>, text: &str) -> Result<(), String> {
        *field = Some(PathBuf::from(text));
        Ok(())
    }
    fn toml(field: &mut Option<PathBuf>, value: String, at: &Paths) -> Result<(), Located> {
        *field = Some(at.resolve(&value));
        Ok(())
    }
}

/// One path or a list of them.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One path.
    One(String),
    /// Several.
    Many(Vec<String>),
}

/// Folders, in order: a variable holds them as `PATH` does (`:`-separated).
pub struct Folders;

impl Kind for Folders {
    type Field = Vec<PathBuf>;
    type Toml = OneOrMany;
    fn env(field: &mut Vec<PathBuf>, text: &str) -> Result<(), String> {
        *field = std::env::split_paths(text).collect();
        Ok(())
    }
    fn toml(field: &mut Vec<PathBuf>, value: OneOrMany, at: &Paths) -> Result<(), Located> {
        *field = match value {
            OneOrMany::One(p) => vec![at.resolve(&p)],
            OneOrMany::Many(ps) => ps.iter().map(|p| at.resolve(p)).collect(),
        };
        Ok(())
    }
}

/// Allow rules (names, globs, `*` alone): `a,b` in a variable, a list in a
/// file.
pub struct Allow;

impl Kind for Allow {
    type Field = AllowList;
    type Toml = Vec<Spanned<String>>;
    fn env(field: &mut AllowList, text: &str) -> Result<(), String> {
        *field = AllowList::from_rules(text.split(','))?;
        Ok(())
    }
    fn toml(field: &mut AllowList, value: Self::Toml, _: &Paths) -> Result<(), Located> {
        for rule in &value {
            AllowList::from_rules([rule.get_ref().as_str()]).map_err(Located::at(rule.span()))?;
        }
        *field = AllowList::from_rules(value.iter().map(|r| r.get_ref().as_str()))?;
        Ok(())
    }
}

/// Guest limits over the ones already set: `NAME=VALUE,...` in a variable,
/// a `[limits]` table in a file.
pub struct LimitSettings;

impl Kind for LimitSettings {
    type Field = Limits;
    type Toml = LimitOverrides;
    fn env(field: &mut Limits, text: &str) -> Result<(), String> {
        for setting in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = setting
                .split_once('=')
                .ok_or_else(|| format!("`{setting}` is not NAME=VALUE (e.g. call_timeout=2s)"))?;
            field
                .set(name.trim(), value.trim())
                .map_err(|e| e.message)?;
        }
        Ok(())
    }
    fn toml(field: &mut Limits, value: LimitOverrides, _: &Paths) -> Result<(), Located> {
        Ok(field.apply(&value)?)
    }
}

/// A [`Kind`] whose configuration file and policy hold the field's value
/// as it is: only a variable's text is read into it.
pub trait AsIs {
    /// The field, and what the file and the policy hold for it.
    type Value: DeserializeOwned + Clone + Debug;
    /// The variable's text (not empty) as a value.
    ///
    /// # Errors
    ///
    /// What is wrong with the text (the caller names the variable).
    fn parse(text: &str) -> Result<Self::Value, String>;
}

impl<K: AsIs> Kind for K {
    type Field = K::Value;
    type Toml = K::Value;
    fn env(field: &mut K::Value, text: &str) -> Result<(), String> {
        *field = K::parse(text)?;
        Ok(())
    }
    fn toml(field: &mut K::Value, value: K::Value, _: &Paths) -> Result<(), Located> {
        *field = value;
        Ok(())
    }
}

/// Yes or no: `1` or `0` (`true`/`false`, `yes`/`no`, `on`/`off`) in a
/// variable, a boolean in a file.
pub struct Switch;

impl AsIs for Switch {
    type Value = bool;
    fn parse(text: &str) -> Result<bool, String> {
        parse_bool(text)
    }
}

/// A [`Switch`] whose variable says the opposite (`CYXLA_NO_LAPACK=1`:
/// `lapack = false`).
pub struct NegatedSwitch;

impl AsIs for NegatedSwitch {
    type Value = bool;
    fn parse(text: &str) -> Result<bool, String> {
        Ok(!parse_bool(text)?)
    }
}

/// A folder that `0` turns off (the compile cache).
pub struct OptionalFolder;

impl Kind for OptionalFolder {
    type Field = Option<PathBuf>;
    type Toml = bool;
    fn env(field: &mut Option<PathBuf>, text: &str) -> Result<(), String> {
        if !parse_bool(text)? {
            *field = None;
        }
        Ok(())
    }
    fn toml(field: &mut Option<PathBuf>, value: bool, _: &Paths) -> Result<(), Located> {
        if !value {
            *field = None;
        }
        Ok(())
    }
}

/// A number of CPU devices, 1 to [`MAX_DEVICES`].
pub struct Devices;

impl Kind for Devices {
    type Field = Option<u32>;
    type Toml = Spanned<u32>;
    fn env(field: &mut Option<u32>, text: &str) -> Result<(), String> {
        let n = text
            .trim()
            .parse::<u32>()
            .map_err(|_| "expected a number of devices, e.g. 2".to_owned())?;
        *field = Some(check_devices(n)?);
        Ok(())
    }
    fn toml(field: &mut Option<u32>, value: Spanned<u32>, _: &Paths) -> Result<(), Located> {
        let span = value.span();
        *field = Some(check_devices(value.into_inner()).map_err(Located::at(span))?);
        Ok(())
    }
}

/// A flag's check of a number of devices.
pub fn check_devices_flag(text: &str) -> Result<(), String> {
    Devices::env(&mut None, text)
}

fn check_devices(n: u32) -> Result<u32, String> {
    if (1..=MAX_DEVICES).contains(&n) {
        Ok(n)
    } else {
        Err(format!("devices must be 1 to {MAX_DEVICES}, got {n}"))
    }
}

/// How often a process does something periodically: a time (`500ms`, `2s`,
/// `1min`; in a file, that text), at least [`Interval::MIN`].
pub struct Interval;

impl Interval {
    /// The shortest interval a setting takes.
    pub const MIN: Duration = Duration::from_millis(100);

    fn parse(text: &str) -> Result<Duration, String> {
        let time = parse_time(text.trim())?;
        if time < Interval::MIN {
            return Err(format!(
                "`{}` is shorter than the shortest interval, 100ms",
                text.trim()
            ));
        }
        Ok(time)
    }
}

impl Kind for Interval {
    type Field = Duration;
    type Toml = Spanned<String>;
    fn env(field: &mut Duration, text: &str) -> Result<(), String> {
        *field = Interval::parse(text)?;
        Ok(())
    }
    fn toml(field: &mut Duration, value: Spanned<String>, _: &Paths) -> Result<(), Located> {
        *field = Interval::parse(value.get_ref()).map_err(Located::at(value.span()))?;
        Ok(())
    }
}

/// Trusted natives, `TARGET=LIBRARY:SYMBOL`: `;`-separated in a variable, a
/// list in a file.
pub struct Natives;

impl Kind for Natives {
    type Field = Vec<NativeSpec>;
    type Toml = Vec<String>;
    fn env(field: &mut Vec<NativeSpec>, text: &str) -> Result<(), String> {
        *field = text
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect::<Result<_, _>>()?;
        Ok(())
    }
    fn toml(field: &mut Vec<NativeSpec>, value: Vec<String>, _: &Paths) -> Result<(), Located> {
        *field = value
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, String>>()?;
        Ok(())
    }
}

/// The JAX platform the guests are served on.
pub struct PlatformKind;

impl AsIs for PlatformKind {
    type Value = Platform;
    fn parse(text: &str) -> Result<Platform, String> {
        Platform::deserialize(toml::Value::String(text.trim().to_owned()))
            .map_err(|e| e.message().trim_end().to_owned())
    }
}

/// Pins, target → sha256 (64 hex digits) of the only module that may serve
/// it, over the pins already set.
pub struct Pins;

impl Kind for Pins {
    type Field = BTreeMap<String, String>;
    type Toml = BTreeMap<String, Spanned<String>>;
    fn env(_: &mut Self::Field, _: &str) -> Result<(), String> {
        Err("pins are set in a tenant policy only".to_owned())
    }
    fn toml(field: &mut Self::Field, value: Self::Toml, _: &Paths) -> Result<(), Located> {
        for (target, pin) in value {
            let hex = pin.get_ref();
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                let problem = format!("pin of `{target}` is not a sha256 (64 hex digits)");
                return Err(Located::at(pin.span())(problem));
            }
            field.insert(target, hex.to_ascii_lowercase());
        }
        Ok(())
    }
}

/// `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
fn parse_bool(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err("expected 1 or 0 (true/false, yes/no, on/off)".to_owned()),
    }
}

/// The first of `names`, if any (a row's optional column).
#[doc(hidden)]
pub const fn first(names: &[&'static str]) -> Option<&'static str> {
    match names {
        [name, ..] => Some(name),
        [] => None,
    }
}

/// The docs' reference table of every setting (docs/reference-settings.md
/// holds it; a test keeps the two equal).
pub fn reference_table(settings: &[Setting]) -> String {
    let code = |s: &str| format!("`{s}`");
    let mut text = String::from(
        "| setting | variable | flag | file key | tenant key | beside a policy | meaning | default |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for s in settings {
        let flags: Vec<String> = s.flags.iter().map(|f| code(&f.usage())).collect();
        let beside = match s.beside_policy {
            Beside::Refused => "refused",
            Beside::Applies => "applies",
        };
        text.push_str(&format!(
            "| {} | {} | {} | {} | {} | {beside} | {} | {} |\n",
            s.name,
            s.env.map(code).unwrap_or_default(),
            flags.join(", "),
            s.file.map(code).unwrap_or_default(),
            s.tenant.map(code).unwrap_or_default(),
            s.doc.trim().replace('|', "\\|"),
            s.default.replace('|', "\\|"),
        ));
    }
    text
}

/// The table of settings: one row per setting, from which come its
/// variable (a `pub const`), its flags, its keys in the configuration file
/// and in a tenant's policy, the [`Setting`] rows ([`crate::config::SETTINGS`])
/// and one function per source: [`Config::apply_env`] (variables),
/// `Config::apply_file` (the configuration file), `Config::apply_tenant` (a
/// section of the policy). Flags set variables (the launcher's
/// `Flags::variables`).
///
/// ```text
/// /// What it means (the docs' column).
/// name: Kind => |c| &mut c.field,
///     env NAME_ENV = "CYXLA_NAME",  // optional
///     file key,                     // optional
///     tenant key,                   // optional
///     policy Refused,               // or Applies: its variable beside a policy
///     flags [Flag::path("name", "DIR", "help")],  // optional
///     default "none";
/// ```
///
/// A row's parts come in this order, as many to a line as fit (`pins: Pins
/// => |c| &mut c.setup.pins, tenant pins, policy Applies, default "none";`).
macro_rules! settings {
    (
        $(
            $(#[doc = $doc:expr])*
            $name:ident: $kind:ty => $place:expr,
                $(env $ENV:ident = $env:expr,)?
                $(file $file:ident,)?
                $(tenant $tenant:ident,)?
                policy $beside:ident,
                $(flags [$($flag:expr),* $(,)?],)?
                default $default:expr;
        )*
    ) => {
        $($(
            #[doc = concat!("The variable of the setting `", stringify!($name), "` (see [`SETTINGS`]).")]
            pub const $ENV: &str = $env;
        )?)*

        /// Every setting, in the table's order.
        pub const SETTINGS: &[$crate::settings::Setting] = &[$(
            $crate::settings::Setting {
                name: stringify!($name),
                env: $crate::settings::first(&[$($ENV)?]),
                file: $crate::settings::first(&[$(stringify!($file))?]),
                tenant: $crate::settings::first(&[$(stringify!($tenant))?]),
                beside_policy: $crate::settings::Beside::$beside,
                flags: &[$($($flag),*)?],
                doc: concat!($($doc),*),
                default: $default,
            },
        )*];

        /// The configuration file: every key optional, unknown keys
        /// rejected.
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct File {
            $($(
                $file: Option<<$kind as $crate::settings::Kind>::Toml>,
            )?)*
        }

        /// What a tenant (or `[defaults]`) of a policy says: every key
        /// optional, unknown keys rejected.
        #[derive(Clone, Debug, Default, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct TenantSettings {
            $($(
                pub(crate) $tenant: Option<<$kind as $crate::settings::Kind>::Toml>,
            )?)*
        }

        impl Config {
            /// Applies every variable `lookup` gives a (non-empty) value,
            /// in the table's order.
            ///
            /// # Errors
            ///
            /// The first bad value: `NAME=VALUE: what is wrong`.
            pub fn apply_env(
                &mut self,
                lookup: &dyn Fn(&str) -> Option<String>,
            ) -> Result<(), String> {
                $($(
                    if let Some(text) = lookup($ENV).filter(|v| !v.trim().is_empty()) {
                        let place: fn(&mut Config) -> &mut <$kind as $crate::settings::Kind>::Field = $place;
                        <$kind as $crate::settings::Kind>::env(place(self), &text)
                            .map_err(|e| format!("{}={text}: {e}", $ENV))?;
                    }
                )?)*
                Ok(())
            }

            /// Applies the keys a configuration file sets.
            pub(crate) fn apply_file(
                &mut self,
                file: File,
                at: &$crate::settings::Paths,
            ) -> Result<(), (&'static str, $crate::settings::Located)> {
                $($(
                    if let Some(value) = file.$file {
                        let place: fn(&mut Config) -> &mut <$kind as $crate::settings::Kind>::Field = $place;
                        <$kind as $crate::settings::Kind>::toml(place(self), value, at)
                            .map_err(|e| (stringify!($file), e))?;
                    }
                )?)*
                Ok(())
            }

            /// Applies the keys a section of a policy sets, each problem to
            /// `problem` (with its key); the keys after a problem still
            /// apply.
            pub(crate) fn apply_tenant(
                &mut self,
                section: &TenantSettings,
                at: &$crate::settings::Paths,
                problem: &mut dyn FnMut(&'static str, $crate::settings::Located),
            ) {
                $($(
                    if let Some(value) = &section.$tenant {
                        let place: fn(&mut Config) -> &mut <$kind as $crate::settings::Kind>::Field = $place;
                        if let Err(e) = <$kind as $crate::settings::Kind>::toml(place(self), value.clone(), at) {
                            problem(stringify!($tenant), e);
                        }
                    }
                )?)*
            }
        }
    };
}

//! The `limits!` macro: from the one table of limits in `limits/mod.rs` it
//! makes [`super::Limits`] (its fields, their docs and `Default`), the side
//! file's and the flags' [`super::LimitOverrides`], [`super::Limits::apply`]
//! (each value checked by its line's checker), [`super::Limits::NAMES`],
//! each name's [`super::Scope`] and its default as the docs show it
//! ([`super::Limits::shown_default`]).

/// One line per limit:
///
/// ```text
/// /// What it limits (the field's doc).
/// name: FieldType = default, "default as the docs show it", Scope, Wrapper => checker;
/// ```
///
/// `name` is the field and the key users write (`--limit name=...`, side
/// files, `[limits]` of the configuration file and the tenant policy);
/// `Wrapper` the type a value is read as ([`super::ByteSize`],
/// [`super::Count`], [`super::Time`], [`super::Flag`], or an enum with its
/// own `Deserialize`); `checker` a `Fn(&str, Wrapper) -> Result<FieldType,
/// String>` given the name (see `bytes_in`, `count_in`, `time_in`, `any` in
/// `limits/mod.rs`), whose error names the limit, the value and the range.
macro_rules! limits {
    (
        $(#[$struct_attr:meta])*
        pub struct $Limits:ident;
        $(
            $(#[$attr:meta])*
            $name:ident: $ty:ty = $default:expr, $shown:literal, $scope:ident,
                $wrap:ty => $check:expr;
        )*
    ) => {
        $(#[$struct_attr])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct $Limits {
            $(
                $(#[$attr])*
                pub $name: $ty,
            )*
        }

        impl Default for $Limits {
            /// The defaults (the names are those of `--limit NAME=VALUE`, of
            /// side files and of `[limits]` tables); the scope says where a
            /// limit applies, and `engine` and `process` ones cannot be set
            /// in a side file:
            ///
            /// | name | default | scope |
            /// |---|---|---|
            $(
                #[doc = concat!("| `", stringify!($name), "` | ", $shown, " | ",
                                stringify!($scope), " |")]
            )*
            fn default() -> $Limits {
                $Limits {
                    $($name: $default,)*
                }
            }
        }

        /// Settings that override [`Limits`]: the contents of a side file
        /// (TOML), of `--limit` flags, or of a `[limits]` table. Every field
        /// is optional; an absent one keeps the limit it would override.
        /// Unknown names are errors.
        #[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct LimitOverrides {
            $(
                #[doc = concat!("[`Limits::", stringify!($name), "`].")]
                pub $name: Option<$wrap>,
            )*
        }

        impl $Limits {
            /// Every limit's name, in the table's order.
            pub const NAMES: &[&str] = &[$(stringify!($name)),*];

            /// The default of the limit `name` as the docs show it (its
            /// line's text: `"256 MiB"`), if it is one.
            pub fn shown_default(name: &str) -> Option<&'static str> {
                match name {
                    $(stringify!($name) => Some($shown),)*
                    _ => None,
                }
            }

            /// Where the limit `name` applies, if it is one.
            pub fn scope(name: &str) -> Option<Scope> {
                match name {
                    $(stringify!($name) => Some(Scope::$scope),)*
                    _ => None,
                }
            }

            /// Applies every setting of `overrides`.
            ///
            /// # Errors
            ///
            /// A value out of range (the message names the setting, the
            /// value and the range); nothing is changed then.
            pub fn apply(&mut self, overrides: &LimitOverrides) -> Result<(), String> {
                let mut next = self.clone();
                $(
                    if let Some(v) = overrides.$name {
                        next.$name = ($check)(stringify!($name), v)?;
                    }
                )*
                *self = next;
                Ok(())
            }
        }

        impl LimitOverrides {
            /// The names of the limits these settings set, in the table's
            /// order.
            pub fn names(&self) -> Vec<&'static str> {
                let mut names = Vec::new();
                $(
                    if self.$name.is_some() {
                        names.push(stringify!($name));
                    }
                )*
                names
            }
        }
    };
}

//! XLA's enums as the XLA FFI C API (`xla/ffi/api/c_api.h`) numbers them,
//! written once for every crate of cyxla: the element types
//! ([`DataType`], raw values in [`data_type`]), the error codes
//! ([`ErrorCode`], raw values in [`error_code`]), an error with its
//! message ([`Error`]) and the value of an attribute ([`attr`]: an
//! [`Attr`](attr::Attr), a [`Scalar`](attr::Scalar), an
//! [`ArrayView`](attr::ArrayView) of an array's elements, a string or a
//! dictionary) and the Rust types of buffer elements
//! ([`Element`](element::Element), [`Complex`](element::Complex)).
//!
//! `no_std` (with `alloc`) and without dependencies, so that the guest SDK
//! (compiled to wasm32), the native glue and the host share the same table.
//!
//! ```
//! use cyxla_xla_types::{DataType, ErrorCode};
//! assert_eq!(DataType::from_raw(11), Some(DataType::F32));
//! assert_eq!(DataType::Bf16.byte_size(3), Some(6));
//! assert_eq!(ErrorCode::InvalidArgument.to_string(), "INVALID_ARGUMENT");
//! ```
#![no_std]
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;
#[cfg(test)]
extern crate std;

/// Declares a C enum of XLA's once, from one table: the module of its raw
/// `u32` values (with `raw_only` values that have no variant, such as
/// `OK`), and a Rust enum over the rest with `ALL` (in table order),
/// `from_raw`, `to_raw`, `name` and a `Display` that prints the name. A
/// row's name is its C name unless the row gives one.
macro_rules! c_enum {
    (
        $(#[$mod_doc:meta])*
        pub mod $raw_mod:ident: $c_name:literal;
        $(raw_only $raw_only:ident = $raw_only_value:literal;)*

        $(#[$enum_doc:meta])*
        pub enum $name:ident;
        $(#[$all_doc:meta])*
        $all_vis:vis const ALL;
        $(#[$name_doc:meta])*
        fn name;
        {
            $(
                $(#[$variant_doc:meta])*
                $variant:ident = $raw:ident = $value:literal $(, $text:literal)?;
            )*
        }
    ) => {
        $(#[$mod_doc])*
        pub mod $raw_mod {
            #![expect(
                missing_docs,
                reason = "one constant per member of the C enum, named after it"
            )]
            $(pub const $raw_only: u32 = $raw_only_value;)*
            $(pub const $raw: u32 = $value;)*
        }

        $(#[$enum_doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        #[non_exhaustive]
        pub enum $name {
            $(
                #[doc = concat!("`", stringify!($raw), "` (", $value, ").")]
                $(#[$variant_doc])*
                $variant = $raw_mod::$raw,
            )*
        }

        impl $name {
            $(#[$all_doc])*
            $all_vis const ALL: [$name; [$($raw_mod::$raw),*].len()] = [$($name::$variant),*];

            #[doc = concat!("The value whose `", $c_name, "` number is `raw`, if there is one.")]
            pub fn from_raw(raw: u32) -> Option<$name> {
                $name::ALL.into_iter().find(|v| v.to_raw() == raw)
            }

            #[doc = concat!("The `", $c_name, "` number.")]
            pub fn to_raw(self) -> u32 {
                self as u32
            }

            $(#[$name_doc])*
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => c_enum!(@name $raw $(, $text)?),)*
                }
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
    (@name $raw:ident) => {
        stringify!($raw)
    };
    (@name $raw:ident, $text:literal) => {
        $text
    };
}

pub mod attr;
mod dtype;
pub mod element;
mod error;

pub use dtype::{DataType, data_type};
pub use error::{Error, ErrorCode, error_code};

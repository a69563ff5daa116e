//! XLA primitive (element) types and their bit widths.

use std::fmt;

macro_rules! primitive_types {
    ($($variant:ident => $name:literal, $bits:expr, $kind:ident;)*) => {
        /// An XLA element type, as written in HLO text (`f32`, `bf16`, `s4`, `pred`, ...).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum PrimitiveType {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl PrimitiveType {
            /// Every type, in XLA's order.
            pub const ALL: &'static [PrimitiveType] = &[$(PrimitiveType::$variant),*];

            /// The name HLO text uses.
            pub fn name(self) -> &'static str {
                match self { $(PrimitiveType::$variant => $name,)* }
            }

            /// The width in bits of one element as XLA counts it (`pred` is 8; `token` and `opaque` 0).
            pub fn bits(self) -> u32 {
                match self { $(PrimitiveType::$variant => $bits,)* }
            }

            fn kind(self) -> Kind {
                match self { $(PrimitiveType::$variant => Kind::$kind,)* }
            }

            /// The type named `name` (lowercase, as HLO text writes it).
            #[inline]
            pub fn from_name(name: &str) -> Option<PrimitiveType> {
                // The types dumps are full of, compared byte by byte; the rest by name.
                match name.as_bytes() {
                    [b'f', b'3', b'2'] => Some(PrimitiveType::F32),
                    [b'b', b'f', b'1', b'6'] => Some(PrimitiveType::Bf16),
                    [b's', b'3', b'2'] => Some(PrimitiveType::S32),
                    [b'p', b'r', b'e', b'd'] => Some(PrimitiveType::Pred),
                    [b's', b'8'] => Some(PrimitiveType::S8),
                    [b'u', b'8'] => Some(PrimitiveType::U8),
                    _ => Self::from_other_name(name),
                }
            }

            fn from_other_name(name: &str) -> Option<PrimitiveType> {
                match name { $($name => Some(PrimitiveType::$variant),)* _ => None }
            }
        }
    };
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pred,
    Signed,
    Unsigned,
    Float,
    Complex,
    Special,
}

primitive_types! {
    Pred => "pred", 8, Pred;
    S1 => "s1", 1, Signed;
    S2 => "s2", 2, Signed;
    S4 => "s4", 4, Signed;
    S8 => "s8", 8, Signed;
    S16 => "s16", 16, Signed;
    S32 => "s32", 32, Signed;
    S64 => "s64", 64, Signed;
    U1 => "u1", 1, Unsigned;
    U2 => "u2", 2, Unsigned;
    U4 => "u4", 4, Unsigned;
    U8 => "u8", 8, Unsigned;
    U16 => "u16", 16, Unsigned;
    U32 => "u32", 32, Unsigned;
    U64 => "u64", 64, Unsigned;
    F16 => "f16", 16, Float;
    Bf16 => "bf16", 16, Float;
    F32 => "f32", 32, Float;
    F64 => "f64", 64, Float;
    F8E5m2 => "f8e5m2", 8, Float;
    F8E4m3 => "f8e4m3", 8, Float;
    F8E4m3fn => "f8e4m3fn", 8, Float;
    F8E4m3b11fnuz => "f8e4m3b11fnuz", 8, Float;
    F8E3m4 => "f8e3m4", 8, Float;
    F8E5m2fnuz => "f8e5m2fnuz", 8, Float;
    F8E4m3fnuz => "f8e4m3fnuz", 8, Float;
    F8E8m0fnu => "f8e8m0fnu", 8, Float;
    F6E2m3fn => "f6e2m3fn", 6, Float;
    F6E3m2fn => "f6e3m2fn", 6, Float;
    F4E2m1fn => "f4e2m1fn", 4, Float;
    C64 => "c64", 64, Complex;
    C128 => "c128", 128, Complex;
    Token => "token", 0, Special;
    Opaque => "opaque", 0, Special;
}

impl PrimitiveType {
    /// Bytes one element takes when not packed: `ceil(bits / 8)` (sub-byte types take a whole byte).
    pub fn byte_width(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Signed or unsigned integer (`s*`, `u*`): the types index and pointer attributes may name.
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Signed | Kind::Unsigned)
    }

    /// An array element type (everything but `token` and `opaque`).
    pub fn is_array_type(self) -> bool {
        self.kind() != Kind::Special
    }

    /// Floating point (including the 8-, 6- and 4-bit formats).
    pub fn is_float(self) -> bool {
        self.kind() == Kind::Float
    }

    /// `pred`.
    pub fn is_pred(self) -> bool {
        self.kind() == Kind::Pred
    }

    /// `c64` or `c128`.
    pub fn is_complex(self) -> bool {
        self.kind() == Kind::Complex
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_widths() {
        for t in PrimitiveType::ALL {
            assert_eq!(PrimitiveType::from_name(t.name()), Some(*t));
        }
        assert_eq!(PrimitiveType::Bf16.bits(), 16);
        assert_eq!(PrimitiveType::S4.byte_width(), 1);
        assert_eq!(PrimitiveType::F6E2m3fn.byte_width(), 1);
        assert_eq!(PrimitiveType::C128.byte_width(), 16);
        assert!(PrimitiveType::U16.is_integer() && !PrimitiveType::F32.is_integer());
        assert_eq!(PrimitiveType::from_name("F32"), None);
    }
}

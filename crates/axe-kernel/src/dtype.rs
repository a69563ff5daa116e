//! Element types.

use std::fmt;
use std::str::FromStr;

use crate::error::KernelError;

/// An element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE binary64.
    F64,
    /// IEEE binary32.
    F32,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    BF16,
    /// OCP FP8 E4M3 (finite, no infinities).
    F8E4M3,
    /// Signed 8-bit integer.
    S8,
    /// Signed 16-bit integer.
    S16,
    /// Signed 32-bit integer.
    S32,
    /// Signed 64-bit integer.
    S64,
    /// Unsigned 8-bit integer.
    U8,
}

impl DType {
    /// Every dtype, for listings.
    pub const ALL: [DType; 10] = [
        DType::F64,
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::F8E4M3,
        DType::S8,
        DType::S16,
        DType::S32,
        DType::S64,
        DType::U8,
    ];

    /// Bytes per element.
    pub fn bytes(self) -> u32 {
        match self {
            DType::F64 | DType::S64 => 8,
            DType::F32 | DType::S32 => 4,
            DType::F16 | DType::BF16 | DType::S16 => 2,
            DType::F8E4M3 | DType::S8 | DType::U8 => 1,
        }
    }

    /// The name used in descriptions and messages.
    pub fn name(self) -> &'static str {
        match self {
            DType::F64 => "f64",
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F8E4M3 => "f8e4m3",
            DType::S8 => "s8",
            DType::S16 => "s16",
            DType::S32 => "s32",
            DType::S64 => "s64",
            DType::U8 => "u8",
        }
    }

    /// A dtype moving `bytes`-byte elements when only the bytes matter (relayout, copies).
    pub fn of_bytes(bytes: u32) -> Option<DType> {
        match bytes {
            1 => Some(DType::U8),
            2 => Some(DType::S16),
            4 => Some(DType::S32),
            8 => Some(DType::S64),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<DType, KernelError> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
                KernelError::Invalid(format!(
                    "unknown dtype {s:?}; expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

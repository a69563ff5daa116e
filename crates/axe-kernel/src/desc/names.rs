//! The names a kernel and its buffers may take: C identifiers that C++, CUDA, the NKI text's Python and
//! the generated code do not already use, so that the source [`crate::emit()`] writes compiles.

use crate::error::{KernelError, Result};

/// C++ keywords and alternative tokens, Python's keywords, CUDA's built-in variables and types, the
/// functions the generated code calls, and the names it declares itself.
const RESERVED: &[&str] = &[
    // C++
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
    "size_t",
    "half",
    "nv_bfloat16",
    "dim3",
    // Python (the NKI text)
    "as",
    "assert",
    "async",
    "await",
    "def",
    "del",
    "elif",
    "except",
    "finally",
    "from",
    "global",
    "import",
    "in",
    "is",
    "lambda",
    "None",
    "nonlocal",
    "pass",
    "raise",
    "True",
    "False",
    "with",
    "yield",
    "range",
    "nki",
    "nisa",
    "nl",
    // CUDA built-ins and the functions the generated code calls
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "abs",
    "exp",
    "expf",
    "fabs",
    "fmaf",
    "fmax",
    "fmin",
    "isinf",
    "isnan",
    "max",
    "min",
    "printf",
    // declared by the generated code
    "tid",
    "cta",
    "smem",
    "smem_raw",
];

/// CUDA's vector types (`uint4`, `float2`, `ulonglong2`) and their `make_` functions, fixed-width
/// integers (`int32_t`), and the generated code's own families: `v0`, `tmap0`, `axe_*`, `Axe*`.
fn generated_family(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let vector = |s: &str| {
        let s = s.strip_prefix('u').unwrap_or(s);
        [
            "char", "short", "int", "longlong", "long", "float", "double",
        ]
        .iter()
        .any(|t| {
            s.strip_prefix(t)
                .is_some_and(|n| matches!(n, "1" | "2" | "3" | "4"))
        })
    };
    let fixed = |s: &str| {
        let s = s.strip_prefix('u').unwrap_or(s);
        matches!(s, "int8_t" | "int16_t" | "int32_t" | "int64_t")
    };
    vector(name)
        || name.strip_prefix("make_").is_some_and(vector)
        || fixed(name)
        || name.strip_prefix('v').is_some_and(digits)
        || name.strip_prefix("tmap").is_some_and(digits)
        || name.starts_with("axe_")
        || name.starts_with("Axe")
}

/// Checks that `name` can name a kernel or buffer (`what`) in the generated source: a C identifier
/// starting with a letter, not one of the words the languages or the generated code reserve.
/// Law: accepted names never collide with a keyword or a name the emitted code declares or calls.
pub(crate) fn check_name(what: &str, name: &str) -> Result<()> {
    let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(KernelError::Invalid(format!(
            "{what} name {name:?} must be a C identifier starting with a letter"
        )));
    }
    if RESERVED.contains(&name) || generated_family(name) {
        return Err(KernelError::Invalid(format!(
            "{what} name {name:?} is taken in the generated code (a keyword of C++ or Python, a CUDA built-in, or a name the code declares itself: tid, cta, smem, v0, tmap0, axe_*); choose another"
        )));
    }
    Ok(())
}

//! The sharding notations, each read into and written from the one model.

pub mod alpa;
pub mod any;
pub mod dtensor;
mod fit;
pub mod hlo;
pub mod iota;
pub mod jax;
pub mod sdy;
mod sdy_axes;
pub mod sdy_print;

/// `text` quoted for an error message: whole when it is short, else its first 72 characters and `…`,
/// so an error about a long line costs a line, not the input again.
pub(crate) fn quoted(text: &str) -> String {
    const SHOWN: usize = 72;
    match text.char_indices().nth(SHOWN + 8) {
        None => format!("{text:?}"),
        Some(_) => {
            let cut = text
                .char_indices()
                .nth(SHOWN)
                .map_or(text.len(), |(i, _)| i);
            let head = format!("{:?}", &text[..cut]);
            format!("{}…\"", &head[..head.len() - 1])
        }
    }
}

/// Device ids for an error message: every id up to 8, else the first four, `…` and the count.
pub(crate) fn ids_text(ids: &[u64]) -> String {
    let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    if ids.len() <= 8 {
        format!("[{}]", list(ids))
    } else {
        format!("[{},…] ({} devices)", list(&ids[..4]), ids.len())
    }
}

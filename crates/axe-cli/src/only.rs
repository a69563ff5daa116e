//! `--only TEXT` of the benchmarks: the cases whose name contains `TEXT`. A `TEXT` no case name
//! contains is an error that names it and lists the cases, never an empty run that exits as a success.

/// The items of `cases` whose name (by `name`) contains `only`; every item without `--only`.
///
/// Errors: an `only` that no name contains, with the names there are.
pub fn select<T>(
    cases: Vec<T>,
    name: impl Fn(&T) -> &str,
    only: Option<&str>,
) -> Result<Vec<T>, String> {
    let Some(only) = only else {
        return Ok(cases);
    };
    let names: Vec<String> = cases.iter().map(|c| name(c).to_string()).collect();
    let picked: Vec<T> = cases
        .into_iter()
        .filter(|c| name(c).contains(only))
        .collect();
    if picked.is_empty() {
        return Err(format!(
            "--only {only:?} is in no case's name; the cases are: {}",
            names.join(", ")
        ));
    }
    Ok(picked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_in_no_name_lists_the_names() {
        let cases = vec!["transpose 2d", "tiled f32"];
        fn name<'a>(c: &'a &str) -> &'a str {
            c
        }
        assert_eq!(select(cases.clone(), name, None), Ok(cases.clone()));
        assert_eq!(
            select(cases.clone(), name, Some("tiled")),
            Ok(vec!["tiled f32"])
        );
        assert_eq!(
            select(cases, name, Some("tilde")),
            Err(
                r#"--only "tilde" is in no case's name; the cases are: transpose 2d, tiled f32"#
                    .into()
            )
        );
    }
}

//! The colour legend: one entry per colour drawn, naming the owners (threads, devices) drawn in it. A
//! picture has [`COLOURS`] colours; past them, owners share colours and the cells' labels tell them apart.

/// The colours a picture fills its colour groups with: group `g` is drawn in colour `g mod COLOURS` (the
/// SVG palette, [`crate::PALETTE`], and the terminal's colours have this many).
pub const COLOURS: usize = 12;

/// The owners a legend entry names before `…`.
const OWNERS_PER_COLOUR: usize = 3;

/// The legend of colour groups `entries` ((group, owner text), every group of the picture, in order of
/// first appearance): one entry per colour drawn, never two with the same colour, each naming the owners
/// drawn in it (`lane 0, 12, 24` — at most three, then `…`). When there are more groups than
/// [`COLOURS`], a note (starting `colours: `) says how many owners share the colours; the cells' labels
/// tell them apart.
pub(crate) fn legend_by_colour(
    entries: &[(usize, String)],
) -> (Vec<(usize, String)>, Option<String>) {
    let mut by_colour: Vec<(usize, Vec<&str>, usize)> = Vec::new();
    for (g, text) in entries {
        let colour = g % COLOURS;
        match by_colour.iter_mut().find(|(c, _, _)| *c == colour) {
            Some((_, texts, n)) => {
                *n += 1;
                if texts.len() < OWNERS_PER_COLOUR {
                    texts.push(text);
                }
            }
            None => by_colour.push((colour, vec![text], 1)),
        }
    }
    let legend = by_colour
        .into_iter()
        .map(|(colour, texts, n)| {
            let mut text = owners_text(&texts);
            if n > texts.len() {
                text.push_str(&format!(", … ({n} in all)"));
            }
            (colour, text)
        })
        .collect();
    let note = (entries.len() > COLOURS).then(|| {
        format!(
            "colours: {} owners share the {COLOURS} colours, each colour listed once in the legend with its owners, told apart by the cell labels",
            entries.len()
        )
    });
    (legend, note)
}

/// Owner texts joined: `lane 0, 12, 24` when they share their first word, else `a; b`.
fn owners_text(texts: &[&str]) -> String {
    let word = |t: &str| {
        t.split_once(' ')
            .map(|(w, rest)| (w.to_string(), rest.to_string()))
    };
    let split: Vec<Option<(String, String)>> = texts.iter().map(|t| word(t)).collect();
    if let Some(Some((first, _))) = split.first().cloned() {
        if split
            .iter()
            .all(|s| s.as_ref().is_some_and(|(w, _)| *w == first))
        {
            let rests: Vec<String> = split.into_iter().flatten().map(|(_, r)| r).collect();
            return format!("{first} {}", rests.join(", "));
        }
    }
    texts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: usize) -> Vec<(usize, String)> {
        (0..n).map(|g| (g, format!("lane {g}"))).collect()
    }

    /// Brute force: each colour is listed once, and names exactly the owners drawn in it (up to three).
    #[test]
    fn each_colour_once_with_its_owners() {
        for n in [1, 5, 12, 13, 32, 100] {
            let (legend, note) = legend_by_colour(&entries(n));
            assert_eq!(legend.len(), n.min(COLOURS));
            for (i, (colour, text)) in legend.iter().enumerate() {
                assert_eq!(*colour, i);
                let owners: Vec<usize> = (0..n).filter(|g| g % COLOURS == i).collect();
                let shown: Vec<String> = owners.iter().take(3).map(|g| g.to_string()).collect();
                let mut want = format!("lane {}", shown.join(", "));
                if owners.len() > 3 {
                    want.push_str(&format!(", … ({} in all)", owners.len()));
                }
                assert_eq!(text, &want);
            }
            assert_eq!(note.is_some(), n > COLOURS, "{n}");
        }
        let (_, note) = legend_by_colour(&entries(32));
        assert_eq!(
            note.unwrap(),
            "colours: 32 owners share the 12 colours, each colour listed once in the legend with its owners, told apart by the cell labels"
        );
    }

    #[test]
    fn owners_of_different_kinds_are_listed_whole() {
        let e = vec![(0, "gpuid 0".to_string()), (12, "devices 1, 2".to_string())];
        assert_eq!(
            legend_by_colour(&e).0,
            vec![(0, "gpuid 0; devices 1, 2".to_string())]
        );
    }
}

//! "Did you mean": the known name closest to a misspelt one, for error messages.
//!
//! Names are compared after folding case and `-`/` ` to `_` (`FQ_CoDel`, `fq-codel` →
//! `fq_codel`), then by the optimal-string-alignment distance (Levenshtein with adjacent
//! transpositions, so `fq_codle` is one edit from `fq_codel`; Damerau, "A technique for
//! computer detection and correction of spelling errors", CACM 7(3), 1964). A name is
//! suggested when it is at most two edits away and closer than half the typed length;
//! ties go to the earlier name in `known`.

fn fold(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '-' | ' ' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Optimal-string-alignment distance between `a` and `b` (by chars).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[n][m]
}

/// The known name closest to `name`, if one is close enough (see the module docs).
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed = fold(name);
    let mut best: Option<(usize, &'a str)> = None;
    for k in known {
        let d = distance(&typed, &fold(k));
        if d <= 2 && 2 * d < typed.chars().count().max(1) && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

/// ` (did you mean "NAME"?)` for the closest known name, or an empty string.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest(name, known).map_or(String::new(), |k| format!(" (did you mean \"{k}\"?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const QDISCS: [&str; 5] = ["pfifo", "codel", "fq_codel", "fq_pie", "pie"];

    #[test]
    fn distances_by_hand() {
        assert_eq!(distance("fq_codle", "fq_codel"), 1); // one transposition
        assert_eq!(distance("codel", "code"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn misspelt_names_find_their_kind() {
        assert_eq!(closest("fq_codle", QDISCS), Some("fq_codel"));
        assert_eq!(closest("fq-codel", QDISCS), Some("fq_codel"));
        assert_eq!(closest("FQ_CoDel", QDISCS), Some("fq_codel"));
        assert_eq!(closest("red", QDISCS), None); // nothing close: no guess
        assert_eq!(closest("x", QDISCS), None);
        assert_eq!(did_you_mean("pfifoo", QDISCS), " (did you mean \"pfifo\"?)");
        assert_eq!(did_you_mean("zzz", QDISCS), "");
    }
}

//! Where the points' labels of a chart go: beside each mark, above and to its right, unless
//! a mark or a label placed before is there; then the first free place among a few more around the
//! mark, further up or down and on its left. Points of a sweep often fall close together
//! (every R gives the same steady calls per hour), and labels drawn at one offset from
//! each mark would be written over each other.

/// The mean width of a tick-sized (11 px) character, an estimate for the labels' boxes.
pub(super) const CHAR: f64 = 6.2;
/// How far a mark reaches from its centre (the measured marks' radius, 4.5 px, and a
/// little air).
const MARK: f64 = 5.0;
/// A label's height.
const LINE: f64 = 11.0;
/// How far a label sits from its mark's centre, across and up.
const GAP: (f64, f64) = (7.0, 6.0);
/// How many rows up or down from its mark a label may move.
const ROWS: usize = 6;

/// A label's place: its text's start (`x`), its baseline (`y`), and whether it moved away
/// from its first place (the chart then joins it to its mark with a thin line).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placed {
    pub x: f64,
    pub y: f64,
    pub moved: bool,
}

/// A label's box: left, top, right, bottom.
type Rect = (f64, f64, f64, f64);

fn text_box(x: f64, y: f64, text: &str) -> Rect {
    let w = CHAR * text.chars().count() as f64;
    (x, y - LINE + 2.0, x + w, y + 2.0)
}

fn overlaps(a: &Rect, b: &Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Places `labels` (each a mark's centre and its text) inside `area` (left, top, right,
/// bottom), in order: the first place of each among its candidates that covers no mark and
/// no label placed before, or its first place if none is free.
#[must_use]
pub fn place(labels: &[((f64, f64), &str)], area: Rect) -> Vec<Placed> {
    let mut taken: Vec<Rect> = labels
        .iter()
        .map(|&((x, y), _)| (x - MARK, y - MARK, x + MARK, y + MARK))
        .collect();
    let mut out = Vec::with_capacity(labels.len());
    for &((px, py), text) in labels {
        let width = CHAR * text.chars().count() as f64;
        let first = (px + GAP.0, py - GAP.1);
        let mut candidates = vec![first];
        for row in 1..=ROWS {
            let dy = LINE * row as f64;
            candidates.push((first.0, first.1 - dy));
            candidates.push((first.0, first.1 + dy + LINE));
        }
        let left = px - GAP.0 - width;
        candidates.push((left, first.1));
        for row in 1..=ROWS {
            let dy = LINE * row as f64;
            candidates.push((left, first.1 - dy));
            candidates.push((left, first.1 + dy + LINE));
        }
        let inside = |b: &Rect| b.0 >= area.0 && b.1 >= area.1 && b.2 <= area.2 && b.3 <= area.3;
        let free = candidates.iter().copied().find(|&(x, y)| {
            let b = text_box(x, y, text);
            inside(&b) && !taken.iter().any(|t| overlaps(t, &b))
        });
        let (x, y) = free.unwrap_or(first);
        taken.push(text_box(x, y, text));
        out.push(Placed {
            x,
            y,
            moved: (x, y) != first,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const AREA: Rect = (0.0, 0.0, 500.0, 300.0);

    #[test]
    fn apart_points_keep_their_first_place() {
        let placed = place(&[((100.0, 100.0), "5"), ((300.0, 200.0), "10")], AREA);
        assert_eq!(
            placed,
            vec![
                Placed {
                    x: 107.0,
                    y: 94.0,
                    moved: false
                },
                Placed {
                    x: 307.0,
                    y: 194.0,
                    moved: false
                },
            ]
        );
    }

    #[test]
    fn points_on_one_spot_get_labels_that_do_not_overlap() {
        let labels: Vec<((f64, f64), &str)> = ["5", "10", "20", "50", "100"]
            .iter()
            .map(|t| ((200.0, 150.0), *t))
            .collect();
        let placed = place(&labels, AREA);
        let mark = (200.0 - MARK, 150.0 - MARK, 200.0 + MARK, 150.0 + MARK);
        let boxes: Vec<Rect> = placed
            .iter()
            .zip(&labels)
            .map(|(p, (_, t))| text_box(p.x, p.y, t))
            .collect();
        for (i, a) in boxes.iter().enumerate() {
            assert!(!overlaps(a, &mark), "{a:?} covers the mark");
            for b in &boxes[i + 1..] {
                assert!(!overlaps(a, b), "{a:?} overlaps {b:?}");
            }
        }
        assert!(!placed[0].moved);
        assert!(placed[1..].iter().all(|p| p.moved));
    }

    #[test]
    fn a_label_at_the_edge_goes_left_of_its_mark() {
        let placed = place(&[((495.0, 100.0), "100")], AREA);
        assert!(placed[0].x < 495.0, "{placed:?}");
        assert!(placed[0].moved);
    }
}

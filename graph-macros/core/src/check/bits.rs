//! A dense bit matrix: one row of bits per node, for reachability facts
//! propagated along a topological order (linear in nodes + edges, times the
//! row width in 64-bit words).

#[derive(Debug, Clone)]
pub struct BitMatrix {
    words: usize,
    bits: Vec<u64>,
}

impl BitMatrix {
    pub fn new(rows: usize, columns: usize) -> Self {
        let words = columns.div_ceil(64);
        BitMatrix {
            words,
            bits: vec![0; rows * words],
        }
    }

    pub fn set(&mut self, row: usize, column: usize) {
        self.bits[row * self.words + column / 64] |= 1 << (column % 64);
    }

    pub fn get(&self, row: usize, column: usize) -> bool {
        self.bits[row * self.words + column / 64] & (1 << (column % 64)) != 0
    }

    /// `row[target] |= row[source]`.
    pub fn union_into(&mut self, target: usize, source: usize) {
        if target == source || self.words == 0 {
            return;
        }
        let (t, s) = (target * self.words, source * self.words);
        for i in 0..self.words {
            let word = self.bits[s + i];
            self.bits[t + i] |= word;
        }
    }

    /// The columns in `lo..hi` whose bits are clear in both `self[row]`
    /// and `other[row]` (two matrices of one width).
    pub fn clear_in_both<'m>(
        &'m self,
        other: &'m BitMatrix,
        row: usize,
        lo: usize,
        hi: usize,
    ) -> impl Iterator<Item = usize> + 'm {
        debug_assert_eq!(self.words, other.words);
        let base = row * self.words;
        let (a, b) = (
            &self.bits[base..base + self.words],
            &other.bits[base..base + self.words],
        );
        let words = if lo < hi {
            lo / 64..hi.div_ceil(64)
        } else {
            0..0
        };
        words.flat_map(move |w| {
            let mut clear = !(a[w] | b[w]);
            if w == lo / 64 {
                clear &= u64::MAX << (lo % 64);
            }
            if w == (hi - 1) / 64 && !hi.is_multiple_of(64) {
                clear &= u64::MAX >> (64 - hi % 64);
            }
            std::iter::from_fn(move || {
                (clear != 0).then(|| {
                    let bit = clear.trailing_zeros() as usize;
                    clear &= clear - 1;
                    w * 64 + bit
                })
            })
        })
    }

    /// `self[target] |= other[source]`, for two matrices of one width.
    pub fn union_from(&mut self, target: usize, other: &BitMatrix, source: usize) {
        debug_assert_eq!(self.words, other.words);
        let (t, s) = (target * self.words, source * other.words);
        for i in 0..self.words {
            self.bits[t + i] |= other.bits[s + i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BitMatrix;

    #[test]
    fn clear_in_both_lists_the_columns_set_in_neither() {
        let (mut a, mut b) = (BitMatrix::new(2, 200), BitMatrix::new(2, 200));
        for c in (0..200).filter(|c| c % 3 == 0) {
            a.set(1, c);
        }
        for c in (0..200).filter(|c| c % 5 == 0) {
            b.set(1, c);
        }
        for (lo, hi) in [(0, 200), (3, 64), (64, 128), (63, 65), (70, 71), (10, 10)] {
            let got: Vec<usize> = a.clear_in_both(&b, 1, lo, hi).collect();
            let want: Vec<usize> = (lo..hi).filter(|c| c % 3 != 0 && c % 5 != 0).collect();
            assert_eq!(got, want, "{lo}..{hi}");
        }
        assert_eq!(a.clear_in_both(&b, 0, 0, 200).count(), 200);
    }

    #[test]
    fn set_get_union() {
        let mut m = BitMatrix::new(3, 130);
        m.set(0, 1);
        m.set(0, 129);
        m.set(1, 64);
        m.union_into(2, 0);
        m.union_into(2, 1);
        assert!(m.get(2, 1) && m.get(2, 64) && m.get(2, 129));
        assert!(!m.get(2, 0) && !m.get(1, 1));
        let mut other = BitMatrix::new(1, 130);
        other.union_from(0, &m, 2);
        assert!(other.get(0, 129));
    }
}

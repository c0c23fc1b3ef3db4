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

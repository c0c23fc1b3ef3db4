//! Encoding a kernel node's arguments: their bytes, and the buffers,
//! handles and execs they pass, without allocating.

use super::*;

/// Most parameters a kernel declaration has (tuples up to 12).
pub(crate) const MAX_PARAMS: usize = 12;

/// 8-byte words of argument values a kernel node holds: 256 bytes, room
/// for twelve by-value structs of a few fields each.
pub(crate) const VALUE_WORDS: usize = 32;

/// Collects a kernel's argument values and the buffers it touches, without
/// allocating: each parameter's bytes start at an 8-byte word of `words`
/// (scalars, addresses and handles take one; a [`Val`] struct as many as
/// it needs).
pub struct ArgEncoder<'a> {
    /// The values, the first `used` words written (left uninitialised past
    /// that: zeroing 256 bytes was a sixth of a kernel node's own cost).
    pub(super) words: [std::mem::MaybeUninit<u64>; VALUE_WORDS],
    /// Words used so far.
    pub(super) used: usize,
    /// Where each parameter starts in `words`.
    pub(super) starts: [u8; MAX_PARAMS],
    pub(super) len: usize,
    /// Set when the values did not fit (more than `VALUE_WORDS` words).
    pub(super) overflow: bool,
    /// The buffers the arguments touch: at most one per parameter; the
    /// first `use_count` are written (left uninitialised past that, as one
    /// is made per kernel node added).
    pub(super) use_slots: [std::mem::MaybeUninit<BufferUse>; MAX_PARAMS],
    pub(super) use_count: usize,
    /// Set when more buffers were passed than `use_slots` holds (struct
    /// parameters can pass several each): the arguments are refused.
    pub(super) too_many_uses: bool,
    /// The conditional handles the kernel may set, like `use_slots`.
    pub(super) cond_slots: [std::mem::MaybeUninit<CondHandle>; MAX_PARAMS],
    pub(super) cond_count: usize,
    /// Execs the kernel may launch from the device, which the graph keeps
    /// (and tracks at every launch). Empty, so unallocated, for most nodes.
    pub(super) execs: Vec<DeviceTarget<'a>>,
    /// The bounds the arguments must keep (see [`Len`]).
    pub(super) bounds: Bounds,
}

/// What the kernel's length-like arguments claim, against the buffers they
/// bound; each as (value, parameter index).
#[derive(Debug, Clone)]
pub(super) struct Bounds {
    /// The shortest [`In`]/[`Out`] buffer.
    pub(super) shortest: (u64, usize),
    /// The largest [`Len`] argument.
    pub(super) count: (u64, usize),
    /// One past the largest [`Index`] argument.
    pub(super) index_end: (u64, usize),
    /// The shortest [`OutPerBlock`] buffer.
    pub(super) per_block: (u64, usize),
    /// [`Count`]s and the buffers tied to them, for the kernels that have
    /// them (made on first use: most kernels have none).
    pub(super) counts: Option<Box<CountBounds>>,
}

/// Per [`Count`] number: the largest count argument (value, parameter
/// index), and the tied buffer with the least room, as (its length less
/// its `PLUS`, the `PLUS`, its parameter index).
#[derive(Debug, Clone)]
pub(super) struct CountBounds {
    pub(super) counts: [(u64, usize); COUNTS],
    pub(super) buffers: [(u64, u64, usize); COUNTS],
}

/// Keeps the smaller of `bound` and (`value`, `index`).
#[inline]
pub(super) fn lower(bound: &mut (u64, usize), value: u64, index: usize) {
    if value < bound.0 {
        *bound = (value, index);
    }
}

/// Keeps the larger of `bound` and (`value`, `index`).
#[inline]
pub(super) fn raise(bound: &mut (u64, usize), value: u64, index: usize) {
    if value > bound.0 {
        *bound = (value, index);
    }
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            shortest: (u64::MAX, 0),
            count: (0, 0),
            index_end: (0, 0),
            per_block: (u64::MAX, 0),
            counts: None,
        }
    }
}

impl std::fmt::Debug for ArgEncoder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgEncoder")
            .field("words", &self.values().0)
            .field("params", &self.len)
            .field("buffers", &self.use_count)
            .field("conds", &self.cond_count)
            .field("execs", &self.execs.len())
            .finish()
    }
}

impl Default for ArgEncoder<'_> {
    fn default() -> Self {
        ArgEncoder {
            words: [const { std::mem::MaybeUninit::uninit() }; VALUE_WORDS],
            used: 0,
            starts: [0; MAX_PARAMS],
            len: 0,
            overflow: false,
            use_slots: [const { std::mem::MaybeUninit::uninit() }; MAX_PARAMS],
            use_count: 0,
            too_many_uses: false,
            cond_slots: [const { std::mem::MaybeUninit::uninit() }; MAX_PARAMS],
            cond_count: 0,
            execs: Vec::new(),
            bounds: Bounds::default(),
        }
    }
}

impl<'a> ArgEncoder<'a> {
    pub(super) fn push_bytes(&mut self, bytes: &[u8]) {
        let needed = bytes.len().div_ceil(8).max(1);
        if self.len >= MAX_PARAMS || self.used + needed > VALUE_WORDS {
            self.overflow = true;
            return;
        }
        let start = self.used;
        let mut chunks = bytes.chunks(8);
        for slot in &mut self.words[start..start + needed] {
            // The last word zero-padded (a parameter of no bytes: one zero word).
            let mut word = [0u8; 8];
            if let Some(chunk) = chunks.next() {
                word[..chunk.len()].copy_from_slice(chunk);
            }
            *slot = std::mem::MaybeUninit::new(u64::from_ne_bytes(word));
        }
        self.starts[self.len] = start as u8;
        self.used += needed;
        self.len += 1;
    }

    /// Pushes a value of at most one word (scalars, addresses, handles):
    /// the word path of [`Self::push_bytes`], without a copy call per node.
    #[inline]
    pub(super) fn push_scalar<const N: usize>(&mut self, bytes: [u8; N]) {
        if N > 8 || self.len >= MAX_PARAMS || self.used >= VALUE_WORDS {
            return self.push_bytes(&bytes);
        }
        let mut word = [0u8; 8];
        word[..N].copy_from_slice(&bytes);
        self.words[self.used] = std::mem::MaybeUninit::new(u64::from_ne_bytes(word));
        self.starts[self.len] = self.used as u8;
        self.used += 1;
        self.len += 1;
    }

    /// The encoded values and where each parameter starts in them, for
    /// `kernelParams` to point into.
    pub(crate) fn values(&self) -> (&[u64], &[u8]) {
        let written = &self.words[..self.used];
        // SAFETY: `push_bytes` and `push_scalar` wrote the first `used`
        // words, and MaybeUninit<u64> has u64's layout.
        let words = unsafe { &*(written as *const [std::mem::MaybeUninit<u64>] as *const [u64]) };
        (words, &self.starts[..self.len])
    }

    #[inline]
    pub(super) fn push_use(&mut self, used: BufferUse) {
        match self.use_slots.get_mut(self.use_count) {
            Some(slot) => {
                slot.write(used);
                self.use_count += 1;
            }
            // A use not recorded would escape every check: refused.
            None => self.too_many_uses = true,
        }
    }

    pub(super) fn push_cond(&mut self, handle: CondHandle) {
        if let Some(slot) = self.cond_slots.get_mut(self.cond_count) {
            slot.write(handle);
            self.cond_count += 1;
        }
    }

    pub(super) fn push_exec(&mut self, target: DeviceTarget<'a>) {
        self.execs.push(target);
    }

    /// Checks the arguments' bounds for a launch with `config`: every
    /// [`Len`] and [`Index`] argument within every [`In`]/[`Out`] buffer,
    /// and an [`OutPerBlock`] buffer for every block.
    pub(crate) fn check_bounds(
        &self,
        config: &LaunchConfig,
    ) -> std::result::Result<(), ArgumentRefusal> {
        if self.overflow {
            return Err(ArgumentRefusal::ArgumentsTooLarge {
                most: VALUE_WORDS * 8,
            });
        }
        if self.too_many_uses {
            return Err(ArgumentRefusal::TooManyBuffers { most: MAX_PARAMS });
        }
        let b = &self.bounds;
        let (shortest, buffer) = b.shortest;
        if b.count.0 > shortest {
            return Err(ArgumentRefusal::LengthPastBuffer {
                argument: b.count.1,
                length: b.count.0,
                buffer,
                elements: shortest,
            });
        }
        if b.index_end.0 > shortest {
            return Err(ArgumentRefusal::IndexPastBuffer {
                argument: b.index_end.1,
                index: b.index_end.0 - 1,
                buffer,
                elements: shortest,
            });
        }
        if let Some(counts) = &b.counts {
            for (&(count, at), &(room, plus, buffer)) in counts.counts.iter().zip(&counts.buffers) {
                if count > room {
                    return Err(ArgumentRefusal::CountPastBuffer {
                        argument: at,
                        count,
                        buffer,
                        elements: room + plus,
                        plus,
                    });
                }
            }
        }
        let g = config.grid;
        // Saturating: a product past u64 (no device runs such a grid) is
        // refused, not wrapped.
        let blocks = u64::from(g.x)
            .saturating_mul(u64::from(g.y))
            .saturating_mul(u64::from(g.z));
        if blocks > b.per_block.0 {
            return Err(ArgumentRefusal::FewerElementsThanBlocks {
                buffer: b.per_block.1,
                elements: b.per_block.0,
                blocks,
            });
        }
        Ok(())
    }

    /// The counts and their buffers, made on first use.
    pub(super) fn counts_mut(&mut self) -> &mut CountBounds {
        self.bounds.counts.get_or_insert_with(|| {
            Box::new(CountBounds {
                counts: [(0, 0); COUNTS],
                buffers: [(u64::MAX, 0, 0); COUNTS],
            })
        })
    }

    /// For a kernel declared `no_alias` ([`KernelDecl::no_alias`]): no
    /// buffer it writes overlaps another buffer argument (the kernel may
    /// read one element while another thread writes it).
    #[inline]
    pub(crate) fn check_aliasing(
        &self,
        no_alias: bool,
    ) -> std::result::Result<(), ArgumentRefusal> {
        match no_alias {
            false => Ok(()),
            true => self.check_no_overlap(),
        }
    }

    fn check_no_overlap(&self) -> std::result::Result<(), ArgumentRefusal> {
        let uses = self.uses();
        for (i, a) in uses.iter().enumerate() {
            for b in &uses[i + 1..] {
                // Empty ranges overlap nothing.
                let overlap = a.bytes.0 < b.bytes.1
                    && b.bytes.0 < a.bytes.1
                    && a.bytes.0 < a.bytes.1
                    && b.bytes.0 < b.bytes.1;
                if overlap && (a.write || b.write) {
                    return Err(ArgumentRefusal::OverlapUnderNoAlias);
                }
            }
        }
        Ok(())
    }

    #[inline]
    pub(super) fn bound_buffer(&mut self, len: usize, index: usize) {
        lower(&mut self.bounds.shortest, len as u64, index);
    }

    /// Passes a buffer's address and reports its use.
    #[inline]
    pub(super) fn push_buffer<T>(&mut self, buffer: &Buf<'a, T>, write: bool) {
        self.push_scalar(buffer.device_ptr().to_ne_bytes());
        self.push_use(buffer.as_use(write));
    }

    /// Encodes a struct parameter ([`kernel_struct!`](crate::kernel_struct)):
    /// `fields` encodes each field as its own parameter type would into a
    /// fresh encoder (so each is checked and its buffers reported as for a
    /// separate argument), then their values are laid out as the kernel's
    /// C struct (`layout`: each field's size and alignment, in order) and
    /// pushed as one parameter, and the fields' buffers and bounds become
    /// this encoder's.
    #[doc(hidden)]
    pub fn encode_struct(
        &mut self,
        index: usize,
        layout: &[Option<(usize, usize)>],
        fields: impl FnOnce(&mut ArgEncoder<'a>) -> std::result::Result<(), ArgumentRefusal>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        let mut inner = ArgEncoder::default();
        fields(&mut inner)?;
        if inner.overflow || inner.len != layout.len() {
            return Err(ArgumentRefusal::StructTooLarge {
                argument: index,
                most_fields: MAX_PARAMS,
                most_bytes: VALUE_WORDS * 8,
            });
        }
        if !inner.conds().is_empty() || !inner.execs().is_empty() {
            return Err(ArgumentRefusal::StructHoldsHandles { argument: index });
        }
        let (words, starts) = inner.values();
        // Each value's bytes, in order, from the start of its first word.
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let mut packed = Vec::new();
        let mut largest = 1;
        for (field, (&start, place)) in starts.iter().zip(layout).enumerate() {
            let Some((size, align)) = *place else {
                return Err(ArgumentRefusal::StructFieldType {
                    argument: index,
                    field,
                });
            };
            largest = largest.max(align);
            packed.resize(packed.len().next_multiple_of(align.max(1)), 0);
            let from = start as usize * 8;
            packed.extend_from_slice(&bytes[from..from + size]);
        }
        packed.resize(packed.len().next_multiple_of(largest), 0);
        self.push_bytes(&packed);
        // Past the slots, a use refuses the arguments (`push_use`).
        for used in inner.uses() {
            self.push_use(*used);
        }
        self.absorb_bounds(&inner.bounds);
        Ok(())
    }

    /// Takes the bounds `other` (a struct's fields) sets as this
    /// encoder's own, as if its arguments had been encoded here.
    fn absorb_bounds(&mut self, other: &Bounds) {
        let mine = &mut self.bounds;
        lower(&mut mine.shortest, other.shortest.0, other.shortest.1);
        raise(&mut mine.count, other.count.0, other.count.1);
        raise(&mut mine.index_end, other.index_end.0, other.index_end.1);
        lower(&mut mine.per_block, other.per_block.0, other.per_block.1);
        if let Some(theirs) = &other.counts {
            let mine = self.counts_mut();
            for c in 0..COUNTS {
                raise(&mut mine.counts[c], theirs.counts[c].0, theirs.counts[c].1);
                if theirs.buffers[c].0 < mine.buffers[c].0 {
                    mine.buffers[c] = theirs.buffers[c];
                }
            }
        }
    }

    /// The execs the encoded arguments let the kernel launch.
    pub(crate) fn execs(&self) -> &[DeviceTarget<'a>] {
        &self.execs
    }

    /// The conditional handles the encoded arguments let the kernel set.
    pub(crate) fn conds(&self) -> &[CondHandle] {
        let written = &self.cond_slots[..self.cond_count];
        // SAFETY: `push_cond` wrote the first `cond_count` slots, and
        // MaybeUninit<T> has T's layout.
        unsafe { &*(written as *const [std::mem::MaybeUninit<CondHandle>] as *const [CondHandle]) }
    }

    /// The buffers the encoded arguments touch.
    pub(crate) fn uses(&self) -> &[BufferUse] {
        let written = &self.use_slots[..self.use_count];
        // SAFETY: `push_use` wrote the first `use_count` slots, and
        // MaybeUninit<T> has T's layout.
        unsafe { &*(written as *const [std::mem::MaybeUninit<BufferUse>] as *const [BufferUse]) }
    }
}

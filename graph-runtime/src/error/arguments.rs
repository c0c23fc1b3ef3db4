//! Why a node's arguments were refused: the checks a kernel node, a copy,
//! an allocation or a repeated block makes on what it is given, each a
//! variant with the numbers it compared, so that a program (and a test)
//! matches on the check and reads its values instead of parsing a message.

/// Why a node's arguments fail a check
/// ([`GraphError::InvalidArguments`](super::GraphError::InvalidArguments),
/// and [`LaunchRefusal::Arguments`](super::LaunchRefusal::Arguments) for a
/// declared kernel's launch on a stream). Argument numbers count from 0 in
/// the kernel's parameter list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentRefusal {
    /// A launch configuration with a zero grid dimension.
    #[error("grid {x}x{y}x{z} has a zero dimension")]
    ZeroGrid { x: u32, y: u32, z: u32 },
    /// A launch configuration with a zero block dimension.
    #[error("block {x}x{y}x{z} has a zero dimension")]
    ZeroBlock { x: u32, y: u32, z: u32 },
    /// A block of more threads than CUDA's 1024.
    #[error("block of {threads} threads exceeds CUDA's 1024")]
    TooManyThreads { threads: u64 },
    /// The arguments take more bytes than a node holds.
    #[error("the kernel's arguments take more than the {most} bytes a node holds")]
    ArgumentsTooLarge { most: usize },
    /// The arguments pass more buffers than a node tracks.
    #[error("the kernel's arguments pass more than {most} buffers (struct fields included)")]
    TooManyBuffers { most: usize },
    /// A `Len` argument past the shortest `In`/`Out` buffer.
    #[error(
        "length argument {argument} is {length} but buffer argument {buffer} has {elements} \
         elements"
    )]
    LengthPastBuffer {
        argument: usize,
        length: u64,
        buffer: usize,
        elements: u64,
    },
    /// An `Index` argument at or past the shortest `In`/`Out` buffer's end.
    #[error(
        "index argument {argument} is {index} but buffer argument {buffer} has {elements} \
         elements"
    )]
    IndexPastBuffer {
        argument: usize,
        index: u64,
        buffer: usize,
        elements: u64,
    },
    /// A `Count<C>` argument past a buffer tied to it (`InLen`, `OutLen`),
    /// which the kernel touches below the count plus `plus`.
    #[error(
        "count argument {argument} is {count} but buffer argument {buffer} has {elements} \
         elements, and the kernel touches {} of them",
        touched(*.count, *.plus)
    )]
    CountPastBuffer {
        argument: usize,
        count: u64,
        buffer: usize,
        elements: u64,
        plus: u64,
    },
    /// An `OutPerBlock` buffer shorter than the launch's blocks.
    #[error(
        "buffer argument {buffer} has {elements} elements, one per block, but the launch has \
         {blocks} blocks"
    )]
    FewerElementsThanBlocks {
        buffer: usize,
        elements: u64,
        blocks: u64,
    },
    /// A buffer shorter than the elements its parameter type says the
    /// kernel touches (`InFirst<T, N>`, `InLen<T, C, PLUS>`, ...).
    #[error(
        "buffer argument {buffer} has {elements} elements; the kernel touches its first {touched}"
    )]
    ShorterThanTouched {
        buffer: usize,
        elements: usize,
        touched: usize,
    },
    /// A buffer bound read-only passed where the kernel writes.
    #[error(
        "argument {argument} is written by the kernel, but its buffer was bound read-only; bind \
         it with `bind_mut`"
    )]
    WrittenButReadOnly { argument: usize },
    /// Buffers that overlap, one written, passed to a `no_alias` kernel.
    #[error(
        "two of the kernel's buffer arguments overlap and it writes one of them, but it is \
         declared `no_alias`: pass buffers that do not overlap"
    )]
    OverlapUnderNoAlias,
    /// A `Count<C>`, `InLen` or `OutLen` parameter naming a count past the
    /// four a kernel has (a declaration's mistake).
    #[error(
        "argument {argument} names count {count}, but a kernel has counts 0 to {}",
        .counts.saturating_sub(1)
    )]
    NoSuchCount {
        argument: usize,
        count: usize,
        /// How many counts a kernel has.
        counts: usize,
    },
    /// A struct parameter of too many fields or bytes.
    #[error(
        "argument {argument}: a struct parameter holds at most {most_fields} fields of \
         {most_bytes} bytes in all"
    )]
    StructTooLarge {
        argument: usize,
        most_fields: usize,
        most_bytes: usize,
    },
    /// A struct parameter holding a conditional handle or an exec.
    #[error("argument {argument}: a struct parameter cannot hold conditional handles or execs")]
    StructHoldsHandles { argument: usize },
    /// A struct field of a type a struct parameter cannot hold.
    #[error("argument {argument}: field {field} has a type a struct parameter cannot hold")]
    StructFieldType { argument: usize, field: usize },
    /// A part sliced past its buffer's end (`Buf::slice`), or a range that
    /// ends before it starts.
    #[error(
        "a buffer argument is a `slice` past its buffer's end (or a range that ends before it \
         starts)"
    )]
    PartPastEnd,
    /// A copy between buffers of different lengths.
    #[error("copies {elements} elements into a destination of {destination}")]
    CopyLengths { elements: usize, destination: usize },
    /// An allocation of no bytes.
    #[error("allocates 0 bytes: an allocation holds at least one byte")]
    EmptyAllocation,
    /// Edge kinds given for some dependencies but not all.
    #[error(
        "one edge kind is needed per dependency ({kinds} kinds for {dependencies} dependencies)"
    )]
    EdgeKinds { kinds: usize, dependencies: usize },
    /// A repeated block's count below zero.
    #[error("its count is {count}: a repeated block runs 0 or more times")]
    NegativeCount { count: i128 },
    /// A repeated block's count past the nodes a graph holds.
    #[error("its count is {count}, more than the {most} nodes a graph holds")]
    CountPastMostNodes { count: u128, most: usize },
    /// A repeated block whose iterations would add more nodes than a graph
    /// holds.
    #[error("its iterations would add {nodes} nodes, past the {most} a graph holds")]
    IterationsPastMostNodes { nodes: usize, most: usize },
}

/// How many elements a count touches: `count`, or `count + plus`.
fn touched(count: u64, plus: u64) -> String {
    match plus {
        0 => count.to_string(),
        plus => format!("{count} + {plus}"),
    }
}

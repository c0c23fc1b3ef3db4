//! Unit tests of argument encoding and its checks (no GPU).

use super::*;

fn buf(len: usize, writable: bool) -> Buf<'static, f32> {
    Buf::new(0x1000, len, writable, 1, None)
}

/// Encodes `args` for a launch of 1 x 32 and checks the bounds.
fn check<A: KernelArgs>(args: A::Args<'static>) -> std::result::Result<(), ArgumentRefusal> {
    let mut encoded = ArgEncoder::default();
    A::encode(&args, &mut encoded)?;
    encoded.check_bounds(&LaunchConfig::new(1, 32))
}

type Csr = (
    InLen<f32, 0, 1>,
    InLen<f32, 1>,
    OutLen<f32, 0>,
    Count<0>,
    Count<1>,
);

#[test]
fn counts_bound_their_own_buffers() {
    // n = 10 rows (offsets of 11), nnz = 40: every length fits.
    check::<Csr>((buf(11, false), buf(40, false), buf(10, true), 10, 40)).unwrap();
    // Longer buffers are fine; each count checks only its own buffers.
    check::<Csr>((buf(100, false), buf(40, false), buf(10, true), 10, 40)).unwrap();
    let err = check::<Csr>((buf(10, false), buf(40, false), buf(10, true), 10, 40));
    let offsets = ArgumentRefusal::CountPastBuffer {
        argument: 3,
        count: 10,
        buffer: 0,
        elements: 10,
        plus: 1,
    };
    assert_eq!(err.as_ref().unwrap_err(), &offsets);
    assert_eq!(
        offsets.to_string(),
        "count argument 3 is 10 but buffer argument 0 has 10 elements, and the kernel touches 10 + 1 of them"
    );
    let err = check::<Csr>((buf(11, false), buf(39, false), buf(10, true), 10, 40));
    let values = ArgumentRefusal::CountPastBuffer {
        argument: 4,
        count: 40,
        buffer: 1,
        elements: 39,
        plus: 0,
    };
    assert_eq!(err.as_ref().unwrap_err(), &values);
    assert_eq!(
        values.to_string(),
        "count argument 4 is 40 but buffer argument 1 has 39 elements, and the kernel touches 40 of them"
    );
    // A buffer shorter than its PLUS fails whatever the count.
    let err = check::<Csr>((buf(0, false), buf(40, false), buf(10, true), 0, 40));
    assert_eq!(
        err.unwrap_err(),
        ArgumentRefusal::ShorterThanTouched {
            buffer: 0,
            elements: 0,
            touched: 1
        }
    );
    // OutLen writes: a read-only buffer is refused.
    let err = check::<Csr>((buf(11, false), buf(40, false), buf(10, false), 10, 40));
    assert_eq!(
        err.unwrap_err(),
        ArgumentRefusal::WrittenButReadOnly { argument: 2 }
    );
}

crate::kernel_struct! {
    /// `struct { const float* a; unsigned n; double scale; unsigned char flag; }`
    struct Mixed {
        a: In<f32>,
        n: Len,
        scale: Val<f64>,
        flag: u8,
    }
}

#[test]
fn struct_fields_are_laid_out_as_c_and_checked_as_arguments() {
    let a = Buf::new(0x1122_3344_5566_7788, 100, false, 1, None);
    let arg = Mixed {
        a,
        n: 100,
        scale: 0.5,
        flag: 7,
    };
    let mut encoded = ArgEncoder::default();
    <(Mixed<'static>, Len) as KernelArgs>::encode(&(arg, 100), &mut encoded).unwrap();
    encoded.check_bounds(&LaunchConfig::new(1, 32)).unwrap();
    let (words, starts) = encoded.values();
    assert_eq!(starts, [0, 4]);
    // a @ 0, n @ 8, scale @ 16 (8-aligned), flag @ 24, padded to 32.
    assert_eq!(words[0], 0x1122_3344_5566_7788);
    assert_eq!(words[1] as u32, 100);
    assert_eq!(f64::from_bits(words[2]), 0.5);
    assert_eq!(words[3], 7);
    assert_eq!(encoded.uses().len(), 1);
    assert!(!encoded.uses()[0].write);
    // The struct's Len bounds its buffer, as the separate Len does.
    let arg = Mixed {
        a,
        n: 101,
        scale: 0.5,
        flag: 7,
    };
    let mut encoded = ArgEncoder::default();
    <(Mixed<'static>, Len) as KernelArgs>::encode(&(arg, 1), &mut encoded).unwrap();
    let err = encoded.check_bounds(&LaunchConfig::new(1, 32)).unwrap_err();
    assert_eq!(
        err,
        ArgumentRefusal::LengthPastBuffer {
            argument: 0,
            length: 101,
            buffer: 0,
            elements: 100
        }
    );
    const { assert!(!<Mixed<'static> as KernelParam>::WRITES) };
    assert!(!Mixed::__field_writes("a") && Mixed::__field_writes("nope"));
}

crate::kernel_struct! {
    /// Twelve buffers: with one more argument, a thirteenth.
    struct Twelve {
        a0: In<f32>, a1: In<f32>, a2: In<f32>, a3: In<f32>, a4: In<f32>, a5: In<f32>,
        a6: In<f32>, a7: In<f32>, a8: In<f32>, a9: In<f32>, a10: In<f32>, a11: In<f32>,
    }
}

#[test]
fn more_buffers_than_a_node_records_are_refused() {
    let b = Buf::<f32>::new(0x1000, 100, true, 1, None);
    let twelve = Twelve {
        a0: b,
        a1: b,
        a2: b,
        a3: b,
        a4: b,
        a5: b,
        a6: b,
        a7: b,
        a8: b,
        a9: b,
        a10: b,
        a11: b,
    };
    let mut encoded = ArgEncoder::default();
    <(Twelve<'static>, Out<f32>, Len) as KernelArgs>::encode(&(twelve, b, 100), &mut encoded)
        .unwrap();
    let err = encoded.check_bounds(&LaunchConfig::new(1, 32)).unwrap_err();
    assert_eq!(err, ArgumentRefusal::TooManyBuffers { most: 12 });
}

#[test]
fn overlapping_buffers_one_written_are_found() {
    let whole = Buf::<f32>::new(0x1000, 100, true, 1, None);
    let (head, tail) = (whole.slice(0..50), whole.slice(50..100));
    let check = |args: (Buf<'static, f32>, Buf<'static, f32>, Buf<'static, f32>)| {
        let mut encoded = ArgEncoder::default();
        <(In<f32>, In<f32>, Out<f32>) as KernelArgs>::encode(&args, &mut encoded).unwrap();
        encoded.check_aliasing(true)
    };
    // Reads may overlap; a write may not overlap anything.
    check((whole, whole, tail.slice(0..0))).unwrap();
    check((head, head, tail)).unwrap();
    let overlap = Err(ArgumentRefusal::OverlapUnderNoAlias);
    assert_eq!(check((whole, head, tail)), overlap);
    assert_eq!(check((head, tail, tail)), overlap);
}

#[test]
fn a_count_past_the_last_number_is_refused() {
    let err = check::<(InLen<f32, 4>, Count<4>)>((buf(8, false), 8));
    let err = err.unwrap_err();
    assert_eq!(
        err,
        ArgumentRefusal::NoSuchCount {
            argument: 0,
            count: 4,
            counts: 4
        }
    );
    assert_eq!(
        err.to_string(),
        "argument 0 names count 4, but a kernel has counts 0 to 3"
    );
}

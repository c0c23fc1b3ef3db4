//! Unit tests of buffer handles (no GPU).

use super::Buf;

fn buf() -> Buf<'static, f32> {
    Buf::new(0x1000, 8, true, 1, None)
}

#[test]
fn try_slice_refuses_what_is_out_of_bounds_and_slice_keeps_the_rest() {
    assert!(buf().try_slice(4..9).is_none());
    let (start, end) = (5, 4);
    assert!(buf().try_slice(start..end).is_none());
    let tail = buf().slice(6..8);
    assert_eq!((tail.device_ptr(), tail.len()), (0x1000 + 24, 2));
    assert!(tail.is_writable());
    assert_eq!(buf().slice(8..8).len(), 0);
}

#[test]
fn a_slice_out_of_bounds_is_empty_and_marked_for_refusal() {
    let (start, end) = (5, 4);
    for part in [buf().slice(2..9), buf().slice(start..end)] {
        assert_eq!(part.len(), 0);
        assert!(super::refuse_out_of_range("n", &[part.as_use(true)]).is_err());
    }
    assert!(super::refuse_out_of_range("n", &[buf().slice(8..8).as_use(true)]).is_ok());
}

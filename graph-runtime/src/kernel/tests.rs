//! Unit tests of declarations and launch configurations (no GPU).

use super::load::arch_name;
use super::*;

#[test]
fn launch_config_validation() {
    assert!(LaunchConfig::new(1, 32).validate().is_ok());
    let refused = |config: LaunchConfig| config.validate().unwrap_err();
    assert_eq!(
        refused(LaunchConfig::new(0, 32)),
        ArgumentRefusal::ZeroGrid { x: 0, y: 1, z: 1 }
    );
    assert_eq!(
        refused(LaunchConfig::new(1, (32, 0))),
        ArgumentRefusal::ZeroBlock { x: 32, y: 0, z: 1 }
    );
    let many = refused(LaunchConfig::new(1, (64, 32)));
    assert_eq!(many, ArgumentRefusal::TooManyThreads { threads: 2048 });
    assert_eq!(
        many.to_string(),
        "block of 2048 threads exceeds CUDA's 1024"
    );
    assert_eq!(LaunchConfig::for_elements(1000, 256).grid, Dim3::from(4));
}

#[test]
fn scalar_arguments_are_encoded_in_native_layout() {
    let mut out = ArgEncoder::default();
    <(u32, f64, u8) as KernelArgs>::encode(&(7, 1.5, 3), &mut out).unwrap();
    let (values, starts) = out.values();
    assert_eq!(starts, [0, 1, 2]);
    assert_eq!(values[0] as u32, 7);
    assert_eq!(f64::from_bits(values[1]), 1.5);
    assert_eq!(values[2] as u8, 3);
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    scale: f32,
    offset: f32,
    count: u64,
    bias: [f32; 2],
}

#[test]
fn structs_take_the_words_they_need() {
    let mut out = ArgEncoder::default();
    let params = Params {
        scale: 2.0,
        offset: -1.0,
        count: 7,
        bias: [0.5, 0.25],
    };
    <(u32, Val<Params>, [u16; 3]) as KernelArgs>::encode(&(9, params, [1, 2, 3]), &mut out)
        .unwrap();
    let (values, starts) = out.values();
    // 4 bytes, then 24 bytes (three words), then 6 bytes (one word).
    assert_eq!(starts, [0, 1, 4]);
    let bytes: &[u8] = bytemuck::cast_slice(&values[1..4]);
    assert_eq!(bytes, bytemuck::bytes_of(&params));
    assert_eq!(values[4] & 0xFFFF_FFFF_FFFF, 0x0003_0002_0001);
    assert!(out.check_bounds(&LaunchConfig::new(1, 1)).is_ok());
}

#[test]
fn arguments_past_a_nodes_room_are_refused() {
    let mut out = ArgEncoder::default();
    let big = [0u64; 30];
    <(Val<[u64; 30]>, Val<[u64; 30]>) as KernelArgs>::encode(&(big, big), &mut out).unwrap();
    let err = out.check_bounds(&LaunchConfig::new(1, 1)).unwrap_err();
    assert_eq!(err, ArgumentRefusal::ArgumentsTooLarge { most: 256 });
    assert!(
        err.to_string().contains("the 256 bytes a node holds"),
        "{err}"
    );
}

#[test]
fn arch_names_are_interned() {
    assert_eq!(arch_name(9, 0), "compute_90");
    assert!(std::ptr::eq(arch_name(9, 0), arch_name(9, 0)));
}

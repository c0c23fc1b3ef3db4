//! Host nodes over graph data: copy nodes bring device data into a
//! graph-owned host buffer, host nodes read and change it, and the program
//! reads it through the exec between launches.

use crate::common::{gpu, sync};
use graph_runtime::error::OrderRule;
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, GraphError, LaunchConfig};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const N: u32 = 2048;

/// iota -> copy back -> host sum -> host doubles -> copy forth, three
/// launches: each sum is the iota's, the device gets the doubled values,
/// and the exec hands the host buffer out between launches.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn host_nodes_consume_what_copy_nodes_bring_back() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let iota = kernels::Iota::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut y = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let sums = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(AtomicUsize::new(0));
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (xb, yb) = (g.bind_mut(&mut x), g.bind_mut(&mut y));
        let host = g.add_host_buffer::<f32>(N as usize).unwrap();
        let fill = g
            .add_kernel(
                "iota",
                &iota,
                LaunchConfig::for_elements(N, 256),
                (xb, N),
                &[],
            )
            .unwrap();
        let back = g.add_copy("back", xb, &host, &[fill.node()]).unwrap();
        let seen = sums.clone();
        let sum = g
            .add_host_reading(
                "sum",
                &host,
                move |data: &[f32]| {
                    seen.lock()
                        .unwrap()
                        .push(data.iter().map(|v| *v as f64).sum::<f64>())
                },
                &[back],
            )
            .unwrap();
        let count = calls.clone();
        let double = g
            .add_host_writing(
                "double",
                &host,
                move |data: &mut [f32]| {
                    count.fetch_add(1, Ordering::SeqCst);
                    data.iter_mut().for_each(|v| *v *= 2.0);
                },
                &[sum],
            )
            .unwrap();
        g.add_copy("forth", &host, yb, &[double]).unwrap();
        // A host node unordered with the copy that writes the buffer.
        let err = g
            .add_host_reading("racer", &host, |_: &[f32]| {}, &[fill.node()])
            .unwrap_err();
        assert!(
            matches!(&err, GraphError::Unordered { label, rule: OrderRule::HostBuffer { .. } }
                if label == "racer"),
            "{err}"
        );
        // Another graph cannot use it.
        let mut other = Graph::new(&ctx).unwrap();
        let err = other
            .add_host_reading("elsewhere", &host, |_: &[f32]| {}, &[])
            .unwrap_err();
        assert!(matches!(err, GraphError::ForeignHandle { .. }), "{err}");
        let mut exec = g.instantiate().unwrap();
        assert!(matches!(g.instantiate(), Err(GraphError::SecondExec)));
        for launch in 1..=3 {
            exec.launch(&stream).unwrap();
            let data = exec.host_data(&host).unwrap();
            assert!(data.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32));
            // The program may change it between launches too.
            data.fill(-1.0);
            assert_eq!(calls.load(Ordering::SeqCst), launch);
        }
        sync(&stream);
    }
    let expected = (N as f64) * (N as f64 - 1.0) / 2.0;
    assert_eq!(*sums.lock().unwrap(), vec![expected; 3]);
    let y = stream.clone_dtoh(&y).unwrap();
    assert!(y.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32));
}

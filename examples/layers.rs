//! A layered pipeline whose depth and width are given at run time: `W`
//! tiles of a vector, each through `L` layers of `y = 0.5 * y + 1`, one
//! repeated block inside another (`tiles` of `layers`), then the tiles
//! summed on the device and checked against the host.
//!
//! Run: `cargo run -p graph-examples --example layers -- [L] [W]`
//! (defaults: 12 layers over 16 tiles). The graph has `2 * L * W` kernel
//! nodes, built by a loop: the expansion does not grow with L or W.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

/// Elements per tile (one block of 256 threads).
const TILE: usize = 256;

cuda_graph! {
    /// Loads `x_h`, runs `layers` layers on each of `tiles` tiles, sums.
    pub graph Layers(x_h: &[f32], x: &mut CudaSlice<f32>, part: &mut CudaSlice<f64>,
                     out: &mut CudaSlice<f64>, layers: usize, tiles: usize) {
        load: copy x_h => x;
        // Each tile writes only its own part of `x`.
        #[disjoint(x)]
        tile: for t in 0..tiles {
            layer: for l in 0..layers {
                half: kernel kernels::Scale<<<1, TILE as u32>>>(x.slice(t * TILE..(t + 1) * TILE), 0.5f32, TILE as u32);
                plus: kernel kernels::AddOne<<<1, TILE as u32>>>(x.slice(t * TILE..(t + 1) * TILE), TILE as u32);
                half -> plus;
                plus[l-1] -> half;
            }
        }
        partial: kernel kernels::ReducePartial<<<tiles as u32, 256>>>(x, part, (tiles * TILE) as u32);
        total: kernel kernels::ReduceFinal<<<1, 256>>>(part, out, tiles as u32);
        load -> tile -> partial -> total;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[Layers::DOT])? else {
        return Ok(());
    };
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let layers = args.next().transpose()?.unwrap_or(12);
    let tiles = args.next().transpose()?.unwrap_or(16).max(1);
    let n = tiles * TILE;
    let stream = ctx.new_stream()?;
    let x_h: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    let mut x = stream.alloc_zeros::<f32>(n)?;
    let mut part = stream.alloc_zeros::<f64>(tiles)?;
    let mut out = stream.alloc_zeros::<f64>(1)?;
    {
        let graph = Layers::build(&ctx, &x_h, &mut x, &mut part, &mut out, layers, tiles)?;
        println!(
            "{layers} layers x {tiles} tiles: {} nodes",
            graph.graph().node_count()
        );
        let mut exec = graph.instantiate()?;
        exec.launch(&stream)?;
        exec.synchronize()?;
    }
    let got = stream.clone_dtoh(&x)?;
    let expected: Vec<f32> = x_h
        .iter()
        .map(|&v| (0..layers).fold(v, |y, _| 0.5 * y + 1.0))
        .collect();
    common::ensure(got == expected, "every tile went through every layer")?;
    let sum = stream.clone_dtoh(&out)?[0];
    let want: f64 = expected.iter().map(|&v| f64::from(v)).sum();
    println!("sum after {layers} layers: {sum} (host: {want})");
    common::ensure(
        (sum - want).abs() <= 1e-9 * want.abs().max(1.0),
        "the device's sum matches the host's",
    )
}

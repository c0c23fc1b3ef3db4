//! Quick start: a graph that loads a vector, scales it and sums it with the
//! two-stage reduction, declared with `cuda_graph!` and checked at compile
//! time. Run: `cargo run -p graph-examples --example quickstart`.
//! Its picture, `quickstart.svg`, is `QuickStart::DOT` rendered by Graphviz:
//! `cargo run -p graph-examples --example quickstart | tail -n +2 > examples/quickstart.dot`
//! then `dot -Tsvg examples/quickstart.dot -o examples/quickstart.svg`
//! (on a machine without CUDA, the example prints the DOT).

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    /// x = 2 * x_h, then sum(x) in two stages.
    pub graph QuickStart(x_h: &[f32], x: &mut CudaSlice<f32>, part: &mut CudaSlice<f64>,
                         out: &mut CudaSlice<f64>, n: u32, blocks: u32) {
        load:    copy x_h => x;
        double:  kernel kernels::Scale<<<n.div_ceil(256), 256>>>(x, 2.0f32, n);
        partial: kernel kernels::ReducePartial<<<blocks, 256>>>(x, part, n);
        total:   kernel kernels::ReduceFinal<<<1, 256>>>(part, out, blocks);
        load -> double -> partial -> total;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[QuickStart::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let (n, blocks) = (1u32 << 20, 120u32);
    let x_h: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let mut x = stream.alloc_zeros::<f32>(n as usize)?;
    let mut part = stream.alloc_zeros::<f64>(blocks as usize)?;
    let mut out = stream.alloc_zeros::<f64>(1)?;
    {
        let graph = QuickStart::build(&ctx, &x_h, &mut x, &mut part, &mut out, n, blocks)?;
        let mut exec = graph.instantiate()?;
        exec.launch(&stream)?;
    }
    let sum = stream.clone_dtoh(&out)?[0];
    let expected: f64 = x_h.iter().map(|v| 2.0 * f64::from(*v)).sum();
    println!("sum of 2x over {n} elements: {sum} (expected {expected})");
    common::ensure(sum == expected, "the graph's sum matches the host's")
}

#[cfg(test)]
mod tests {
    #[test]
    fn committed_picture_is_current() {
        assert_eq!(
            super::QuickStart::DOT,
            include_str!("quickstart.dot"),
            "regenerate quickstart.dot and quickstart.svg (see the module docs)"
        );
    }
}

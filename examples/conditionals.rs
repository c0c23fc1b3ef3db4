//! Conditional nodes: IF, IF/ELSE, a WHILE counting down from 1,000, and a
//! SWITCH whose arm is chosen on the device.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    /// `if` with and without `else`: the handle is set by a kernel.
    graph Branches(visits: &mut CudaSlice<i32>, value: u32) {
        cond go;
        cond choose;
        set_go: kernel kernels::SetCondition<<<1, 1>>>(go, value);
        set_choose: kernel kernels::SetCondition<<<1, 1>>>(choose, value);
        // Unordered with `if_else`, on purpose: each marks its own element
        // of `visits` (0; 1 or 2).
        #[disjoint(visits)]
        only_if: if go {
            then_a: kernel kernels::Mark<<<1, 1>>>(visits, 0u32);
        }
        if_else: if choose {
            then_b: kernel kernels::Mark<<<1, 1>>>(visits, 1u32);
        } else {
            else_b: kernel kernels::Mark<<<1, 1>>>(visits, 2u32);
        }
        set_go -> only_if;
        set_choose -> if_else;
    }

    /// A device-side loop: the body runs until the counter reaches zero.
    graph Countdown(counter: &mut CudaSlice<i32>, iterations: &mut CudaSlice<i32>) {
        cond again = 1;
        repeat: while again {
            step: kernel kernels::Countdown<<<1, 1>>>(again, counter, iterations);
        }
    }

    /// Four arms; the value comes from device memory.
    graph Select(selector: &CudaSlice<u32>, visits: &mut CudaSlice<i32>) {
        cond pick;
        decide: kernel kernels::SetConditionFrom<<<1, 1>>>(pick, selector);
        arms: switch pick {
            0 => { arm0: kernel kernels::Mark<<<1, 1>>>(visits, 0u32); }
            1 => { arm1: kernel kernels::Mark<<<1, 1>>>(visits, 1u32); }
            2 => { arm2: kernel kernels::Mark<<<1, 1>>>(visits, 2u32); }
            3 => { arm3: kernel kernels::Mark<<<1, 1>>>(visits, 3u32); }
        }
        decide -> arms;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[Branches::DOT, Countdown::DOT, Select::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;

    for value in [0u32, 1] {
        let mut visits = stream.alloc_zeros::<i32>(3)?;
        Branches::build(&ctx, &mut visits, value)?
            .instantiate()?
            .launch(&stream)?;
        let got = stream.clone_dtoh(&visits)?;
        let want = if value == 1 { [1, 1, 0] } else { [0, 0, 1] };
        common::ensure(
            got == want,
            format!("IF and IF/ELSE with the handle at {value}: {got:?}"),
        )?;
    }

    let mut counter = stream.clone_htod(&[1000i32])?;
    let mut iterations = stream.alloc_zeros::<i32>(1)?;
    let start = std::time::Instant::now();
    Countdown::build(&ctx, &mut counter, &mut iterations)?
        .instantiate()?
        .launch(&stream)?;
    stream.synchronize()?;
    let elapsed = start.elapsed();
    let (it, left) = (
        stream.clone_dtoh(&iterations)?[0],
        stream.clone_dtoh(&counter)?[0],
    );
    println!(
        "WHILE: {it} iterations in {:.1} us ({:.2} us per iteration)",
        elapsed.as_secs_f64() * 1e6,
        elapsed.as_secs_f64() * 1e6 / f64::from(it.max(1))
    );
    common::ensure(
        it == 1000 && left == 0,
        "the WHILE countdown from 1,000 ran exactly 1,000 times",
    )?;

    for value in [0u32, 1, 2, 3, 9] {
        let selector = stream.clone_htod(&[value])?;
        let mut visits = stream.alloc_zeros::<i32>(4)?;
        Select::build(&ctx, &selector, &mut visits)?
            .instantiate()?
            .launch(&stream)?;
        let got = stream.clone_dtoh(&visits)?;
        let mut want = [0i32; 4];
        if value < 4 {
            want[value as usize] = 1;
        }
        common::ensure(
            got == want,
            format!("SWITCH with value {value} ran {got:?}"),
        )?;
    }
    Ok(())
}

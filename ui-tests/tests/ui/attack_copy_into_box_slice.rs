// A copy from device memory into host `Box`es: the device bytes would
// overwrite the host pointers.
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::Graph;

fn overwrite_boxes<'a>(
    graph: &mut Graph<'a>,
    device: &'a CudaSlice<Box<u64>>,
    host: &'a mut [Box<u64>],
) -> graph_runtime::Result<()> {
    let src = graph.bind(device);
    graph.add_copy("overwrite", src, host, &[])?;
    Ok(())
}

fn main() {
    let _ = overwrite_boxes;
}

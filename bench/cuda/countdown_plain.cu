// The WHILE body of the loop benchmark with cudaGraphSetConditional declared
// as a plain extern function (no `__cudart_builtin__`), to compare with the
// kernels crate's declaration.
extern "C" __device__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);

extern "C" __global__ void countdown_step_plain(unsigned long long handle, int* counter) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *counter -= 1;
        cudaGraphSetConditional(handle, *counter > 0 ? 1u : 0u);
    }
}

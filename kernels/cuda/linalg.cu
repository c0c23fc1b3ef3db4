// Vector steps around library (cuBLAS) calls: the power iteration of the
// cuBLAS example and tests.
extern "C" __device__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);

// WHILE body of a power iteration: x = y / |y| for i < n, then
// `counter -= 1; handle = counter > 0`. One warp does it all (block 0 of
// exactly 32 threads in x; other blocks and shapes return at once): its
// lanes sum y's squares with shuffles, so no block barrier is needed (see
// sq_diff_sum in jacobi.cu on barriers in WHILE bodies).
extern "C" __global__ void normalize_step(unsigned long long handle, const float* y, float* x,
                                          int* counter, unsigned n) {
    if (blockIdx.x != 0 || blockIdx.y != 0 || blockIdx.z != 0) return;
    if (blockDim.x != 32 || blockDim.y * blockDim.z != 1) return;
    unsigned lane = threadIdx.x;
    double acc = 0.0;
    for (unsigned i = lane; i < n; i += 32) acc += (double)y[i] * (double)y[i];
    for (unsigned o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    float scale = acc > 0.0 ? (float)(1.0 / sqrt(acc)) : 0.0f;
    for (unsigned i = lane; i < n; i += 32) x[i] = y[i] * scale;
    if (lane == 0) {
        *counter -= 1;
        cudaGraphSetConditional(handle, *counter > 0 ? 1u : 0u);
    }
}

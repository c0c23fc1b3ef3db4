// Two-stage sum reduction (the Programming Guide's graph example): each
// block of 256 threads writes one partial sum; one block sums the partials.

extern "C" __global__ void reduce_partial(const float* x, double* partial, unsigned n) {
    __shared__ double sums[256];
    if (blockDim.x > 256 || blockDim.y * blockDim.z != 1) return;  // sums[] holds 256
    double sum = 0.0;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        sum += x[i];
    sums[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

extern "C" __global__ void reduce_final(const double* partial, double* out, unsigned count) {
    __shared__ double sums[256];
    if (blockDim.x > 256 || blockDim.y * blockDim.z != 1) return;  // sums[] holds 256
    // One block writes out[0]: the others (a grid of several) return.
    if (blockIdx.x != 0 || blockIdx.y != 0 || blockIdx.z != 0) return;
    double sum = 0.0;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) sum += partial[i];
    sums[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = sums[0];
}

// Kernels for programmatic dependent launch (PDL) chains. The PDL prelude
// (`kernels::pdl_prelude!`) is prepended, so `pdl_wait()` and `pdl_trigger()`
// are defined. Each kernel is PDL-aware: every thread calls pdl_wait() before
// touching memory a predecessor touches.

// x[i] += 1 for i < n: the tiny kernel of PDL chains. It lets its dependents
// launch at once; they wait for its completion themselves.
extern "C" __global__ void pdl_add_one(float* x, unsigned n) {
    pdl_trigger();
    pdl_wait();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

// A prologue independent of any predecessor (`work` dependent fused
// multiply-adds in registers), then the dependent part:
// x[i] = x[i] * 0.5 + prologue. With a PDL edge before it, its prologue
// overlaps the previous kernel; it lets its own dependents launch at once.
extern "C" __global__ void pdl_prologue_step(float* x, unsigned n, unsigned work) {
    pdl_trigger();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = (float)(i & 1023u) * 0.001f;
    for (unsigned k = 0; k < work; ++k) acc = fmaf(acc, 0.999f, 0.5f);
    pdl_wait();
    if (i < n) x[i] = fmaf(x[i], 0.5f, acc);
}

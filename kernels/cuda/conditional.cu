// Kernels that drive conditional nodes. Compiled by NVRTC without -rdc:
// `cudaGraphSetConditional` is declared by the runtime's prelude
// (graph_runtime::kernel::DEVICE_PRELUDE) and resolved by the driver.

extern "C" __global__ void set_condition(unsigned long long handle, unsigned value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(handle, value);
}

// Sets the handle to the value stored in device memory.
extern "C" __global__ void set_condition_from(unsigned long long handle, const unsigned* value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(handle, *value);
}

// WHILE body: counts an iteration, decrements the counter, and keeps the
// loop going while it is positive.
extern "C" __global__ void countdown(unsigned long long handle, int* counter, int* iterations) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *iterations += 1;
        *counter -= 1;
        cudaGraphSetConditional(handle, *counter > 0 ? 1u : 0u);
    }
}

// WHILE body with nothing else: decrements the counter and keeps the loop
// going while it is positive (the benchmark's loop step, as in C++).
extern "C" __global__ void countdown_step(unsigned long long handle, int* counter) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *counter -= 1;
        cudaGraphSetConditional(handle, *counter > 0 ? 1u : 0u);
    }
}

// Counts a visit in slot `slot` (which arm of a switch ran, for example).
extern "C" __global__ void mark(int* visits, unsigned slot) {
    if (blockIdx.x == 0 && threadIdx.x == 0) visits[slot] += 1;
}

// One step of a host-driven loop: decrements the counter and writes whether
// to go on into `flag`, which the host copies back.
extern "C" __global__ void countdown_flag(int* counter, int* flag) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *counter -= 1;
        *flag = *counter > 0 ? 1 : 0;
    }
}

// Device graph launch. Compiled by NVRTC without -rdc: cudaGraphLaunch is
// declared here; the special streams are these 64-bit values.
extern "C" __device__ int cudaGraphLaunch(void* exec, void* stream);
#define TAIL_LAUNCH ((void*)0x0100000000000000ULL)
#define FIRE_AND_FORGET ((void*)0x0200000000000000ULL)
#define FIRE_AND_FORGET_AS_SIBLING ((void*)0x0300000000000000ULL)

__device__ unsigned long long current_graph_exec() {
    unsigned long long exec;
    asm volatile("mov.u64 %0, %%current_graph_exec;" : "=l"(exec));
    return exec;
}

// Launches `exec` when this graph completes (mode 0), fire-and-forget
// (mode 1) or as a sibling (mode 2).
extern "C" __global__ void launch_graph(unsigned long long exec, unsigned mode) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        void* stream = mode == 0 ? TAIL_LAUNCH : mode == 1 ? FIRE_AND_FORGET : FIRE_AND_FORGET_AS_SIBLING;
        cudaGraphLaunch((void*)exec, stream);
    }
}

// One step of a device-side loop: counts the step and, while the counter
// stays positive, tail-launches the running graph again.
extern "C" __global__ void relaunch_countdown(int* counter, int* steps) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *steps += 1;
        *counter -= 1;
        if (*counter > 0) cudaGraphLaunch((void*)current_graph_exec(), TAIL_LAUNCH);
    }
}

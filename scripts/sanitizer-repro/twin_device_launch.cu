// Does the driver refuse a launch from the device of an exec that is
// already running, or run the two launches at once? (graph-runtime's crate
// docs, "Safety": a `DeviceExec` handle may be named by two launcher
// kernels that nothing orders.) Plain CUDA: kernels compiled by NVRTC as
// graph-runtime's are (CUDA-NOTES.md, "Device-side calls from NVRTC
// kernels").
//
// The target graph T is one kernel that reads x[0], spins ~20 ms, then
// writes the value read plus one (a lost update if two runs overlap), and
// counts its runs atomically. Each case launches T twice from the device,
// the two launches unordered, and prints the return codes of the two
// device-side cudaGraphLaunch calls, the runs counted and x[0]:
//  - parallel: one launcher graph, two kernel nodes without an edge, each
//    launching T fire-and-forget (mode 1) or as a sibling (mode 2);
//  - streams: two launcher execs on two streams, each launching T
//    fire-and-forget.
// Refused: one code non-zero, runs 1, x 1. Serialized: codes 0, runs 2,
// x 2. Overlapping (undefined, as the host API says "only one instance
// ... may be executing at a time"): codes 0, runs 2, x 1.
//
// Measured on the lent H200 (driver 580.159.04, CUDA 13), 2026-12-02: all
// three cases "refused": one launch returned 1 (cudaErrorInvalidValue),
// the other 0; runs 1, x 1.
//
//   nvcc -O2 -arch=sm_90 -o twin_device_launch twin_device_launch.cu -lnvrtc -lcuda
//   ./twin_device_launch
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda.h>
#include <nvrtc.h>
#include "nvrtc_module.h"
#define CU(x) do { CUresult err_ = (x); if (err_ != CUDA_SUCCESS) { const char* m; cuGetErrorString(err_, &m); printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, m); exit(1);} } while (0)

static const char* SOURCE = R"(
extern "C" __device__ int cudaGraphLaunch(void* exec, void* stream);
extern "C" __global__ void slow_inc(int* x, int* runs) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int seen = *(volatile int*)x;
        long long start = clock64();
        while (clock64() - start < 40000000LL) {}
        *(volatile int*)x = seen + 1;
        atomicAdd(runs, 1);
    }
}
extern "C" __global__ void launch_graph(unsigned long long exec, unsigned mode, int* code) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        void* stream = (void*)(mode == 1 ? 0x0200000000000000ULL : 0x0300000000000000ULL);
        *code = cudaGraphLaunch((void*)exec, stream);
    }
}
)";

static CUfunction slow_inc, launch_graph;

static void load() {
    CUmodule m = nvrtc_module(SOURCE, "twin.cu");
    CU(cuModuleGetFunction(&slow_inc, m, "slow_inc"));
    CU(cuModuleGetFunction(&launch_graph, m, "launch_graph"));
}

static CUgraphNode add_kernel(CUgraph g, CUfunction f, void** args) {
    CUDA_KERNEL_NODE_PARAMS p = {};
    p.func = f; p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 32; p.blockDimY = p.blockDimZ = 1; p.kernelParams = args;
    CUgraphNode node;
    CU(cuGraphAddKernelNode(&node, g, nullptr, 0, &p));
    return node;
}

static CUgraphExec instantiate(CUgraph g, CUstream s) {
    CUgraphExec e;
    CU(cuGraphInstantiate(&e, g, CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH));
    CU(cuGraphUpload(e, s));
    return e;
}

int main() {
    CU(cuInit(0));
    CUdevice dev; CU(cuDeviceGet(&dev, 0));
    CUcontext ctx; CU(cuDevicePrimaryCtxRetain(&ctx, dev)); CU(cuCtxSetCurrent(ctx));
    load();
    CUstream s1, s2;
    CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING)); CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUdeviceptr x, runs, codes;
    CU(cuMemAlloc(&x, 4)); CU(cuMemAlloc(&runs, 4)); CU(cuMemAlloc(&codes, 8));
    CUgraph tg; CU(cuGraphCreate(&tg, 0));
    void* targs[] = {&x, &runs};
    add_kernel(tg, slow_inc, targs);
    CUgraphExec target = instantiate(tg, s1);
    CU(cuStreamSynchronize(s1));
    unsigned long long handle = (unsigned long long)target;
    CUdeviceptr code0 = codes, code1 = codes + 4;
    const char* names[] = {"parallel, fire-and-forget", "parallel, sibling", "two streams, fire-and-forget"};
    for (int c = 0; c < 3; c++) {
        CU(cuMemsetD32(x, 0, 1)); CU(cuMemsetD32(runs, 0, 1)); CU(cuMemsetD32(codes, 0x7fffffff, 2));
        unsigned mode = c == 1 ? 2 : 1;
        void* a0[] = {&handle, &mode, &code0};
        void* a1[] = {&handle, &mode, &code1};
        CUgraph l1, l2; CU(cuGraphCreate(&l1, 0)); CU(cuGraphCreate(&l2, 0));
        if (c < 2) {
            add_kernel(l1, launch_graph, a0);
            add_kernel(l1, launch_graph, a1);
            CUgraphExec e1 = instantiate(l1, s1);
            CU(cuStreamSynchronize(s1));
            CU(cuGraphLaunch(e1, s1));
            CU(cuStreamSynchronize(s1));
            CU(cuGraphExecDestroy(e1));
        } else {
            add_kernel(l1, launch_graph, a0);
            add_kernel(l2, launch_graph, a1);
            CUgraphExec e1 = instantiate(l1, s1), e2 = instantiate(l2, s2);
            CU(cuCtxSynchronize());
            CU(cuGraphLaunch(e1, s1));
            CU(cuGraphLaunch(e2, s2));
            CU(cuCtxSynchronize());
            CU(cuGraphExecDestroy(e1)); CU(cuGraphExecDestroy(e2));
        }
        CU(cuCtxSynchronize());
        int h_codes[2], h_x, h_runs;
        CU(cuMemcpyDtoH(h_codes, codes, 8)); CU(cuMemcpyDtoH(&h_x, x, 4)); CU(cuMemcpyDtoH(&h_runs, runs, 4));
        const char* verdict = (h_codes[0] != 0 || h_codes[1] != 0) ? "refused"
                              : h_x == 2 ? "serialized" : "OVERLAPPED";
        printf("%s: codes %d %d, runs %d, x %d: %s\n", names[c], h_codes[0], h_codes[1], h_runs, h_x, verdict);
        CU(cuGraphDestroy(l1)); CU(cuGraphDestroy(l2));
    }
    CU(cuGraphExecDestroy(target)); CU(cuGraphDestroy(tg));
    return 0;
}

// Does compute-sanitizer memcheck fault a SWITCH graph run once per
// process, beside other GPU processes? In plain CUDA (driver API, no Rust,
// no graph-runtime), the calls graph-runtime's test
// `conditional::switch_selects_each_of_four_arms_and_none_out_of_range`
// makes through cudarc: the primary context, a non-blocking stream, NVRTC
// kernels (nvrtc_module.h), for each value 0, 1, 2, 3 and 7 four stream-
// ordered zeroed ints, a graph of `set_condition(h, value)` then a SWITCH
// of four arms each `mark(visits, arm)`, instantiated with
// cuGraphInstantiateWithParams (flags 0), launched, synchronized, destroyed,
// and the visits read back and checked. With `events`, each use of the
// buffer also records an event and waits on it, as cudarc's tracking does.
//
//   nvcc -O2 -arch=sm_90 -o switch_once switch_once.cu -lnvrtc -lcuda
//   for i in 1 2 3 4 5 6; do compute-sanitizer --tool memcheck ./switch_once & done; wait
//
// Exit 0 when every value's visits are right.
//
// Measured on the lent H200 (2026-12-06, compute-sanitizer of CUDA 13),
// six at once under memcheck, three rounds each: 5 runs of 18 failed
// (`cuStreamSynchronize`: "an illegal memory access was encountered", no
// invalid access reported), 8 of 18 with `events`; alone and without the
// tool it passes. graph-runtime's switch test failed 6 of 18 the same way
// in the same call (tests/README.md, "Test").
#include <cstdio>
#include <cstring>
#include <string>
#include <cuda.h>
#include <nvrtc.h>
#include "nvrtc_module.h"
#define CU(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char* m; cuGetErrorString(e, &m); printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, m); exit(1);} } while (0)

static const char* SOURCE = R"(
extern "C" __device__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);
extern "C" __global__ void set_condition(unsigned long long handle, unsigned value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(handle, value);
}
extern "C" __global__ void mark(int* visits, unsigned slot) {
    if (blockIdx.x == 0 && threadIdx.x == 0) visits[slot] += 1;
}
)";

static CUgraphNode kernel(CUgraph g, CUgraphNode* dep, CUfunction f, void** args) {
    CUgraphNodeParams p; memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_KERNEL;
    p.kernel.func = f;
    p.kernel.gridDimX = p.kernel.gridDimY = p.kernel.gridDimZ = 1;
    p.kernel.blockDimX = p.kernel.blockDimY = p.kernel.blockDimZ = 1;
    p.kernel.kernelParams = args;
    CUgraphNode node;
    CU(cuGraphAddNode_v2(&node, g, dep, nullptr, dep ? 1 : 0, &p));
    return node;
}

int main(int argc, char** argv) {
    bool events = argc > 1 && std::string(argv[1]) == "events";
    CU(cuInit(0));
    CUdevice dev; CU(cuDeviceGet(&dev, 0));
    CUcontext ctx; CU(cuDevicePrimaryCtxRetain(&ctx, dev)); CU(cuCtxSetCurrent(ctx));
    CUstream s; CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUmodule m = nvrtc_module(SOURCE, "switch_once.cu");
    CUfunction set, mark;
    CU(cuModuleGetFunction(&set, m, "set_condition"));
    CU(cuModuleGetFunction(&mark, m, "mark"));
    int bad = 0;
    for (unsigned value : {0u, 1u, 2u, 3u, 7u}) {
        CUdeviceptr visits; CU(cuMemAllocAsync(&visits, 4 * sizeof(int), s));
        CU(cuMemsetD8Async(visits, 0, 4 * sizeof(int), s));
        CUevent used = nullptr;
        if (events) { CU(cuEventCreate(&used, CU_EVENT_DISABLE_TIMING)); CU(cuEventRecord(used, s)); }
        CUgraph g; CU(cuGraphCreate(&g, 0));
        CUgraphConditionalHandle h; CU(cuGraphConditionalHandleCreate(&h, g, ctx, 0, 0));
        void* set_args[] = {&h, &value};
        CUgraphNode setter = kernel(g, nullptr, set, set_args);
        CUgraphNodeParams cp; memset(&cp, 0, sizeof cp);
        cp.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
        cp.conditional.handle = h; cp.conditional.type = CU_GRAPH_COND_TYPE_SWITCH;
        cp.conditional.size = 4; cp.conditional.ctx = ctx;
        CUgraphNode sw; CU(cuGraphAddNode_v2(&sw, g, &setter, nullptr, 1, &cp));
        unsigned arms[4] = {0, 1, 2, 3};
        for (int a = 0; a < 4; a++) {
            void* mark_args[] = {&visits, &arms[a]};
            kernel(cp.conditional.phGraph_out[a], nullptr, mark, mark_args);
        }
        CUDA_GRAPH_INSTANTIATE_PARAMS ip; memset(&ip, 0, sizeof ip);
        CUgraphExec exec; CU(cuGraphInstantiateWithParams(&exec, g, &ip));
        if (events) CU(cuStreamWaitEvent(s, used, 0));
        CU(cuGraphLaunch(exec, s));
        if (events) CU(cuEventRecord(used, s));
        CU(cuStreamSynchronize(s));
        CU(cuGraphExecDestroy(exec));
        CU(cuGraphDestroy(g));
        int got[4];
        CU(cuMemcpyDtoHAsync(got, visits, sizeof got, s));
        CU(cuStreamSynchronize(s));
        CU(cuMemFreeAsync(visits, s));
        if (used) CU(cuEventDestroy(used));
        for (unsigned a = 0; a < 4; a++)
            if (got[a] != (a == value ? 1 : 0)) { printf("value %u: arm %u visited %d times\n", value, a, got[a]); bad = 1; }
    }
    CU(cuStreamSynchronize(s));
    printf("%s\n", bad ? "WRONG" : "every value's arms: ok");
    return bad;
}

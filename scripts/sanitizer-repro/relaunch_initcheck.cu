// The sequence of graph-runtime's tests/gpu_runtime/memory.rs
// `alone::relaunch_without_auto_free_frees_the_untaken_allocation_first`
// in plain CUDA C++ (no Rust, no graph-runtime), to tell whether the
// initcheck reports that test drew are the tool's or ours.
//
// A graph allocates N floats (an alloc node, no free node), fills them
// (iota) and copies them to three buffers. It is launched, the allocation
// is freed by cudaFreeAsync on the launch stream (as graph-runtime frees
// the allocation nobody took), the buffers are zeroed, and the graph is
// launched again: its alloc node makes the allocation again, at the same
// address, and the fill runs before the copies. Every buffer then reads
// back 0, 1, 2, ... (checked: the program exits 1 otherwise).
//
//   nvcc -O2 -arch=sm_90 -o relaunch_initcheck relaunch_initcheck.cu -lnvrtc -lcuda
//   ./relaunch_initcheck [VARIANTS]                       # "ok"
//   compute-sanitizer --tool initcheck ./relaunch_initcheck [VARIANTS]
//
// VARIANTS, comma-separated, each a step nearer graph-runtime: `nvrtc`
// (the fill compiled by NVRTC to PTX and added with cuGraphAddKernelNode,
// as graph-runtime's kernels are), `pool` (the three buffers from
// cudaMallocAsync, as cudarc allocates), `events` (an event recorded after
// each memset and the launch, and waited for before them, as cudarc's
// tracking does), `copy3d` (the copies added with cuGraphAddNode and a full
// CUDA_MEMCPY3D, as graph-runtime adds them), `free-late` (the free just
// before the second launch, after the memsets, as graph-runtime's launch
// frees the allocation nobody took).
//
// Measured on a lent H100 (driver 580, CUDA 13.0), 2026-12-05: "ok", and
// under initcheck "ERROR SUMMARY: 0 errors" in 3 runs of 3, while the Rust
// test drew 392-488 "Uninitialized access ... by cudaMemcpy source"
// reports (at cuGraphLaunch, the second launch's copies), its values right.
// On 2026-12-06 (H100, one run each under initcheck, every run "ok"):
// no variant, `nvrtc`, `events`, `copy3d` and `free-late` 0 errors;
// **`pool` 464 errors**, and all five variants together 384; the Rust test
// 384 and 0 in two runs of the same call. The buffers the graph copies to
// coming from the stream-ordered pool (cudaMallocAsync, as cudarc's
// allocations do) is what draws the reports, in plain CUDA: the tool's.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstring>
#include <string>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>
#include "nvrtc_module.h"
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); exit(1);} } while (0)
__global__ void iota(float* d, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) d[i] = (float)i; }
#define CU(x) do { CUresult err_ = (x); if (err_ != CUDA_SUCCESS) { const char* m_; cuGetErrorString(err_, &m_); printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, m_); exit(1);} } while (0)
static const char* IOTA = "extern \"C\" __global__ void iota(float* d, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) d[i] = (float)i; }";
int main(int argc, char** argv) {
  std::string v = argc > 1 ? argv[1] : "";
  bool use_nvrtc = v.find("nvrtc") != std::string::npos, pool = v.find("pool") != std::string::npos;
  bool events = v.find("events") != std::string::npos, copy3d = v.find("copy3d") != std::string::npos;
  bool free_late = v.find("free-late") != std::string::npos;
  const unsigned n = 4096;
  const size_t bytes = n * sizeof(float);
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  float* outs[3];
  for (auto& o : outs) {
    if (pool) { CK(cudaMallocAsync(&o, bytes, s)); CK(cudaStreamSynchronize(s)); }
    else CK(cudaMalloc(&o, bytes));
  }
  CUfunction nvrtc_iota = nullptr;
  if (use_nvrtc) {
    CU(cuModuleGetFunction(&nvrtc_iota, nvrtc_module(IOTA, "iota.cu"), "iota"));
  }
  cudaEvent_t used[4];
  for (auto& e : used) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  ap.bytesize = bytes;
  cudaGraphNode_t alloc, fill, copy;
  CK(cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
  float* tmp = (float*)ap.dptr;
  unsigned count = n;
  void* args[] = {&tmp, &count};
  if (use_nvrtc) {
    CUDA_KERNEL_NODE_PARAMS kp = {};
    kp.func = nvrtc_iota; kp.gridDimX = (n + 255) / 256; kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = 256; kp.blockDimY = kp.blockDimZ = 1; kp.kernelParams = args;
    CU(cuGraphAddKernelNode((CUgraphNode*)&fill, (CUgraph)g, (CUgraphNode*)&alloc, 1, &kp));
  } else {
    cudaKernelNodeParams kp = {};
    kp.func = (void*)iota;
    kp.gridDim = dim3((n + 255) / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CK(cudaGraphAddKernelNode(&fill, g, &alloc, 1, &kp));
  }
  CUcontext ctx; CU(cuCtxGetCurrent(&ctx));
  for (auto o : outs) {
    if (copy3d) {
      CUgraphNodeParams p; memset(&p, 0, sizeof p); p.type = CU_GRAPH_NODE_TYPE_MEMCPY; p.memcpy.copyCtx = ctx;
      CUDA_MEMCPY3D& c = p.memcpy.copyParams;
      c.srcMemoryType = CU_MEMORYTYPE_DEVICE; c.srcDevice = (CUdeviceptr)tmp;
      c.dstMemoryType = CU_MEMORYTYPE_DEVICE; c.dstDevice = (CUdeviceptr)o;
      c.WidthInBytes = bytes; c.Height = 1; c.Depth = 1;
      c.srcPitch = c.dstPitch = bytes; c.srcHeight = c.dstHeight = 1;
      CU(cuGraphAddNode_v2((CUgraphNode*)&copy, (CUgraph)g, (CUgraphNode*)&fill, nullptr, 1, &p));
    } else {
      CK(cudaGraphAddMemcpyNode1D(&copy, g, &fill, 1, o, tmp, bytes, cudaMemcpyDeviceToDevice));
    }
  }
  cudaGraphExec_t e;
  CK(cudaGraphInstantiate(&e, g, 0));
  for (int round = 0; round < 2; round++) {
    for (int k = 0; k < 3; k++) {
      if (events) CK(cudaStreamWaitEvent(s, used[k], 0));
      CK(cudaMemsetAsync(outs[k], 0, bytes, s));
      if (events) CK(cudaEventRecord(used[k], s));
    }
    // Nobody took the allocation: free it before the next launch makes it.
    if (free_late && round == 1) CK(cudaFreeAsync(tmp, s));
    if (events) for (int k = 0; k < 3; k++) CK(cudaStreamWaitEvent(s, used[k], 0));
    CK(cudaGraphLaunch(e, s));
    if (events) { for (int k = 0; k < 3; k++) CK(cudaEventRecord(used[k], s)); CK(cudaEventRecord(used[3], s)); }
    CK(cudaStreamSynchronize(s));
    if (!free_late || round == 1) CK(cudaFreeAsync(tmp, s));
  }
  CK(cudaStreamSynchronize(s));
  std::vector<float> host(n);
  for (auto o : outs) {
    CK(cudaMemcpy(host.data(), o, bytes, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < n; i++)
      if (host[i] != (float)i) { printf("wrong value at %u: %f\n", i, host[i]); return 1; }
  }
  CK(cudaGraphExecDestroy(e));
  CK(cudaGraphDestroy(g));
  printf("ok\n");
  return 0;
}

// A compute-sanitizer false positive, in plain CUDA C++ (no Rust, no
// graph-runtime), kept as the evidence for graph-runtime's
// tests/gpu_runtime/memory.rs `mod alone` (run.sh --sanitize runs those
// tests each in its own process).
//
// A graph makes an allocation that escapes it (alloc node, no free node);
// it is used and freed by another graph's free node (modes 1, 2) or by
// cudaFreeAsync outside any graph (mode 0), and made again by the next
// launch at the same address (the Programming Guide's pattern, section
// 4.2, graph memory nodes). Mode 2 frees it with free nodes for four rounds,
// then once with cudaFreeAsync. Mode 3 is gpu_attacks'
// alloc_lifetime::alone::a_graph_holding_an_earlier_escaped_allocation_...
// sequence: freed once by a free node, then made and freed by
// cudaFreeAsync twice. With a second argument, a new graph then
// allocates 8 x 64 MiB (chained: alloc -> write -> free) after
// cudaDeviceGraphMemTrim; it gets the same address.
//
//   nvcc -O2 -arch=sm_90 -o escaped_free escaped_free.cu
//   ./escaped_free 2 chain                       # runs correctly
//   compute-sanitizer --tool memcheck ./escaped_free 2 chain
//
// Measured on the lent H200 (driver 580.159.04, compute-sanitizer
// 2025.3.1), 2026-12-01: every mode runs correctly without the tool (a write
// to unmapped memory would fail the launch with an illegal address); under
// memcheck, modes 0 and 1 (with or without `chain`) report 0 errors, mode 2
// with `chain` reports about 186,000 "Invalid __global__ write of size 4
// bytes" by the chained graph's kernel and aborts it. 2026-12-02, same
// machine: mode 3 runs correctly, and the device's graph memory in use
// after a trim is 0 bytes with and without the tool, yet memcheck
// --leak-check full reports "Leaked 16,384 bytes" (the allocation made
// by the last launch, which cudaFreeAsync freed).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); exit(1);} } while (0)
__global__ void iota(float* d, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) d[i] = (float)i; }
__global__ void add_one(float* d, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) d[i] += 1.0f; }
int main(int argc, char** argv) {
  int mode = argc > 1 ? atoi(argv[1]) : 0;
  const unsigned N = 4096;
  cudaStream_t s, s2; CK(cudaStreamCreate(&s)); CK(cudaStreamCreate(&s2));
  cudaEvent_t ev; CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  // Graph: alloc -> iota, no free.
  cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice; ap.poolProps.location.id = 0;
  ap.bytesize = N * sizeof(float);
  cudaGraphNode_t an; CK(cudaGraphAddMemAllocNode(&an, g, nullptr, 0, &ap));
  float* d = (float*)ap.dptr;
  cudaKernelNodeParams kp = {}; unsigned n = N; void* args[] = {&d, &n};
  kp.func = (void*)iota; kp.gridDim = dim3((N + 255) / 256); kp.blockDim = dim3(256); kp.kernelParams = args;
  cudaGraphNode_t kn; CK(cudaGraphAddKernelNode(&kn, g, &an, 1, &kp));
  cudaGraphExec_t ge; CK(cudaGraphInstantiate(&ge, g, 0));
  // Graph 2 (mode 1): add_one then free node.
  cudaGraph_t g2; CK(cudaGraphCreate(&g2, 0));
  kp.func = (void*)add_one;
  cudaGraphNode_t kn2; CK(cudaGraphAddKernelNode(&kn2, g2, nullptr, 0, &kp));
  cudaGraphNode_t fn; CK(cudaGraphAddMemFreeNode(&fn, g2, &kn2, 1, d));
  cudaGraphExec_t ge2; CK(cudaGraphInstantiate(&ge2, g2, 0));
  std::vector<float> h(N);
  for (int round = 0; round < (mode == 3 ? 1 : 4); round++) {
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(ev, s));
    CK(cudaStreamWaitEvent(s2, ev, 0));
    CK(cudaMemcpyAsync(h.data(), d, N * sizeof(float), cudaMemcpyDeviceToHost, s2));
    CK(cudaEventRecord(ev, s2));
    CK(cudaStreamWaitEvent(s, ev, 0));
    if (mode == 0) CK(cudaFreeAsync(d, s));
    else CK(cudaGraphLaunch(ge2, s));
    CK(cudaStreamSynchronize(s));
    if (h[N - 1] != (float)(N - 1)) { printf("wrong value %f\n", h[N - 1]); return 1; }
  }
  for (int i = 0; i < (mode == 2 ? 1 : mode == 3 ? 2 : 0); i++) {  // made again, freed outside the graph
    CK(cudaGraphLaunch(ge, s));
    CK(cudaFreeAsync(d, s));
  }
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(ge)); CK(cudaGraphExecDestroy(ge2));
  CK(cudaGraphDestroy(g)); CK(cudaGraphDestroy(g2));
  CK(cudaDeviceSynchronize());
  CK(cudaDeviceGraphMemTrim(0));
  unsigned long long used = 0;
  CK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
  printf("mode %d ok, address %p, graph memory used after a trim: %llu bytes\n", mode, (void*)d, used);
  if (argc > 2) {
    // Then a new graph: 8 chained 64 MiB allocations (alloc -> iota -> free).
    CK(cudaDeviceGraphMemTrim(0));
    const unsigned L = 64u << 18;  // floats in 64 MiB
    cudaGraph_t g3; CK(cudaGraphCreate(&g3, 0));
    cudaGraphNode_t prev = nullptr;
    float* first = nullptr;
    for (int i = 0; i < 8; i++) {
      cudaMemAllocNodeParams a = {};
      a.poolProps.allocType = cudaMemAllocationTypePinned;
      a.poolProps.location.type = cudaMemLocationTypeDevice; a.poolProps.location.id = 0;
      a.bytesize = (size_t)L * sizeof(float);
      cudaGraphNode_t an3; CK(cudaGraphAddMemAllocNode(&an3, g3, prev ? &prev : nullptr, prev ? 1 : 0, &a));
      float* p = (float*)a.dptr; if (!first) first = p;
      unsigned l = L; void* ar[] = {&p, &l};
      cudaKernelNodeParams k = {}; k.func = (void*)iota; k.gridDim = dim3(L / 256); k.blockDim = dim3(256); k.kernelParams = ar;
      cudaGraphNode_t kn3; CK(cudaGraphAddKernelNode(&kn3, g3, &an3, 1, &k));
      CK(cudaGraphAddMemFreeNode(&prev, g3, &kn3, 1, p));
    }
    cudaGraphExec_t ge3; CK(cudaGraphInstantiate(&ge3, g3, 0));
    CK(cudaGraphLaunch(ge3, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGraphExecDestroy(ge3)); CK(cudaGraphDestroy(g3));
    printf("chained graph ok, first allocation %p\n", (void*)first);
  }
  return 0;
}

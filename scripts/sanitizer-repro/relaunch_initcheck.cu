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
//   nvcc -O2 -arch=sm_90 -o relaunch_initcheck relaunch_initcheck.cu
//   ./relaunch_initcheck                                  # "ok"
//   compute-sanitizer --tool initcheck ./relaunch_initcheck
//
// Measured on a lent H100 (driver 580, CUDA 13.0), 2026-12-05: "ok", and
// under initcheck "ERROR SUMMARY: 0 errors" in 3 runs of 3. The Rust test
// drew 392-488 "Uninitialized access ... by cudaMemcpy source" reports
// (at cuGraphLaunch, the second launch's copies) in 3 runs of 3 alone in
// one device call, and none in the pool of the next call; its values read
// back right every time. So this program does not reproduce it: what
// graph-runtime adds around the relaunch (cudarc's per-slice event waits
// and records around the memsets and the launch, the escape state's event
// record after the free) is where to look next.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); exit(1);} } while (0)
__global__ void iota(float* d, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) d[i] = (float)i; }
int main() {
  const unsigned n = 4096;
  const size_t bytes = n * sizeof(float);
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  float* outs[3];
  for (auto& o : outs) CK(cudaMalloc(&o, bytes));
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
  cudaKernelNodeParams kp = {};
  kp.func = (void*)iota;
  kp.gridDim = dim3((n + 255) / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = args;
  CK(cudaGraphAddKernelNode(&fill, g, &alloc, 1, &kp));
  for (auto o : outs) CK(cudaGraphAddMemcpyNode1D(&copy, g, &fill, 1, o, tmp, bytes, cudaMemcpyDeviceToDevice));
  cudaGraphExec_t e;
  CK(cudaGraphInstantiate(&e, g, 0));
  for (int round = 0; round < 2; round++) {
    for (auto o : outs) CK(cudaMemsetAsync(o, 0, bytes, s));
    CK(cudaGraphLaunch(e, s));
    CK(cudaStreamSynchronize(s));
    // Nobody took the allocation: free it before the next launch makes it.
    CK(cudaFreeAsync(tmp, s));
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

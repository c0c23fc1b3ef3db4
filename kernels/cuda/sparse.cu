// Sparse matrix-vector product over CSR: y = A x for an n x m matrix with
// nnz stored values. Its buffers have lengths of their own (row offsets
// n + 1, column indices and values nnz, x m, y n), which the declaration
// ties to three counts. The row offsets and column indices are data the
// runtime cannot check: the kernel clamps the offsets to nnz and skips
// column indices at or past m.
extern "C" __global__ void csr_spmv(const unsigned* row_offsets, const unsigned* cols,
                                    const float* values, const float* x, float* y,
                                    unsigned n, unsigned nnz, unsigned m) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long row = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         row < n; row += stride) {
        unsigned begin = row_offsets[row], end = row_offsets[row + 1];
        if (end > nnz) end = nnz;
        float sum = 0.0f;
        for (unsigned j = begin; j < end; ++j) {
            unsigned c = cols[j];
            if (c < m) sum += values[j] * x[c];
        }
        y[row] = sum;
    }
}

// The same product over a CSR matrix passed by value, as a struct of
// pointers and sizes (graph_runtime::kernel_struct!, kernels::Csr).
struct Csr {
    const unsigned* offsets;
    const unsigned* cols;
    const float* values;
    unsigned n;
    unsigned nnz;
};

extern "C" __global__ void csr_spmv_struct(Csr a, const float* x, float* y, unsigned m) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long row = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         row < a.n; row += stride) {
        unsigned begin = a.offsets[row], end = a.offsets[row + 1];
        if (end > a.nnz) end = a.nnz;
        float sum = 0.0f;
        for (unsigned j = begin; j < end; ++j) {
            unsigned c = a.cols[j];
            if (c < m) sum += a.values[j] * x[c];
        }
        y[row] = sum;
    }
}

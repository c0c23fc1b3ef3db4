//! A graph of 320 nodes: built in chunks of 256 (closures of their own),
//! with allocations, alloc scopes, handles and conditionals whose uses
//! cross the chunks' boundaries.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    pub graph Long(x: &mut CudaSlice<f32>, n: u32) {
        cond h0;
        b0_buf: alloc f32[n];
        b0_k0: kernel kernels::SetCondition<<<1, 1>>>(h0, 1u32);
        b0_if: if h0 { b0_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b0_k1: kernel kernels::Iota<<<1, 32>>>(b0_buf, n);
        b0_k2: kernel kernels::Add<<<1, 32>>>(b0_buf, b0_buf, b0_buf, n);
        b0_free: free b0_buf;
        alloc b0_s: f32[64] { b0_sk: kernel kernels::Iota<<<1, 32>>>(b0_s, 32u32); }
        b0_e: empty;
        b0_buf -> b0_k0 -> b0_if -> b0_k1 -> b0_k2 -> b0_free -> b0_s -> b0_e;
        cond h1;
        b1_buf: alloc f32[n];
        b1_k0: kernel kernels::SetCondition<<<1, 1>>>(h1, 1u32);
        b1_if: if h1 { b1_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b1_k1: kernel kernels::Iota<<<1, 32>>>(b1_buf, n);
        b1_k2: kernel kernels::Add<<<1, 32>>>(b1_buf, b1_buf, b1_buf, n);
        b1_free: free b1_buf;
        alloc b1_s: f32[64] { b1_sk: kernel kernels::Iota<<<1, 32>>>(b1_s, 32u32); }
        b1_e: empty;
        b1_buf -> b1_k0 -> b1_if -> b1_k1 -> b1_k2 -> b1_free -> b1_s -> b1_e;
        b0_e -> b1_buf;
        cond h2;
        b2_buf: alloc f32[n];
        b2_k0: kernel kernels::SetCondition<<<1, 1>>>(h2, 1u32);
        b2_if: if h2 { b2_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b2_k1: kernel kernels::Iota<<<1, 32>>>(b2_buf, n);
        b2_k2: kernel kernels::Add<<<1, 32>>>(b2_buf, b2_buf, b2_buf, n);
        b2_free: free b2_buf;
        alloc b2_s: f32[64] { b2_sk: kernel kernels::Iota<<<1, 32>>>(b2_s, 32u32); }
        b2_e: empty;
        b2_buf -> b2_k0 -> b2_if -> b2_k1 -> b2_k2 -> b2_free -> b2_s -> b2_e;
        b1_e -> b2_buf;
        cond h3;
        b3_buf: alloc f32[n];
        b3_k0: kernel kernels::SetCondition<<<1, 1>>>(h3, 1u32);
        b3_if: if h3 { b3_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b3_k1: kernel kernels::Iota<<<1, 32>>>(b3_buf, n);
        b3_k2: kernel kernels::Add<<<1, 32>>>(b3_buf, b3_buf, b3_buf, n);
        b3_free: free b3_buf;
        alloc b3_s: f32[64] { b3_sk: kernel kernels::Iota<<<1, 32>>>(b3_s, 32u32); }
        b3_e: empty;
        b3_buf -> b3_k0 -> b3_if -> b3_k1 -> b3_k2 -> b3_free -> b3_s -> b3_e;
        b2_e -> b3_buf;
        cond h4;
        b4_buf: alloc f32[n];
        b4_k0: kernel kernels::SetCondition<<<1, 1>>>(h4, 1u32);
        b4_if: if h4 { b4_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b4_k1: kernel kernels::Iota<<<1, 32>>>(b4_buf, n);
        b4_k2: kernel kernels::Add<<<1, 32>>>(b4_buf, b4_buf, b4_buf, n);
        b4_free: free b4_buf;
        alloc b4_s: f32[64] { b4_sk: kernel kernels::Iota<<<1, 32>>>(b4_s, 32u32); }
        b4_e: empty;
        b4_buf -> b4_k0 -> b4_if -> b4_k1 -> b4_k2 -> b4_free -> b4_s -> b4_e;
        b3_e -> b4_buf;
        cond h5;
        b5_buf: alloc f32[n];
        b5_k0: kernel kernels::SetCondition<<<1, 1>>>(h5, 1u32);
        b5_if: if h5 { b5_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b5_k1: kernel kernels::Iota<<<1, 32>>>(b5_buf, n);
        b5_k2: kernel kernels::Add<<<1, 32>>>(b5_buf, b5_buf, b5_buf, n);
        b5_free: free b5_buf;
        alloc b5_s: f32[64] { b5_sk: kernel kernels::Iota<<<1, 32>>>(b5_s, 32u32); }
        b5_e: empty;
        b5_buf -> b5_k0 -> b5_if -> b5_k1 -> b5_k2 -> b5_free -> b5_s -> b5_e;
        b4_e -> b5_buf;
        cond h6;
        b6_buf: alloc f32[n];
        b6_k0: kernel kernels::SetCondition<<<1, 1>>>(h6, 1u32);
        b6_if: if h6 { b6_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b6_k1: kernel kernels::Iota<<<1, 32>>>(b6_buf, n);
        b6_k2: kernel kernels::Add<<<1, 32>>>(b6_buf, b6_buf, b6_buf, n);
        b6_free: free b6_buf;
        alloc b6_s: f32[64] { b6_sk: kernel kernels::Iota<<<1, 32>>>(b6_s, 32u32); }
        b6_e: empty;
        b6_buf -> b6_k0 -> b6_if -> b6_k1 -> b6_k2 -> b6_free -> b6_s -> b6_e;
        b5_e -> b6_buf;
        cond h7;
        b7_buf: alloc f32[n];
        b7_k0: kernel kernels::SetCondition<<<1, 1>>>(h7, 1u32);
        b7_if: if h7 { b7_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b7_k1: kernel kernels::Iota<<<1, 32>>>(b7_buf, n);
        b7_k2: kernel kernels::Add<<<1, 32>>>(b7_buf, b7_buf, b7_buf, n);
        b7_free: free b7_buf;
        alloc b7_s: f32[64] { b7_sk: kernel kernels::Iota<<<1, 32>>>(b7_s, 32u32); }
        b7_e: empty;
        b7_buf -> b7_k0 -> b7_if -> b7_k1 -> b7_k2 -> b7_free -> b7_s -> b7_e;
        b6_e -> b7_buf;
        cond h8;
        b8_buf: alloc f32[n];
        b8_k0: kernel kernels::SetCondition<<<1, 1>>>(h8, 1u32);
        b8_if: if h8 { b8_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b8_k1: kernel kernels::Iota<<<1, 32>>>(b8_buf, n);
        b8_k2: kernel kernels::Add<<<1, 32>>>(b8_buf, b8_buf, b8_buf, n);
        b8_free: free b8_buf;
        alloc b8_s: f32[64] { b8_sk: kernel kernels::Iota<<<1, 32>>>(b8_s, 32u32); }
        b8_e: empty;
        b8_buf -> b8_k0 -> b8_if -> b8_k1 -> b8_k2 -> b8_free -> b8_s -> b8_e;
        b7_e -> b8_buf;
        cond h9;
        b9_buf: alloc f32[n];
        b9_k0: kernel kernels::SetCondition<<<1, 1>>>(h9, 1u32);
        b9_if: if h9 { b9_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b9_k1: kernel kernels::Iota<<<1, 32>>>(b9_buf, n);
        b9_k2: kernel kernels::Add<<<1, 32>>>(b9_buf, b9_buf, b9_buf, n);
        b9_free: free b9_buf;
        alloc b9_s: f32[64] { b9_sk: kernel kernels::Iota<<<1, 32>>>(b9_s, 32u32); }
        b9_e: empty;
        b9_buf -> b9_k0 -> b9_if -> b9_k1 -> b9_k2 -> b9_free -> b9_s -> b9_e;
        b8_e -> b9_buf;
        cond h10;
        b10_buf: alloc f32[n];
        b10_k0: kernel kernels::SetCondition<<<1, 1>>>(h10, 1u32);
        b10_if: if h10 { b10_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b10_k1: kernel kernels::Iota<<<1, 32>>>(b10_buf, n);
        b10_k2: kernel kernels::Add<<<1, 32>>>(b10_buf, b10_buf, b10_buf, n);
        b10_free: free b10_buf;
        alloc b10_s: f32[64] { b10_sk: kernel kernels::Iota<<<1, 32>>>(b10_s, 32u32); }
        b10_e: empty;
        b10_buf -> b10_k0 -> b10_if -> b10_k1 -> b10_k2 -> b10_free -> b10_s -> b10_e;
        b9_e -> b10_buf;
        cond h11;
        b11_buf: alloc f32[n];
        b11_k0: kernel kernels::SetCondition<<<1, 1>>>(h11, 1u32);
        b11_if: if h11 { b11_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b11_k1: kernel kernels::Iota<<<1, 32>>>(b11_buf, n);
        b11_k2: kernel kernels::Add<<<1, 32>>>(b11_buf, b11_buf, b11_buf, n);
        b11_free: free b11_buf;
        alloc b11_s: f32[64] { b11_sk: kernel kernels::Iota<<<1, 32>>>(b11_s, 32u32); }
        b11_e: empty;
        b11_buf -> b11_k0 -> b11_if -> b11_k1 -> b11_k2 -> b11_free -> b11_s -> b11_e;
        b10_e -> b11_buf;
        cond h12;
        b12_buf: alloc f32[n];
        b12_k0: kernel kernels::SetCondition<<<1, 1>>>(h12, 1u32);
        b12_if: if h12 { b12_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b12_k1: kernel kernels::Iota<<<1, 32>>>(b12_buf, n);
        b12_k2: kernel kernels::Add<<<1, 32>>>(b12_buf, b12_buf, b12_buf, n);
        b12_free: free b12_buf;
        alloc b12_s: f32[64] { b12_sk: kernel kernels::Iota<<<1, 32>>>(b12_s, 32u32); }
        b12_e: empty;
        b12_buf -> b12_k0 -> b12_if -> b12_k1 -> b12_k2 -> b12_free -> b12_s -> b12_e;
        b11_e -> b12_buf;
        cond h13;
        b13_buf: alloc f32[n];
        b13_k0: kernel kernels::SetCondition<<<1, 1>>>(h13, 1u32);
        b13_if: if h13 { b13_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b13_k1: kernel kernels::Iota<<<1, 32>>>(b13_buf, n);
        b13_k2: kernel kernels::Add<<<1, 32>>>(b13_buf, b13_buf, b13_buf, n);
        b13_free: free b13_buf;
        alloc b13_s: f32[64] { b13_sk: kernel kernels::Iota<<<1, 32>>>(b13_s, 32u32); }
        b13_e: empty;
        b13_buf -> b13_k0 -> b13_if -> b13_k1 -> b13_k2 -> b13_free -> b13_s -> b13_e;
        b12_e -> b13_buf;
        cond h14;
        b14_buf: alloc f32[n];
        b14_k0: kernel kernels::SetCondition<<<1, 1>>>(h14, 1u32);
        b14_if: if h14 { b14_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b14_k1: kernel kernels::Iota<<<1, 32>>>(b14_buf, n);
        b14_k2: kernel kernels::Add<<<1, 32>>>(b14_buf, b14_buf, b14_buf, n);
        b14_free: free b14_buf;
        alloc b14_s: f32[64] { b14_sk: kernel kernels::Iota<<<1, 32>>>(b14_s, 32u32); }
        b14_e: empty;
        b14_buf -> b14_k0 -> b14_if -> b14_k1 -> b14_k2 -> b14_free -> b14_s -> b14_e;
        b13_e -> b14_buf;
        cond h15;
        b15_buf: alloc f32[n];
        b15_k0: kernel kernels::SetCondition<<<1, 1>>>(h15, 1u32);
        b15_if: if h15 { b15_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b15_k1: kernel kernels::Iota<<<1, 32>>>(b15_buf, n);
        b15_k2: kernel kernels::Add<<<1, 32>>>(b15_buf, b15_buf, b15_buf, n);
        b15_free: free b15_buf;
        alloc b15_s: f32[64] { b15_sk: kernel kernels::Iota<<<1, 32>>>(b15_s, 32u32); }
        b15_e: empty;
        b15_buf -> b15_k0 -> b15_if -> b15_k1 -> b15_k2 -> b15_free -> b15_s -> b15_e;
        b14_e -> b15_buf;
        cond h16;
        b16_buf: alloc f32[n];
        b16_k0: kernel kernels::SetCondition<<<1, 1>>>(h16, 1u32);
        b16_if: if h16 { b16_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b16_k1: kernel kernels::Iota<<<1, 32>>>(b16_buf, n);
        b16_k2: kernel kernels::Add<<<1, 32>>>(b16_buf, b16_buf, b16_buf, n);
        b16_free: free b16_buf;
        alloc b16_s: f32[64] { b16_sk: kernel kernels::Iota<<<1, 32>>>(b16_s, 32u32); }
        b16_e: empty;
        b16_buf -> b16_k0 -> b16_if -> b16_k1 -> b16_k2 -> b16_free -> b16_s -> b16_e;
        b15_e -> b16_buf;
        cond h17;
        b17_buf: alloc f32[n];
        b17_k0: kernel kernels::SetCondition<<<1, 1>>>(h17, 1u32);
        b17_if: if h17 { b17_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b17_k1: kernel kernels::Iota<<<1, 32>>>(b17_buf, n);
        b17_k2: kernel kernels::Add<<<1, 32>>>(b17_buf, b17_buf, b17_buf, n);
        b17_free: free b17_buf;
        alloc b17_s: f32[64] { b17_sk: kernel kernels::Iota<<<1, 32>>>(b17_s, 32u32); }
        b17_e: empty;
        b17_buf -> b17_k0 -> b17_if -> b17_k1 -> b17_k2 -> b17_free -> b17_s -> b17_e;
        b16_e -> b17_buf;
        cond h18;
        b18_buf: alloc f32[n];
        b18_k0: kernel kernels::SetCondition<<<1, 1>>>(h18, 1u32);
        b18_if: if h18 { b18_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b18_k1: kernel kernels::Iota<<<1, 32>>>(b18_buf, n);
        b18_k2: kernel kernels::Add<<<1, 32>>>(b18_buf, b18_buf, b18_buf, n);
        b18_free: free b18_buf;
        alloc b18_s: f32[64] { b18_sk: kernel kernels::Iota<<<1, 32>>>(b18_s, 32u32); }
        b18_e: empty;
        b18_buf -> b18_k0 -> b18_if -> b18_k1 -> b18_k2 -> b18_free -> b18_s -> b18_e;
        b17_e -> b18_buf;
        cond h19;
        b19_buf: alloc f32[n];
        b19_k0: kernel kernels::SetCondition<<<1, 1>>>(h19, 1u32);
        b19_if: if h19 { b19_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b19_k1: kernel kernels::Iota<<<1, 32>>>(b19_buf, n);
        b19_k2: kernel kernels::Add<<<1, 32>>>(b19_buf, b19_buf, b19_buf, n);
        b19_free: free b19_buf;
        alloc b19_s: f32[64] { b19_sk: kernel kernels::Iota<<<1, 32>>>(b19_s, 32u32); }
        b19_e: empty;
        b19_buf -> b19_k0 -> b19_if -> b19_k1 -> b19_k2 -> b19_free -> b19_s -> b19_e;
        b18_e -> b19_buf;
        cond h20;
        b20_buf: alloc f32[n];
        b20_k0: kernel kernels::SetCondition<<<1, 1>>>(h20, 1u32);
        b20_if: if h20 { b20_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b20_k1: kernel kernels::Iota<<<1, 32>>>(b20_buf, n);
        b20_k2: kernel kernels::Add<<<1, 32>>>(b20_buf, b20_buf, b20_buf, n);
        b20_free: free b20_buf;
        alloc b20_s: f32[64] { b20_sk: kernel kernels::Iota<<<1, 32>>>(b20_s, 32u32); }
        b20_e: empty;
        b20_buf -> b20_k0 -> b20_if -> b20_k1 -> b20_k2 -> b20_free -> b20_s -> b20_e;
        b19_e -> b20_buf;
        cond h21;
        b21_buf: alloc f32[n];
        b21_k0: kernel kernels::SetCondition<<<1, 1>>>(h21, 1u32);
        b21_if: if h21 { b21_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b21_k1: kernel kernels::Iota<<<1, 32>>>(b21_buf, n);
        b21_k2: kernel kernels::Add<<<1, 32>>>(b21_buf, b21_buf, b21_buf, n);
        b21_free: free b21_buf;
        alloc b21_s: f32[64] { b21_sk: kernel kernels::Iota<<<1, 32>>>(b21_s, 32u32); }
        b21_e: empty;
        b21_buf -> b21_k0 -> b21_if -> b21_k1 -> b21_k2 -> b21_free -> b21_s -> b21_e;
        b20_e -> b21_buf;
        cond h22;
        b22_buf: alloc f32[n];
        b22_k0: kernel kernels::SetCondition<<<1, 1>>>(h22, 1u32);
        b22_if: if h22 { b22_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b22_k1: kernel kernels::Iota<<<1, 32>>>(b22_buf, n);
        b22_k2: kernel kernels::Add<<<1, 32>>>(b22_buf, b22_buf, b22_buf, n);
        b22_free: free b22_buf;
        alloc b22_s: f32[64] { b22_sk: kernel kernels::Iota<<<1, 32>>>(b22_s, 32u32); }
        b22_e: empty;
        b22_buf -> b22_k0 -> b22_if -> b22_k1 -> b22_k2 -> b22_free -> b22_s -> b22_e;
        b21_e -> b22_buf;
        cond h23;
        b23_buf: alloc f32[n];
        b23_k0: kernel kernels::SetCondition<<<1, 1>>>(h23, 1u32);
        b23_if: if h23 { b23_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b23_k1: kernel kernels::Iota<<<1, 32>>>(b23_buf, n);
        b23_k2: kernel kernels::Add<<<1, 32>>>(b23_buf, b23_buf, b23_buf, n);
        b23_free: free b23_buf;
        alloc b23_s: f32[64] { b23_sk: kernel kernels::Iota<<<1, 32>>>(b23_s, 32u32); }
        b23_e: empty;
        b23_buf -> b23_k0 -> b23_if -> b23_k1 -> b23_k2 -> b23_free -> b23_s -> b23_e;
        b22_e -> b23_buf;
        cond h24;
        b24_buf: alloc f32[n];
        b24_k0: kernel kernels::SetCondition<<<1, 1>>>(h24, 1u32);
        b24_if: if h24 { b24_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b24_k1: kernel kernels::Iota<<<1, 32>>>(b24_buf, n);
        b24_k2: kernel kernels::Add<<<1, 32>>>(b24_buf, b24_buf, b24_buf, n);
        b24_free: free b24_buf;
        alloc b24_s: f32[64] { b24_sk: kernel kernels::Iota<<<1, 32>>>(b24_s, 32u32); }
        b24_e: empty;
        b24_buf -> b24_k0 -> b24_if -> b24_k1 -> b24_k2 -> b24_free -> b24_s -> b24_e;
        b23_e -> b24_buf;
        cond h25;
        b25_buf: alloc f32[n];
        b25_k0: kernel kernels::SetCondition<<<1, 1>>>(h25, 1u32);
        b25_if: if h25 { b25_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b25_k1: kernel kernels::Iota<<<1, 32>>>(b25_buf, n);
        b25_k2: kernel kernels::Add<<<1, 32>>>(b25_buf, b25_buf, b25_buf, n);
        b25_free: free b25_buf;
        alloc b25_s: f32[64] { b25_sk: kernel kernels::Iota<<<1, 32>>>(b25_s, 32u32); }
        b25_e: empty;
        b25_buf -> b25_k0 -> b25_if -> b25_k1 -> b25_k2 -> b25_free -> b25_s -> b25_e;
        b24_e -> b25_buf;
        cond h26;
        b26_buf: alloc f32[n];
        b26_k0: kernel kernels::SetCondition<<<1, 1>>>(h26, 1u32);
        b26_if: if h26 { b26_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b26_k1: kernel kernels::Iota<<<1, 32>>>(b26_buf, n);
        b26_k2: kernel kernels::Add<<<1, 32>>>(b26_buf, b26_buf, b26_buf, n);
        b26_free: free b26_buf;
        alloc b26_s: f32[64] { b26_sk: kernel kernels::Iota<<<1, 32>>>(b26_s, 32u32); }
        b26_e: empty;
        b26_buf -> b26_k0 -> b26_if -> b26_k1 -> b26_k2 -> b26_free -> b26_s -> b26_e;
        b25_e -> b26_buf;
        cond h27;
        b27_buf: alloc f32[n];
        b27_k0: kernel kernels::SetCondition<<<1, 1>>>(h27, 1u32);
        b27_if: if h27 { b27_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b27_k1: kernel kernels::Iota<<<1, 32>>>(b27_buf, n);
        b27_k2: kernel kernels::Add<<<1, 32>>>(b27_buf, b27_buf, b27_buf, n);
        b27_free: free b27_buf;
        alloc b27_s: f32[64] { b27_sk: kernel kernels::Iota<<<1, 32>>>(b27_s, 32u32); }
        b27_e: empty;
        b27_buf -> b27_k0 -> b27_if -> b27_k1 -> b27_k2 -> b27_free -> b27_s -> b27_e;
        b26_e -> b27_buf;
        cond h28;
        b28_buf: alloc f32[n];
        b28_k0: kernel kernels::SetCondition<<<1, 1>>>(h28, 1u32);
        b28_if: if h28 { b28_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b28_k1: kernel kernels::Iota<<<1, 32>>>(b28_buf, n);
        b28_k2: kernel kernels::Add<<<1, 32>>>(b28_buf, b28_buf, b28_buf, n);
        b28_free: free b28_buf;
        alloc b28_s: f32[64] { b28_sk: kernel kernels::Iota<<<1, 32>>>(b28_s, 32u32); }
        b28_e: empty;
        b28_buf -> b28_k0 -> b28_if -> b28_k1 -> b28_k2 -> b28_free -> b28_s -> b28_e;
        b27_e -> b28_buf;
        cond h29;
        b29_buf: alloc f32[n];
        b29_k0: kernel kernels::SetCondition<<<1, 1>>>(h29, 1u32);
        b29_if: if h29 { b29_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b29_k1: kernel kernels::Iota<<<1, 32>>>(b29_buf, n);
        b29_k2: kernel kernels::Add<<<1, 32>>>(b29_buf, b29_buf, b29_buf, n);
        b29_free: free b29_buf;
        alloc b29_s: f32[64] { b29_sk: kernel kernels::Iota<<<1, 32>>>(b29_s, 32u32); }
        b29_e: empty;
        b29_buf -> b29_k0 -> b29_if -> b29_k1 -> b29_k2 -> b29_free -> b29_s -> b29_e;
        b28_e -> b29_buf;
        cond h30;
        b30_buf: alloc f32[n];
        b30_k0: kernel kernels::SetCondition<<<1, 1>>>(h30, 1u32);
        b30_if: if h30 { b30_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b30_k1: kernel kernels::Iota<<<1, 32>>>(b30_buf, n);
        b30_k2: kernel kernels::Add<<<1, 32>>>(b30_buf, b30_buf, b30_buf, n);
        b30_free: free b30_buf;
        alloc b30_s: f32[64] { b30_sk: kernel kernels::Iota<<<1, 32>>>(b30_s, 32u32); }
        b30_e: empty;
        b30_buf -> b30_k0 -> b30_if -> b30_k1 -> b30_k2 -> b30_free -> b30_s -> b30_e;
        b29_e -> b30_buf;
        cond h31;
        b31_buf: alloc f32[n];
        b31_k0: kernel kernels::SetCondition<<<1, 1>>>(h31, 1u32);
        b31_if: if h31 { b31_t0: kernel kernels::AddOne<<<1, 32>>>(x, 32u32); }
        b31_k1: kernel kernels::Iota<<<1, 32>>>(b31_buf, n);
        b31_k2: kernel kernels::Add<<<1, 32>>>(b31_buf, b31_buf, b31_buf, n);
        b31_free: free b31_buf;
        alloc b31_s: f32[64] { b31_sk: kernel kernels::Iota<<<1, 32>>>(b31_s, 32u32); }
        b31_e: empty;
        b31_buf -> b31_k0 -> b31_if -> b31_k1 -> b31_k2 -> b31_free -> b31_s -> b31_e;
        b30_e -> b31_buf;
    }
}

#[allow(dead_code)]
fn use_it(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>, x: &mut CudaSlice<f32>) -> graph_runtime::Result<()> {
    let graph = Long::build(ctx, x, 32)?;
    let mut exec = graph.instantiate()?;
    exec.b31_k2().set_enabled(false)?;
    Ok(())
}

fn main() {}

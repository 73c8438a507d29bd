void memnode_gemm_nt(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc,
                     const float *bias);
void memnode_gemm_nn(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc);
void memnode_gelu(float *x, int n);

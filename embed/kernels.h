void memnode_gemm_nt(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc,
                     const float *bias);
void memnode_gemm_nn(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc);
void memnode_gelu(float *x, int n);

#include <stdint.h>
// memnode_avx2_fma reports whether the CPU has AVX2 and FMA (checked once).
int memnode_avx2_fma(void);
// out[i] = Σp q[p]·rows[i*dim+p] for i < n: the int8 scan of the vector index.
void memnode_dot_i8(const int8_t *q, const int8_t *rows, int dim, int n, int32_t *out);
// out[i] = Σp q[p]·rows[idx[i]*dim+p] for i < m: the exact re-rank of its candidates.
void memnode_dot_rows(const float *q, const float *rows, int dim, const int32_t *idx, int m, float *out);

// Matrix kernels of the BERT encoder (encoder.go): the few loops that hold almost all of its
// arithmetic. Plain C that gcc vectorises, plus an AVX2+FMA path chosen at run time.
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "kernels.h"

// C[i][j] = bias[j] + sum_k A[i][k] * B[j][k], the generic path.
static void gemm_nt_generic(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                            float *c, int ldc, const float *bias) {
	for (int i = 0; i < m; i++) {
		const float *ai = a + (size_t)i * lda;
		for (int j = 0; j < n; j++) {
			const float *bj = b + (size_t)j * ldb;
			float s = 0;
			for (int p = 0; p < k; p++) s += ai[p] * bj[p];
			c[(size_t)i * ldc + j] = s + (bias ? bias[j] : 0);
		}
	}
}

// out[i] = q · row idx[i]: the vector index's exact re-rank (index.go).
static void dot_rows_generic(const float *q, const float *rows, int dim, const int32_t *idx, int m, float *out) {
	for (int i = 0; i < m; i++) {
		const float *r = rows + (size_t)idx[i] * dim;
		float s = 0;
		for (int p = 0; p < dim; p++) s += q[p] * r[p];
		out[i] = s;
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx2,fma"))) static inline float hsum(__m256 v) {
	__m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
	lo = _mm_add_ps(lo, hi);
	lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
	lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
	return _mm_cvtss_f32(lo);
}

// dot of one row pair, k a multiple of 8 handled by AVX, the rest scalar.
__attribute__((target("avx2,fma"))) static inline float dot_avx(const float *x, const float *y, int k) {
	__m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
	int p = 0;
	for (; p + 16 <= k; p += 16) {
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p), _mm256_loadu_ps(y + p), s0);
		s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p + 8), _mm256_loadu_ps(y + p + 8), s1);
	}
	for (; p + 8 <= k; p += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p), _mm256_loadu_ps(y + p), s0);
	float s = hsum(_mm256_add_ps(s0, s1));
	for (; p < k; p++) s += x[p] * y[p];
	return s;
}

// The AVX2 path: 4 rows of A × 3 rows of B per tile (12 accumulators), B's rows outside so
// each weight row is read from memory once while A's rows stay in cache.
__attribute__((target("avx2,fma"))) static void gemm_nt_avx2(int m, int n, int k, const float *a, int lda,
                                                              const float *b, int ldb, float *c, int ldc,
                                                              const float *bias) {
	int k8 = k & ~7;
	int j = 0;
	for (; j + 3 <= n; j += 3) {
		const float *b0 = b + (size_t)j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb;
		float z0 = bias ? bias[j] : 0, z1 = bias ? bias[j + 1] : 0, z2 = bias ? bias[j + 2] : 0;
		int i = 0;
		for (; i + 4 <= m; i += 4) {
			const float *a0 = a + (size_t)i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
			__m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00;
			__m256 c20 = c00, c21 = c00, c22 = c00, c30 = c00, c31 = c00, c32 = c00;
			for (int p = 0; p < k8; p += 8) {
				__m256 v0 = _mm256_loadu_ps(b0 + p), v1 = _mm256_loadu_ps(b1 + p), v2 = _mm256_loadu_ps(b2 + p);
				__m256 x = _mm256_loadu_ps(a0 + p);
				c00 = _mm256_fmadd_ps(x, v0, c00); c01 = _mm256_fmadd_ps(x, v1, c01); c02 = _mm256_fmadd_ps(x, v2, c02);
				x = _mm256_loadu_ps(a1 + p);
				c10 = _mm256_fmadd_ps(x, v0, c10); c11 = _mm256_fmadd_ps(x, v1, c11); c12 = _mm256_fmadd_ps(x, v2, c12);
				x = _mm256_loadu_ps(a2 + p);
				c20 = _mm256_fmadd_ps(x, v0, c20); c21 = _mm256_fmadd_ps(x, v1, c21); c22 = _mm256_fmadd_ps(x, v2, c22);
				x = _mm256_loadu_ps(a3 + p);
				c30 = _mm256_fmadd_ps(x, v0, c30); c31 = _mm256_fmadd_ps(x, v1, c31); c32 = _mm256_fmadd_ps(x, v2, c32);
			}
			float r[4][3] = {{hsum(c00), hsum(c01), hsum(c02)}, {hsum(c10), hsum(c11), hsum(c12)},
			                 {hsum(c20), hsum(c21), hsum(c22)}, {hsum(c30), hsum(c31), hsum(c32)}};
			const float *as[4] = {a0, a1, a2, a3};
			for (int q = 0; q < 4; q++) {
				for (int p = k8; p < k; p++) {
					r[q][0] += as[q][p] * b0[p];
					r[q][1] += as[q][p] * b1[p];
					r[q][2] += as[q][p] * b2[p];
				}
				float *cr = c + (size_t)(i + q) * ldc + j;
				cr[0] = r[q][0] + z0;
				cr[1] = r[q][1] + z1;
				cr[2] = r[q][2] + z2;
			}
		}
		for (; i < m; i++) {
			const float *ai = a + (size_t)i * lda;
			float *cr = c + (size_t)i * ldc + j;
			cr[0] = dot_avx(ai, b0, k) + z0;
			cr[1] = dot_avx(ai, b1, k) + z1;
			cr[2] = dot_avx(ai, b2, k) + z2;
		}
	}
	for (; j < n; j++) {
		const float *bj = b + (size_t)j * ldb;
		for (int i = 0; i < m; i++) c[(size_t)i * ldc + j] = dot_avx(a + (size_t)i * lda, bj, k) + (bias ? bias[j] : 0);
	}
}

// The AVX2+FMA check is made once; every caller reads the answer the first call stored.
int memnode_avx2_fma(void) {
	static volatile int v = -1;
	if (v < 0) {
		__builtin_cpu_init();
		v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	}
	return v;
}

void memnode_gemm_nt(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc,
                     const float *bias) {
	if (memnode_avx2_fma()) {
		gemm_nt_avx2(m, n, k, a, lda, b, ldb, c, ldc, bias);
		return;
	}
	gemm_nt_generic(m, n, k, a, lda, b, ldb, c, ldc, bias);
}

__attribute__((target("avx2,fma"))) static void dot_rows_avx2(const float *q, const float *rows, int dim,
                                                               const int32_t *idx, int m, float *out) {
	for (int i = 0; i < m; i++) out[i] = dot_avx(q, rows + (size_t)idx[i] * dim, dim);
}

void memnode_dot_rows(const float *q, const float *rows, int dim, const int32_t *idx, int m, float *out) {
	if (memnode_avx2_fma()) {
		dot_rows_avx2(q, rows, dim, idx, m, out);
		return;
	}
	dot_rows_generic(q, rows, dim, idx, m, out);
}
#else
int memnode_avx2_fma(void) { return 0; }

void memnode_gemm_nt(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc,
                     const float *bias) {
	gemm_nt_generic(m, n, k, a, lda, b, ldb, c, ldc, bias);
}

void memnode_dot_rows(const float *q, const float *rows, int dim, const int32_t *idx, int m, float *out) {
	dot_rows_generic(q, rows, dim, idx, m, out);
}
#endif

// C[i][:n] = sum_p A[i][p] * B[p][:n]: the attention-weighted sum of value rows. The inner
// loop is an axpy gcc vectorises without reassociating anything.
void memnode_gemm_nn(int m, int n, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc) {
	for (int i = 0; i < m; i++) {
		float *ci = c + (size_t)i * ldc;
		for (int j = 0; j < n; j++) ci[j] = 0;
		const float *ai = a + (size_t)i * lda;
		for (int p = 0; p < k; p++) {
			const float w = ai[p];
			const float *bp = b + (size_t)p * ldb;
			for (int j = 0; j < n; j++) ci[j] += w * bp[j];
		}
	}
}

// spago's GELU (the tanh approximation), with tanh(u) = 1 - 2/(e^(2u)+1).
void memnode_gelu(float *x, int n) {
	const float c = 0.7978845608028654f; // sqrt(2/pi)
	for (int i = 0; i < n; i++) {
		float v = x[i];
		float u = c * (v + 0.044715f * v * v * v);
		float t;
		if (u > 15) t = 1;
		else if (u < -15) t = -1;
		else t = 1 - 2 / (expf(2 * u) + 1);
		x[i] = 0.5f * v * (1 + t);
	}
}

// Kernels of the vector index (index.go): the int8 scan that ranks every stored vector
// approximately, and the float32 dot products that re-rank its best candidates exactly.
// Plain C that gcc vectorises, plus an AVX2 path chosen at run time.
#include <stddef.h>
#include <stdint.h>
#include "kernels.h"

static void dot_i8_generic(const int8_t *q, const int8_t *rows, int dim, int n, int32_t *out) {
	for (int i = 0; i < n; i++) {
		const int8_t *r = rows + (size_t)i * dim;
		int32_t s = 0;
		for (int p = 0; p < dim; p++) s += (int32_t)q[p] * r[p];
		out[i] = s;
	}
}

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

// 32 codes per step: maddubs multiplies unsigned by signed bytes and adds pairs into int16,
// so the query's magnitudes go in as the unsigned side and its signs move onto the row
// (sign_epi8); codes are within ±127, so a pair sum (≤ 2·127·127) never saturates. madd
// with ones widens the pairs to int32.
__attribute__((target("avx2"))) static void dot_i8_avx2(const int8_t *q, const int8_t *rows, int dim, int n,
                                                         int32_t *out) {
	int d32 = dim & ~31;
	const __m256i ones = _mm256_set1_epi16(1);
	for (int i = 0; i < n; i++) {
		const int8_t *r = rows + (size_t)i * dim;
		__m256i acc = _mm256_setzero_si256();
		int p = 0;
		for (; p < d32; p += 32) {
			__m256i qv = _mm256_loadu_si256((const __m256i *)(q + p));
			__m256i rv = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(r + p)), qv);
			__m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(qv), rv);
			acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
		}
		__m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
		s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
		s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
		int32_t t = _mm_cvtsi128_si32(s);
		for (; p < dim; p++) t += (int32_t)q[p] * r[p];
		out[i] = t;
	}
}

__attribute__((target("avx2,fma"))) static void dot_rows_avx2(const float *q, const float *rows, int dim,
                                                               const int32_t *idx, int m, float *out) {
	int d16 = dim & ~15, d8 = dim & ~7;
	for (int i = 0; i < m; i++) {
		const float *r = rows + (size_t)idx[i] * dim;
		__m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
		int p = 0;
		for (; p < d16; p += 16) {
			s0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + p), _mm256_loadu_ps(r + p), s0);
			s1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + p + 8), _mm256_loadu_ps(r + p + 8), s1);
		}
		for (; p < d8; p += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + p), _mm256_loadu_ps(r + p), s0);
		s0 = _mm256_add_ps(s0, s1);
		__m128 lo = _mm_add_ps(_mm256_castps256_ps128(s0), _mm256_extractf128_ps(s0, 1));
		lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
		lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
		float s = _mm_cvtss_f32(lo);
		for (; p < dim; p++) s += q[p] * r[p];
		out[i] = s;
	}
}

// scan_avx2 is decided once per process; the check is cheap, but __builtin_cpu_init is not
// meant to race, so every caller reads the answer the first call stored.
static int scan_avx2(void) {
	static volatile int v = -1;
	if (v < 0) {
		__builtin_cpu_init();
		v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	}
	return v;
}

void memnode_dot_i8(const int8_t *q, const int8_t *rows, int dim, int n, int32_t *out) {
	if (scan_avx2()) {
		dot_i8_avx2(q, rows, dim, n, out);
		return;
	}
	dot_i8_generic(q, rows, dim, n, out);
}

void memnode_dot_rows(const float *q, const float *rows, int dim, const int32_t *idx, int m, float *out) {
	if (scan_avx2()) {
		dot_rows_avx2(q, rows, dim, idx, m, out);
		return;
	}
	dot_rows_generic(q, rows, dim, idx, m, out);
}
#else
void memnode_dot_i8(const int8_t *q, const int8_t *rows, int dim, int n, int32_t *out) {
	dot_i8_generic(q, rows, dim, n, out);
}

void memnode_dot_rows(const float *q, const float *rows, int dim, const int32_t *idx, int m, float *out) {
	dot_rows_generic(q, rows, dim, idx, m, out);
}
#endif

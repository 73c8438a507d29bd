// The int8 scan of the vector index (index.go), which ranks every stored vector
// approximately; the exact re-rank of its candidates is memnode_dot_rows in kernels.c.
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

void memnode_dot_i8(const int8_t *q, const int8_t *rows, int dim, int n, int32_t *out) {
	if (memnode_avx2_fma()) {
		dot_i8_avx2(q, rows, dim, n, out);
		return;
	}
	dot_i8_generic(q, rows, dim, n, out);
}
#else
void memnode_dot_i8(const int8_t *q, const int8_t *rows, int dim, int n, int32_t *out) {
	dot_i8_generic(q, rows, dim, n, out);
}
#endif

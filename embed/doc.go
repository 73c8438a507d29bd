// Package embed turns text into L2-normalised sentence vectors in-process and ranks them.
//
// The package has four independent parts:
//
//   - [Embedder], with a BERT implementation ([Cybertron]: cybertron loads the model,
//     memnode's inference-only forward pass in encoder.go encodes it — one matrix product
//     per layer and text through the kernels in kernels.c, a batch's texts in parallel —;
//     mean pooling, L2 normalisation) and a deterministic feature-hashing one ([Hashing])
//     for tests.
//   - [Pull], which downloads and converts a Hugging Face model into the models dir
//     atomically: either a complete, loadable model directory appears, or nothing does.
//   - Vector helpers: [Cosine], [EncodeVector]/[DecodeVector] for SQLite blobs, and an
//     in-memory kNN [Index] that returns the exact top k: an int8 scan of every vector
//     (scan.c), then an exact float32 re-rank of the candidates within rounding reach.
//   - [FuseRRF], reciprocal rank fusion of ranked ID lists (FTS5 bm25 + vector kNN).
//
// Without a model, callers should fall back to FTS alone: [OpenCybertron] returns an
// error wrapping [ErrNoModel] when the model directory is missing or incomplete.
package embed
